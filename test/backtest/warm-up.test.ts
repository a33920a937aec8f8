/**
 * A backtest with a start: the ticks before it only build candles (the warm-up), so at the first traded tick
 * the strategy has its whole lookback and converged indicators, equal to candles built from the data on their
 * own, and its indicators read what a run from an earlier start reads.
 */
import { EMA } from 'trading-signals';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runJob, warmUpMs } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { TEST_STRATEGIES } from '../e2e/daemon-process.js';
import { tempDir } from '../support/temp-dir.js';
import { runBacktest } from '../../src/backtest/runner.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import type { Candle } from '../../src/market/candles.js';
import { defineStrategy, ema, type IndicatorSpec, rsi, type StrategyContext, z } from '../../src/strategy/api.js';
import { instance } from '../engine/harness.js';
import { SAMPLE } from './fixtures.js';
import { valueAt } from '../../src/backtest/number-column.js';

const HOUR = 3_600_000;
const START = Date.parse('2023-03-09T00:00:00Z');

interface Seen {
  time: number;
  hours: readonly Candle[];
  ema: number | undefined;
}

function probe(seen: Seen[]) {
  const record = (ctx: StrategyContext) => {
    seen.push({
      time: ctx.now(),
      hours: ctx.candles('1h', 12),
      ema: ctx.indicators.trend!.value as number | undefined,
    });
  };
  return defineStrategy({
    name: 'probe',
    params: z.object({}),
    candles: { '1h': 12 },
    indicators: () => ({ trend: ema('1h', 6) }),
    onStart: record,
    onTick: record,
  });
}

/** Hourly closes and extremes straight from the recording's ticks, for the hours before `end`. */
function hoursFrom(data: TickData, end: number): Candle[] {
  const { time, price } = data.columns;
  const out: { time: number; open: number; high: number; low: number; close: number }[] = [];
  for (let i = 0; i < data.length; i++) {
    const t = valueAt(time, i);
    if (t >= end) break;
    const p = valueAt(price, i);
    const bucket = t - (t % HOUR);
    const last = out.at(-1);
    if (last?.time !== bucket) out.push({ time: bucket, open: p, high: p, low: p, close: p });
    else Object.assign(last, { high: Math.max(last.high, p), low: Math.min(last.low, p), close: p });
  }
  return out.map((c) => ({ ...c, volume: expect.any(Number) as number }));
}

/** EMA(6)'s converged warm-up in hours (more than the 12 hours the probe declares). */
const EMA_HOURS = ema('1h', 6).warmUp;

describe('backtest warm-up', () => {
  let data: TickData;
  beforeAll(async () => {
    data = await loadTicks([SAMPLE], { from: START - (EMA_HOURS + 25) * HOUR, to: START + 2 * HOUR });
  });

  it('asks for the longest lookback (the EMA converged) plus a day of data before the start', () => {
    const spec = instance('p', probe([]));
    expect(EMA_HOURS).toBeGreaterThan(12);
    expect(warmUpMs([spec])).toBe((EMA_HOURS + 1) * HOUR + 24 * HOUR);
  });

  it('builds the candles from the data before the start and trades from the start on', async () => {
    const seen: Seen[] = [];
    const run = await runBacktest([instance('p', probe(seen))], data, { balances: { USDT: '1000' }, start: START });
    expect(run.firstTime).toBe(START);
    const [atStart, firstTick] = seen;
    // onStart: the hour 23:00 is still forming (its last tick is the warm-up's last).
    expect(atStart!.hours.map((c) => c.time).at(-1)).toBe(START - 2 * HOUR);
    // The first onTick (the schedule's first match after the 00:00 tick, five seconds later) sees 23:00 closed
    // by that tick: twelve whole hours, as the data says.
    expect(firstTick!.time).toBe(START + 5_000);
    const want = hoursFrom(data, START).slice(-12);
    expect(firstTick!.hours).toEqual(want);
    // The EMA was fed every hour kept at start (its warm-up) and the one that closed since.
    const library = new EMA(6);
    for (const c of hoursFrom(data, START).slice(-(EMA_HOURS + 1))) library.add(c.close);
    expect(firstTick!.ema).toBe(library.getResultOrThrow());
  });

  it('without a start, nothing is warmed up: the first tick has no candles yet', async () => {
    const seen: Seen[] = [];
    await runBacktest([instance('p', probe(seen))], data, { balances: { USDT: '1000' } });
    expect(seen[1]!.hours).toEqual([]);
    expect(seen[1]!.ema).toBeUndefined();
  });
});

/** Records RSI(14) of five-minute candles at every onTick, by time. */
function rsiProbe(seen: Map<number, number | undefined>, spec: IndicatorSpec<number>) {
  const record = (ctx: StrategyContext) =>
    void seen.set(ctx.now(), ctx.indicators.strength!.value as number | undefined);
  return defineStrategy({
    name: 'rsi-probe',
    params: z.object({}),
    indicators: () => ({ strength: spec }),
    onTick: record,
  });
}

describe('a result does not depend on where the run starts (issue 38)', () => {
  // Run A trades from the data's first tick, 36 hours before START: its RSI has long converged there. Run B
  // starts at START on the same data, the hours before only warming up.
  let data: TickData;
  beforeAll(async () => {
    data = await loadTicks([SAMPLE], { from: START - 36 * HOUR, to: START + HOUR });
  });

  async function firstDecision(spec: IndicatorSpec<number>) {
    const [fromDataStart, fromStart] = [new Map<number, number | undefined>(), new Map<number, number | undefined>()];
    await runBacktest([instance('a', rsiProbe(fromDataStart, rsi('5m', 14)))], data, { balances: { USDT: '1000' } });
    await runBacktest([instance('b', rsiProbe(fromStart, spec))], data, { balances: { USDT: '1000' }, start: START });
    const [at, b] = [...fromStart][0]!;
    return { at, a: fromDataStart.get(at)!, b: b! };
  }

  it('RSI(14) at the first decision reads what a run from the start of the data reads, once converged', async () => {
    const { at, a, b } = await firstDecision(rsi('5m', 14));
    expect(at).toBe(START + 5_000);
    expect(Math.abs(a - b)).toBeLessThan(1e-3 * a);
  });

  it("with only the library's minimum warm-up (15 candles, what a run was given before) it reads another value", async () => {
    const library = rsi('5m', 14);
    const { a, b } = await firstDecision({ ...library, warmUp: library.seed });
    expect(Math.abs(a - b)).toBeGreaterThan(1);
  });
});

describe('a holdout part or a walk-forward window starts warmed up (issue 38)', () => {
  it("warms a part on the data before it, as --from does: its EMA is ready at the part's first tick", async () => {
    // when-ready buys once its EMA(150) of five-minute candles has converged: 690 candles, about 58 hours.
    const dir = tempDir('warm-up-window');
    const config = join(dir, 'when-ready.json');
    const file = { name: 'when-ready', strategy: 'when-ready', symbol: 'BTCUSDT', params: { period: 150 } };
    writeFileSync(config, JSON.stringify(file));
    const { sources } = await readConfigs([config], TEST_STRATEGIES);
    const all = await loadTicks([SAMPLE], { to: START + HOUR });
    // A part of the last hour (a held-out part, a window's test part): the days before it warm it up.
    const part = { from: START, to: START + HOUR };
    const { run } = await runJob(sources, all, DEFAULT_JOB_SETTINGS, {}, {}, part);
    expect(run.firstTime).toBe(START);
    expect(run.fills.map((f) => f.time - START)).toEqual([expect.any(Number)]);
    expect(run.fills[0]!.time - START).toBeLessThan(60_000);
  });
});
