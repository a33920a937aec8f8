/**
 * The strategy API's indicators, fed as the engine feeds them (IndicatorSet over closed candles), against the
 * reference values trading-signals itself is tested with (Tulip Indicators' published test data: the same
 * 15 closes, highs and lows; VWAP's from indicatorts). Figures are compared at the precision the references
 * are published with.
 */
import { describe, expect, it } from 'vitest';
import type { Candle, Timeframe } from '../../src/market/candles.js';
import {
  atr,
  bollinger,
  ema,
  IndicatorSet,
  macd,
  rsi,
  sma,
  stochastic,
  vwap,
  type ClosedCandles,
  type IndicatorSpec,
  type IndicatorSpecs,
  type IndicatorView,
} from '../../src/strategy/indicators.js';

const CLOSES = [81.59, 81.06, 82.87, 83.0, 83.61, 83.15, 82.84, 83.99, 84.55, 84.36, 85.53, 86.54, 86.89, 87.77, 87.29];
const HIGHS = [82.15, 81.89, 83.03, 83.3, 83.85, 83.9, 83.33, 84.3, 84.84, 85.0, 85.9, 86.58, 86.98, 88.0, 87.87];
const LOWS = [81.29, 80.64, 81.31, 82.65, 83.07, 83.11, 82.49, 82.3, 84.15, 84.11, 84.03, 85.39, 85.76, 87.17, 87.01];
const MINUTE = 60_000;

const TULIP: Candle[] = CLOSES.map((close, i) => ({
  time: i * MINUTE,
  open: close,
  high: HIGHS[i] as number,
  low: LOWS[i] as number,
  close,
  volume: 1,
}));

/** Closed candles as the engine's CandleBuilder hands them out, growing one at a time. */
class GrowingCandles implements ClosedCandles {
  shown = 0;
  get closedCount(): number {
    return this.shown;
  }
  constructor(private readonly all: readonly Candle[]) {}
  lastClosedTime(): number {
    return this.shown === 0 ? -Infinity : (this.all[this.shown - 1] as Candle).time;
  }
  candlesSince(_tf: Timeframe, time: number): Candle[] {
    return this.all.slice(0, this.shown).filter((c) => c.time > time);
  }
}

/** The value of `key` after each candle, through `format` (undefined while not ready). */
function series<T>(specs: IndicatorSpecs, key: string, candles: readonly Candle[], format: (v: T) => string) {
  const set = new IndicatorSet(specs);
  const source = new GrowingCandles(candles);
  const out: (string | undefined)[] = [];
  for (let i = 0; i < candles.length; i++) {
    source.shown = i + 1;
    set.feed(source);
    const view = set.views[key] as IndicatorView<T>;
    out.push(view.value === undefined ? undefined : format(view.value));
  }
  return out;
}

/**
 * A spec ready from the library's first value rather than once converged: the references are published from
 * there (15 inputs, fewer than any smoothing needs to converge).
 */
const fromSeed = <T>(spec: IndicatorSpec<T>): IndicatorSpec<T> => ({ ...spec, warmUp: spec.seed });

const fixed = (digits: number) => (v: number) => v.toFixed(digits);
const none = (n: number): undefined[] => new Array<undefined>(n).fill(undefined);

