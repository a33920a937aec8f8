/**
 * A backtest applies a schedule's firings on an unchanged market as the daemon does (test/engine/
 * unchanged-market.test.ts): a strategy that declares idempotentTick is called once per new ticker, not once per
 * firing, and every firing still counts as a tick of its instance; one that does not declare it is called on
 * every firing. The replay passes a run of such firings between two ticks at once: the counts say it passed
 * each of them. The orders polls and refreshes due in that run are passed with it when they have nothing to do,
 * so the engine observes the market once per ticker.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runBacktest } from '../../src/backtest/runner.js';
import { CronSchedule } from '../../src/clocks/cron-schedule.js';
import { Engine } from '../../src/engine/engine.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { D, floorTo } from '../../src/strategy/api.js';
import { instance, strategy } from '../engine/harness.js';
import { SAMPLE } from './fixtures.js';

const FROM = Date.parse('2023-03-09T00:00:00Z');
const APRIL_BTC = 'data/samples/2023-04/BTCUSDT-2023-04-13_15.jsonl.gz';
const HOUR = 3_600_000;

let data: TickData;
afterEach(() => {
  vi.restoreAllMocks();
});
beforeAll(async () => {
  data = await loadTicks([SAMPLE], { from: FROM, to: FROM + 2 * HOUR });
});

/** onTick calls counted, with the times of the tickers they saw. */
function counted(idempotentTick: boolean) {
  const seen: number[] = [];
  const definition = strategy({
    idempotentTick,
    onTick(ctx) {
      seen.push(ctx.ticker!.time);
    },
  });
  return { definition, seen };
}

describe('a backtest on a schedule that fires between the ticks', () => {
  it('calls an idempotent onTick once per ticker, and counts every firing', async () => {
    const quiet = counted(true);
    const every = counted(false);
    const schedule = '* * * * * *'; // every second, over tickers some seconds apart
    const run = await runBacktest(
      [instance('quiet', quiet.definition, { schedule }), instance('every', every.definition, { schedule })],
      data,
      { balances: { USDT: '1000' } },
    );
    const ticks = (name: string) => run.instances.find((i) => i.name === name)!.counters.ticks;
    // One firing a second from the first ticker's time to the last's.
    const firings = ticks('every');
    expect(firings).toBe(every.seen.length);
    expect(Math.abs(firings - (run.lastTime - run.firstTime) / 1000)).toBeLessThanOrEqual(1);
    expect(ticks('quiet')).toBe(firings);
    // One call per distinct ticker: the times it saw, each once, are every ticker time the other one saw.
    expect(quiet.seen).toEqual([...new Set(every.seen)]);
    expect(quiet.seen.length).toBeLessThan(firings / 5);
  });

  it('observes once per ticker when the polls and refreshes between the ticks have nothing to do', async () => {
    const observed = vi.spyOn(Engine.prototype, 'observeCycle');
    const quiet = counted(true);
    // Every 2 s: a firing at the same second as the orders poll (every 5 s) and the refresh (every minute) is
    // passed with the others, not observed again.
    const run = await runBacktest([instance('quiet', quiet.definition, { schedule: '*/2 * * * * *' })], data, {
      balances: { USDT: '1000' },
    });
    const firings = run.instances[0]!.counters.ticks;
    expect(firings).toBeGreaterThan(5 * quiet.seen.length);
    expect(observed).toHaveBeenCalledTimes(quiet.seen.length);
    expect(firings).toBe(matches('*/2 * * * * *', run));
  });

  it('counts every firing of a schedule whose matches are not evenly spaced', async () => {
    const quiet = counted(true);
    const schedule = '3,4,17,50 * * * * *';
    const run = await runBacktest([instance('quiet', quiet.definition, { schedule })], data, {
      balances: { USDT: '1000' },
    });
    expect(run.instances[0]!.counters.ticks).toBe(matches(schedule, run));
  });
});

