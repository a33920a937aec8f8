/**
 * Warnings per incident (issue 28): while a venue fault flaps (fails on one poll, works on the next), the
 * engine writes one line when the failure starts, a count a minute while it goes on, and one line once it has
 * ended (quiet for INCIDENT_QUIET_MS), for each kind of failure: never a line per poll or per intent.
 */
import { describe, expect, it } from 'vitest';
import { INCIDENT_QUIET_MS } from '../../src/ops/incident.js';
import { captureLogger } from '../support/capture-logger.js';
import { firstTick, Harness, instance, strategy, venueError } from './harness.js';

let h: Harness;
/** Lines at info level and above (what an operator reads), by message. */
function told(log: ReturnType<typeof captureLogger>, re: RegExp): string[] {
  return log.lines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level >= 30 && re.test(l.msg))
    .map((l) => l.msg);
}

describe('warnings per incident while a fault flaps', () => {
  it('order history failing on every other poll for two minutes: one line, a count a minute, one when it ends', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    await h.start(
      [
        instance(
          'a',
          firstTick((ctx) => ctx.limit('BUY', '90', '0.01')),
        ),
      ],
      { logger: log.logger },
    );
    await h.tick(100);
    const row = h.store.orders.get('a-1')!;
    // Gone from the venue and from its history: every poll looks for it in history again.
    await h.venue.inner.cancelOrder('BTCUSDT', row.exchangeId!);
    h.venue.historyForgets.add(row.exchangeId!);
    await h.tick(100, 1_000);
    for (let i = 0; i < 120; i++) {
      h.venue.historyFails = i % 2 === 0;
      await h.tick(100, 1_000);
    }
    h.venue.historyFails = false;
    for (let i = 0; i < INCIDENT_QUIET_MS / 1_000 + 2; i++) await h.tick(100, 1_000);

    // Two reads fail on each failing poll: the broad one, and the narrow one around the order's own time.
    expect(told(log, /^order history/)).toEqual([
      expect.stringMatching(/^order history BTCUSDT failing: E_TIMEOUT injected by the test venue \(orders gone/),
      expect.stringMatching(/^order history BTCUSDT still failing: 61 failures over 60 s/),
      expect.stringMatching(/^order history BTCUSDT recovered after 120 failure\(s\) over \d+ s$/),
    ]);
    // The order itself is reported missing once, not once per poll.
    expect(told(log, /is in neither open orders nor order history/)).toHaveLength(1);
  });

  it('reconciliation before sending failing on every other intent: one line, then one when it ends', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    // An order whose create never reached the venue, its outcome unknown: the instance reconciles before each send.
    await h.start([instance('a', strategy({ onTick: (ctx) => void ctx.limit('BUY', '90', '0.01') }))], {
      logger: log.logger,
      reconcileWindowMs: 10 * 60_000,
    });
    h.venue.createFault = { when: 'before-place', error: venueError('outcome-unknown', 'E_OUTCOME_UNKNOWN') };
    await h.marketTick(100);
    expect(h.store.orders.get('a-1')?.status).toBe('UNKNOWN');
    const outage = venueError('temporary', 'E_HTTP');
    for (let i = 0; i < 40; i++) {
      h.venue.outage = i % 2 === 0 ? outage : undefined;
      await h.marketTick(100, 1_000);
    }
    h.venue.outage = undefined;
    for (let i = 0; i < INCIDENT_QUIET_MS / 1_000 + 2; i++) await h.marketTick(100, 1_000);

    expect(told(log, /reconciliation before sending/)).toEqual([
      'reconciliation before sending failing: E_HTTP injected by the test venue',
      expect.stringMatching(/^reconciliation before sending recovered after 20 failure\(s\) over \d+ s$/),
    ]);
  });
});
