/**
 * Issue 28: an authentication halt the venue's adapter put down to the clock (a timestamp outside the
 * exchange's window) clears itself once a signed read succeeds; one for the keys waits for the operator.
 */
import { expect, it } from 'vitest';
import { VenueError } from '../../src/ports/venue-errors.js';
import { buyEveryTick, Harness, instance } from './harness.js';

let h: Harness;
for (const [cause, clockSkewMs, clears] of [
  ['the clock', 120_000, true],
  ['the keys', undefined, false],
] as const) {
  it(`an authentication halt caused by ${cause} ${clears ? 'clears itself at the next poll' : 'stays'}`, async () => {
    h = new Harness();
    h.price(100);
    const engine = await h.start([instance('a', buyEveryTick)]);
    h.venue.createFault = {
      when: 'before-place',
      error: new VenueError('E_AUTH', 'authentication', 'timestamp outside the window', { clockSkewMs }),
    };
    await h.marketTick(100); // the create is refused (401): trading halts
    expect(h.store.orders.get('a-1')?.status).toBe('REJECTED');
    expect(engine.brakes().halted).toMatch(/authentication failed/);

    await h.tick(100); // this poll's signed read succeeds
    expect(engine.brakes().halted === undefined).toBe(clears);
    expect(h.events('auth-cleared')).toHaveLength(clears ? 1 : 0);
    await h.tick(100);
    expect(h.venue.creates).toBe(clears ? 1 : 0);
  });
}