describe('indicators against the reference values', () => {
  it('SMA(5)', () => {
    expect(series({ x: fromSeed(sma('1m', 5)) }, 'x', TULIP, fixed(3))).toEqual([
      ...none(4),
      ...['82.426', '82.738', '83.094', '83.318', '83.628', '83.778', '84.254', '84.994', '85.574', '86.218', '86.804'],
    ]);
  });

  it('EMA(5)', () => {
    expect(series({ x: fromSeed(ema('1m', 5)) }, 'x', TULIP, fixed(2))).toEqual([
      ...none(4),
      ...['82.71', '82.86', '82.85', '83.23', '83.67', '83.90', '84.44', '85.14', '85.73', '86.41', '86.70'],
    ]);
  });

  it('RSI(5)', () => {
    expect(series({ x: fromSeed(rsi('1m', 5)) }, 'x', TULIP, fixed(3))).toEqual([
      ...none(5),
      ...['72.034', '64.927', '75.936', '79.796', '74.713', '83.033', '87.478', '88.755', '91.483', '78.498'],
    ]);
  });

  it('MACD(2, 5, 9)', () => {
    const got = series<{ macd: number; signal: number; histogram: number }>(
      { x: fromSeed(macd('1m', { fast: 2, slow: 5, signal: 9 })) },
      'x',
      TULIP,
      (v) => [v.macd, v.signal, v.histogram].map((n) => n.toFixed(2)).join(' '),
    );
    const macds = ['0.62', '0.35', '0.11', '0.42', '0.58', '0.42', '0.68', '0.93', '0.89', '0.98', '0.62'];
    const signals = ['0.62', '0.56', '0.47', '0.46', '0.49', '0.47', '0.51', '0.60', '0.66', '0.72', '0.70'];
    const histograms = ['0.00', '-0.21', '-0.36', '-0.05', '0.09', '-0.05', '0.17', '0.33', '0.24', '0.26', '-0.08'];
    expect(got).toEqual([...none(4), ...macds.map((m, i) => `${m} ${signals[i]} ${histograms[i]}`)]);
  });

  it('Bollinger bands(5, 2)', () => {
    const got = series<{ lower: number; middle: number; upper: number }>(
      { x: fromSeed(bollinger('1m', 5, 2)) },
      'x',
      TULIP,
      (v) => [v.lower, v.middle, v.upper].map((n) => n.toFixed(2)).join(' '),
    );
    const lows = ['80.53', '80.99', '82.53', '82.47', '82.42', '82.44', '82.51', '83.14', '83.54', '83.87', '85.29'];
    const mids = ['82.43', '82.74', '83.09', '83.32', '83.63', '83.78', '84.25', '84.99', '85.57', '86.22', '86.80'];
    const ups = ['84.32', '84.49', '83.65', '84.16', '84.84', '85.12', '86.00', '86.85', '87.61', '88.57', '88.32'];
    expect(got).toEqual([...none(4), ...lows.map((l, i) => `${l} ${mids[i]} ${ups[i]}`)]);
  });

  it('ATR(5)', () => {
    expect(series({ x: fromSeed(atr('1m', 5)) }, 'x', TULIP, fixed(2))).toEqual([
      ...none(4),
      ...['1.12', '1.05', '1.01', '1.21', '1.14', '1.09', '1.24', '1.23', '1.23', '1.21', '1.14'],
    ]);
  });

  it('Stochastic(5, 3, 3)', () => {
    const got = series<{ stochK: number; stochD: number }>(
      { x: fromSeed(stochastic('1m', { k: 5, d: 3, slowing: 3 })) },
      'x',
      TULIP,
      (v) => `${v.stochK.toFixed(2)} ${v.stochD.toFixed(2)}`,
    );
    const ks = ['77.39', '83.13', '84.87', '88.36', '95.25', '96.74', '91.09'];
    const ds = ['75.70', '78.01', '81.79', '85.45', '89.49', '93.45', '94.36'];
    expect(got).toEqual([...none(8), ...ks.map((k, i) => `${k} ${ds[i]}`)]);
  });

  it('VWAP (typical price), a candle without volume keeps the value', () => {
    const rows = [
      [9, 100],
      [11, 110],
      [7, 80],
      [10, 120],
      [8, 90],
    ] as const;
    const candles: Candle[] = rows.map(([p, volume], i) => ({
      time: i * MINUTE,
      open: p,
      high: p,
      low: p,
      close: p,
      volume,
    }));
    candles.push({ time: 5 * MINUTE, open: 50, high: 50, low: 50, close: 50, volume: 0 });
    expect(series({ x: fromSeed(vwap('1m')) }, 'x', candles, fixed(2))).toEqual([
      '9.00',
      '10.05',
      '9.21',
      '9.44',
      '9.18',
      '9.18',
    ]);
  });
});

