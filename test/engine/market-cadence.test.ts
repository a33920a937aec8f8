/**
 * The market watch keeps its cadence while decisions wait (issue 41): on a clock that runs by itself (the
 * daemon's: decideApart), a market job ends once its tickers are in, and one that fires while the decisions of
 * the last are still placing orders (behind a full request budget: bench:live-pairs at 100 pairs saw no
 * market-watch request in a minute) brings its tickers to them: the instances not yet ticked decide on those.
 */
import { expect, it } from 'vitest';
import { loopCheck, STUCK_RUN_MS } from '../../src/api/probes.js';
import { withDecisions } from '../../src/app/daemon-scheduling.js';
import type { JobStats } from '../../src/ports/scheduler.js';
import type { OrderRequest } from '../../src/ports/venue.js';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { Harness, instance, strategy } from './harness.js';

const SCHEDULE = '*/2 * * * * *';

/**
 * Two instances on one schedule (btc, eth), each placing one BUY at `limitAt` times the price at its first tick
 * (below 1: it rests; above: it fills at once); the first order held.
 */
async function twoBuyersFirstOrderHeld(limitAt = '0.9') {
  const h = new Harness({ balances: { USDT: '100000', BTC: '2', ETH: '2' } });
  h.price(100);
  h.price(50, 'ETHUSDT');
  const decided: string[] = [];
  const stopped: string[] = [];
  const buyOnce = () => {
    let done = false;
    return strategy({
      onTick(ctx) {
        decided.push(`${ctx.symbol} at ${ctx.price?.toFixed()}`);
        if (!done) ctx.limit('BUY', ctx.price!.mul(limitAt), '0.01', { tag: 'rest' });
        done = true;
      },
      onStop(ctx) {
        stopped.push(ctx.symbol);
      },
    });
  };
  await h.start(
    [
      instance('btc', buyOnce(), { schedule: SCHEDULE }),
      instance('eth', buyOnce(), { symbol: 'ETHUSDT', schedule: SCHEDULE }),
    ],
    { decideApart: true },
  );
  // The first order waits (for the request budget, as it were) until released.
  let release!: () => void;
  let held!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const inCreate = new Promise<void>((r) => (held = r));
  const create = h.venue.createOrder.bind(h.venue);
  let first = true;
  h.venue.createOrder = async (request: OrderRequest): Promise<OrderRecord> => {
    if (first) {
      first = false;
      held();
      await gate;
    }
    return create(request);
  };
  return { h, decided, stopped, inCreate, release };
}

it('a market job fired while the last one still places its orders brings fresh tickers to its decisions', async () => {
  const { h, decided, inCreate, release } = await twoBuyersFirstOrderHeld();
  const watched = () => h.venue.marketWatchAsked;
  await h.engine!.marketCycle(SCHEDULE);
  await inCreate;
  expect(decided).toHaveLength(1);
  // The next firing, while the first instance's order is still held: the job ends with its tickers in.
  h.clock.advance(2_000);
  h.price(102);
  h.price(51, 'ETHUSDT');
  await h.engine!.marketCycle(SCHEDULE);
  expect(watched()).toBe(2);
  expect(decided).toHaveLength(1);
  release();
  // The second instance decides after the first's order went out, on the second job's ticker.
  await expect.poll(() => h.venue.creates).toBe(2);
  await h.engine!.stop();
  expect(decided).toEqual([expect.stringMatching(/ at (100|50)$/), expect.stringMatching(/ at (102|51)$/)]);
  expect(h.venue.creates).toBe(2);
});

/** twoBuyersFirstOrderHeld after one market job, stopped while the first order is held (then released). */
async function stoppedWhileFirstOrderHeld(limitAt?: string) {
  const held = await twoBuyersFirstOrderHeld(limitAt);
  await held.h.engine!.marketCycle(SCHEDULE);
  await held.inCreate;
  const stopping = held.h.engine!.stop();
  held.release();
  await stopping;
  return held;
}

it("a stop while the decisions wait runs onStop at the lock's next turn: the instances not yet ticked decide nothing", async () => {
  const { h, decided, stopped } = await stoppedWhileFirstOrderHeld();
  // The first order went out (its turn of the lock had begun); onStop came next for both, and eth, whose tick
  // had not come, neither decided nor sent an order after the stop (it did when the stop waited for the run).
  expect(stopped).toEqual(['BTCUSDT', 'ETHUSDT']);
  expect(decided).toEqual(['BTCUSDT at 100']);
  expect(h.venue.creates).toBe(1);
});

it("a stop records the fill of an order its last decision sent, as the job's own poll did", async () => {
  const { h, stopped } = await stoppedWhileFirstOrderHeld('1.1');
  expect(stopped).toEqual(['BTCUSDT', 'ETHUSDT']);
  // The held BUY was marketable: it filled on the venue, and the journal has its fill (before: the row stayed
  // open, the fill unknown until the next start's reconciliation).
  expect(h.venue.creates).toBe(1);
  expect(h.store.orders.all().map((o) => [o.symbol, o.status])).toEqual([['BTCUSDT', 'FILLED']]);
  expect(h.store.db.prepare('SELECT COUNT(*) AS n FROM fills').get()).toEqual({ n: 1 });
});

it("decisions that run apart count as their market job's run going on, so liveness sees one that is stuck", async () => {
  const { h, inCreate, release } = await twoBuyersFirstOrderHeld();
  await h.engine!.marketCycle(SCHEDULE);
  await inCreate;
  const began = h.clock.now();
  expect(h.engine!.decisionRuns()).toEqual([{ schedule: SCHEDULE, since: began }]);
  // Past the stuck-run limit the scheduler still fires the job every 2 s, and each firing ends once its tickers
  // are in: by the scheduler's figures alone the loop looks alive.
  const now = began + STUCK_RUN_MS + 1;
  const job: JobStats = {
    name: `market ${SCHEDULE}`,
    cron: SCHEDULE,
    runs: 151,
    failures: 0,
    overlapsSkipped: 0,
    missed: 0,
    running: false,
    scheduledAt: began - 2_000,
    intervalMs: 2_000,
    lastStartedAt: now - 1_000,
    lastLagMs: 0,
    lastSucceededAt: now - 1_000,
  };
  expect(loopCheck(job, now).ok).toBe(true);
  const [seen] = withDecisions([job], h.engine!.decisionRuns());
  expect(seen).toMatchObject({ running: true, lastStartedAt: began });
  const check = loopCheck(seen!, now);
  expect(check.ok).toBe(false);
  expect(check.detail).toContain('a run going on for 300 s');
  release();
  await h.engine!.stop();
  expect(h.engine!.decisionRuns()).toEqual([]);
});
