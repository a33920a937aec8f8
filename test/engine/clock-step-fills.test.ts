/**
 * Reads that find an order's fills do not depend on this machine's clock agreeing with the exchange's (issue 36).
 * The engine runs on a clock stepped 120 s ahead of the venue's while it trades (an NTP correction, an
 * operator's `date`): its orders' fills are still recorded at the first poll after they happen, and an order
 * whose create answer was lost after the step is still found, never declared not placed and sent again.
 * History was read from `sentAt - skew` on the stepped clock: 120 s after the order was created there.
 */
import { expect, it } from 'vitest';
import type { Clock } from '../../src/ports/clock.js';
import { Harness, instance, strategy, T0, venueError } from './harness.js';

let h: Harness;
/** The engine's clock: the venue's, `aheadMs` ahead. */
function steppedClock(): Clock & { aheadMs: number } {
  const venue = h.clock;
  return {
    aheadMs: 0,
    now() {
      return venue.now() + this.aheadMs;
    },
    setTimer: (fire, ms) => venue.setTimer(fire, ms),
    sleep: (ms, signal) => venue.sleep(ms, signal),
    cron: (expression, fire) => venue.cron(expression, fire),
    pace: undefined,
    awaitsFirings: true,
  };
}

/** One resting BUY 0.01 at `price` whenever none is working: each placed on the tick after the previous filled. */
function oneResting(price: string) {
  return strategy({
    onTick(ctx) {
      if (!ctx.openOrders.some((o) => o.side === 'BUY')) ctx.limit('BUY', price, '0.01', { tag: 'rest' });
    },
  });
}

it('a clock stepped 120 s forward: each fill is recorded at the first poll after the exchange made it', async () => {
  h = new Harness();
  h.price(100);
  const clock = steppedClock();
  await h.start([instance('a', oneResting('99'))], { clock });
  await h.tick(100); // the first BUY rests
  clock.aheadMs = 120_000;
  await h.tick(98.5); // it fills; the next one is placed on the stepped clock
  await h.tick(100);
  const lates: number[] = [];
  for (let i = 0; i < 6; i++) {
    const before = h.store.fills.forInstance('a').length;
    await h.tick(i % 2 === 0 ? 98.5 : 100); // a BUY placed after the step fills on the dips
    const made = h.sim.fills('k').length;
    const recorded = h.store.fills.forInstance('a').length;
    lates.push(made - recorded);
    if (i % 2 === 0) expect(recorded, `poll ${i}: the dip's fill`).toBe(before + 1);
  }
  expect(lates.every((n) => n === 0)).toBe(true);
  expect(h.events('order-missing')).toEqual([]);
});

it('an order whose create answer was lost after a step is found, not placed again', async () => {
  h = new Harness();
  h.price(100);
  const clock = steppedClock();
  await h.start([instance('a', oneResting('99'))], { clock, reconcileWindowMs: 10_000 });
  await h.tick(100);
  clock.aheadMs = 120_000;
  await h.tick(98.5); // the first fills; the second is placed on the stepped clock (its answer intact)
  await h.tick(98.5); // and fills
  h.venue.createFault = { when: 'after-place', error: venueError('outcome-unknown', 'E_OUTCOME_UNKNOWN') };
  await h.tick(100); // the third is placed; its answer lost
  for (let i = 0; i < 8; i++) await h.tick(100, 10_000); // well past the window, with history read in full

  const rows = h.store.orders.all();
  expect(rows.filter((r) => r.status === 'NOT_PLACED')).toEqual([]);
  // One order live at the exchange, journaled once: nothing sent twice.
  expect((await h.venue.inner.openOrders('BTCUSDT')).length).toBe(1);
  expect(rows.filter((r) => r.status === 'OPEN')).toHaveLength(1);
  expect(h.clock.now() - T0).toBeGreaterThan(80_000);
});