describe('indicators converge before they are ready', () => {
  // A random walk of 400 closes (seeded): a feed from the first and one from the 100th must agree once the later
  // one is ready, each seeded differently.
  const walk: Candle[] = [];
  let seed = 7;
  for (let i = 0, p = 100; i < 400; i++) {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    p += (seed / 2 ** 31 - 0.5) * 2;
    walk.push({ time: i * MINUTE, open: p, high: p + 0.5, low: p - 0.5, close: p, volume: 1 });
  }
  for (const spec of [ema('1m', 20), rsi('1m', 14), atr('1m', 14), macd('1m')] as IndicatorSpec<unknown>[]) {
    it(`${spec.kind}: ready after ${spec.warmUp} candles, then within 1e-3 of a feed from 100 candles earlier`, () => {
      const early = series({ x: fromSeed(spec) }, 'x', walk, (v) => JSON.stringify(v));
      const late = series({ x: spec }, 'x', walk.slice(100), (v) => JSON.stringify(v));
      expect(late.slice(0, spec.warmUp - 1).every((v) => v === undefined)).toBe(true);
      const near = (a: unknown, b: unknown): boolean =>
        typeof a === 'number'
          ? Math.abs(a - (b as number)) <= 1e-3 * Math.max(1, Math.abs(a))
          : Object.entries(a as object).every(([k, v]) => near(v, (b as Record<string, unknown>)[k]));
      const first = spec.warmUp - 1;
      expect(near(JSON.parse(late[first]!), JSON.parse(early[100 + first]!))).toBe(true);
      // The library's first value (its seed's count) was not there yet.
      const seeded = series({ x: fromSeed(spec) }, 'x', walk.slice(100), (v) => JSON.stringify(v));
      expect(near(JSON.parse(seeded[spec.seed]!), JSON.parse(early[100 + spec.seed]!))).toBe(false);
    });
  }

  it('VWAP starts again at each UTC day, so it is ready after a day of its candles', () => {
    const day = 24 * 60;
    const candles: Candle[] = [9, 11, 7].map((p, i) => ({
      time: (day - 1 + i) * MINUTE,
      open: p,
      high: p,
      low: p,
      close: p,
      volume: 100,
    }));
    const spec = vwap('1m');
    expect(spec.warmUp).toBe(day);
    // The 23:59 candle, then 00:00 and 00:01 of the next day: 11, then (11 + 7) / 2.
    expect(series({ x: fromSeed(spec) }, 'x', candles, fixed(2))).toEqual(['9.00', '11.00', '9.00']);
  });
});

describe('indicator feeding', () => {
  it('feeds each closed candle once, keeps the previous value, and catches up on several candles at once', () => {
    const set = new IndicatorSet({ fast: sma('1m', 2), slow: sma('1m', 3) });
    const source = new GrowingCandles(TULIP);
    source.shown = 3;
    set.feed(source);
    set.feed(source);
    const fast = set.views.fast as IndicatorView<number>;
    expect(fast.inputs).toBe(3);
    expect(fast.value).toBeCloseTo((81.06 + 82.87) / 2, 10);
    expect(fast.previous).toBeCloseTo((81.59 + 81.06) / 2, 10);
    expect((set.views.slow as IndicatorView<number>).previous).toBeUndefined();
    source.shown = 6;
    set.feed(source);
    expect(fast.inputs).toBe(6);
    expect(fast.value).toBeCloseTo((83.61 + 83.15) / 2, 10);
  });

  it('refuses periods that make no sense, naming them', () => {
    expect(() => ema('5m', 0)).toThrow('ema period: expected a positive integer, found 0');
    expect(() => macd('5m', { fast: 26, slow: 12 })).toThrow('macd: expected fast < slow');
  });
});