describe('a backtest on a strategy that declares quiet price bands', () => {
  /**
   * Once the price dips 0.05 % under the first it saw, rests a buy of 0.002 0.02 % under it, then a sell 0.05 % over
   * the entry, and so on; with `bands`, says which prices change nothing (ctx.quietBetween): any while an order
   * rests, above the dip while flat. onFill notes the price and ticker time it sees: the market the engine holds.
   */
  function dipper(bands: boolean) {
    let calls = 0;
    const seen: string[] = [];
    const definition = strategy({
      idempotentTick: true,
      onTick(ctx) {
        calls++;
        const price = ctx.price!;
        if (ctx.state.ref === undefined) ctx.state.ref = price.toNumber();
        const ref = ctx.state.ref as number;
        const held = floorTo(ctx.position.quantity, ctx.rules.stepSize);
        if (ctx.openOrders.length > 0) {
          if (bands) ctx.quietBetween(-Infinity, Infinity);
        } else if (!held.isZero() && held.gte(ctx.rules.minQty)) {
          const exit = ctx.position.averagePrice.mul('1.0005');
          ctx.limit('SELL', exit.toDecimalPlaces(2, D.ROUND_UP), held);
        } else if (price.toNumber() < ref * 0.9995) {
          ctx.limit('BUY', floorTo(price.mul('0.9998'), ctx.rules.tickSize), '0.002');
        } else if (bands) ctx.quietBetween(ref * 0.9995, Infinity);
      },
      onFill(ctx, fill) {
        seen.push(`${fill.side} at ${ctx.price?.toFixed()} (ticker of ${ctx.ticker?.time})`);
        if (fill.side === 'SELL') delete ctx.state.ref; // the next dip is measured from the price after the exit
      },
    });
    return { definition, seen, calls: () => calls };
  }

  /** The dipper with and without its bands over `ticks`: what each run did, its calls and market jobs observed. */
  async function both(ticks: TickData) {
    const observed = vi.spyOn(Engine.prototype, 'observeCycle');
    const run = async (bands: boolean) => {
      const s = dipper(bands);
      observed.mockClear();
      const result = await runBacktest([instance('dip', s.definition, { schedule: '*/2 * * * * *' })], ticks, {
        balances: { USDT: '1000' },
      });
      return { ...s, result, observed: observed.mock.calls.length };
    };
    return { plain: await run(false), banded: await run(true) };
  }

  it('moves the market through the ticks in them at once, and trades as the same strategy without them', async () => {
    const { plain, banded } = await both(data);
    expect(plain.seen.length).toBeGreaterThanOrEqual(4);
    expect(banded.result.trace).toEqual(plain.result.trace);
    expect(banded.seen).toEqual(plain.seen);
    expect(banded.result.equity).toEqual(plain.result.equity);
    expect(banded.result.finalEquity.toFixed()).toBe(plain.result.finalEquity.toFixed());
    expect(banded.result.instances[0]!.counters).toEqual(plain.result.instances[0]!.counters);
    // Called only when the price left its band, or something else changed: a few times per trade.
    expect(banded.calls()).toBeLessThan(plain.calls() / 10);
    expect(banded.observed).toBeLessThan(plain.observed / 10);
  });

  it("stops where another schedule's firing must see the market before its next tick", async () => {
    // A slow schedule whose strategy finds every price quiet, beside a fast one whose strategy declares no band:
    // the fast one sees the same tickers, in the same order, whatever the slow one declares.
    const run = async (bands: boolean) => {
      const fast = counted(true);
      const slow = strategy({
        idempotentTick: true,
        onTick: (ctx) => (bands ? ctx.quietBetween(-Infinity, Infinity) : undefined),
      });
      await runBacktest(
        [
          instance('slow', slow, { schedule: '15 */5 * * * *' }),
          instance('fast', fast.definition, { schedule: '* * * * * *' }),
        ],
        data,
        { balances: { USDT: '1000' } },
      );
      return fast.seen;
    };
    const plain = await run(false);
    expect(await run(true)).toEqual(plain);
    expect(plain.length).toBeGreaterThan(100);
  });

  it('does so on candles, whose extremes and close share the time of the next firing', async () => {
    // Imported one-minute candles: four ticks each, the last three at the candle's close.
    const from = Date.parse('2023-04-15T00:00:00Z');
    const candles = await loadTicks([APRIL_BTC], { from, to: from + 8 * HOUR });
    const { plain, banded } = await both(candles);
    expect(plain.seen.length).toBeGreaterThanOrEqual(4);
    expect(banded.seen).toEqual(plain.seen);
    expect(banded.result.trace).toEqual(plain.result.trace);
    expect(banded.result.equity).toEqual(plain.result.equity);
    expect(banded.calls()).toBeLessThan(plain.calls() / 5);
  });
});

/**
 * Every match of the schedule after the run's first ticker up to its last one's time, over the hour's turn: the
 * firings a replay counts when the stretches it passes at once skip exactly the firings they stand for.
 */
function matches(schedule: string, run: { firstTime: number; lastTime: number }): number {
  expect(run.lastTime - run.firstTime).toBeGreaterThan(HOUR);
  const cron = new CronSchedule(schedule);
  let n = 0;
  for (let at = cron.next(run.firstTime); at <= run.lastTime; at = cron.next(at)) n++;
  return n;
}
