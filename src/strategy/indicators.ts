/**
 * Technical indicators for strategies, computed by trading-signals (TypeScript, no dependencies, incremental:
 * one update per input) over the engine's closed candles. A strategy declares them in its definition
 * (`indicators: (params) => ({ fast: ema('5m', 12), … })`); the engine creates one set per instance, feeds
 * each indicator every closed candle of its timeframe once (the candles kept at start first: the warm-up),
 * and the hooks read them as `ctx.indicators.fast.value`. An indicator is `ready` once it has converged: once
 * what it was seeded with weighs less than CONVERGED in its value (`convergedInputs`), so its value no longer
 * depends on where the data it was fed began; before that `value` is undefined. The engine keeps that many
 * candles, and a backtest, a holdout part, a walk-forward window and paper load that much data before they
 * start (candle-needs.ts warmUpMs): a run from any start reads the same values.
 */
import {
  ATR,
  BollingerBands,
  EMA,
  MACD,
  RSI,
  SMA,
  StochasticOscillator,
  VWAP,
  type BandsResult,
  type MACDResult,
  type StochasticResult,
} from 'trading-signals';
import { type Candle, type Timeframe, TIMEFRAME_MS } from '../market/candles.js';

export type { BandsResult, MACDResult, StochasticResult };

/** Which figure of a candle a single-input indicator reads. */
export type PriceSource = 'open' | 'high' | 'low' | 'close' | 'typical';

interface LibraryIndicator<T, I> {
  update(input: I, replace: boolean): T | null;
  getRequiredInputs(): number;
  readonly isStable: boolean;
}

/** An indicator the strategy declares: its timeframe and how to make a fresh one. */
export interface IndicatorSpec<T> {
  readonly kind: string;
  readonly timeframe: Timeframe;
  /** An informative pair's candles it reads (`informative(symbol, spec)`); undefined: the instance's own. */
  readonly symbol?: string;
  /** Closed candles it is fed before it is ready: until it has converged (convergedInputs). */
  readonly warmUp: number;
  /** Closed candles the library needs before its first value (a value then still depends on the seed). */
  readonly seed: number;
  /** A fresh indicator, ready after this spec's `warmUp` candles. */
  create(this: IndicatorSpec<T>): IndicatorFeed<T>;
}

/**
 * The weight the seed may keep in a converged value: 1e-4. A recursive smoothing (EMA, Wilder's) starts from
 * a seed (the first price, or the first period's mean) that a run from an earlier start would not have used;
 * after k more inputs the seed weighs (1 - alpha)^k, so the difference between two starts is that share of
 * the difference between their seeds: for a price average a few hundredths of a percent of a move at most, for
 * RSI (its averages' seeds may differ by their own size) about a hundredth of a point. `bot check-strategy`
 * compares values at 1e-3: ten times what convergence leaves.
 */
export const CONVERGED = 1e-4;

/** Inputs after which a seed weighs at most CONVERGED in a smoothing of factor `alpha`. */
export function convergedInputs(alpha: number): number {
  return Math.ceil(Math.log(CONVERGED) / Math.log(1 - alpha));
}

/** EMA of `period`: smoothing 2 / (period + 1), seeded by the first price (trading-signals). */
const emaConverged = (period: number) => Math.max(period, convergedInputs(2 / (period + 1)));
/** Wilder's smoothing of `period` (RSI, ATR): 1 / period after a seed of the first period's mean. */
const wilderConverged = (period: number) => (period === 1 ? 1 : period + convergedInputs(1 / period));

/** What hooks read. */
export interface IndicatorView<T> {
  readonly timeframe: Timeframe;
  /** The latest value, undefined until ready. */
  readonly value: T | undefined;
  /** The value before the latest candle (undefined until it was ready one candle ago): for crossovers. */
  readonly previous: T | undefined;
  readonly ready: boolean;
  /** Open time of the last candle fed (-Infinity before the first). */
  readonly time: number;
  /** Candles fed so far. */
  readonly inputs: number;
}

/** An indicator with its state; the engine feeds it. */
export class IndicatorFeed<T> implements IndicatorView<T> {
  value: T | undefined = undefined;
  previous: T | undefined = undefined;
  time = -Infinity;
  inputs = 0;
  private readonly required: number;

  constructor(
    readonly timeframe: Timeframe,
    private readonly step: (c: Candle) => T | null,
    private readonly stable: () => boolean,
    required: number,
  ) {
    this.required = required;
  }

  get ready(): boolean {
    return this.value !== undefined;
  }

  /** One closed candle (the engine skips candles not newer than the last one fed). */
  update(candle: Candle): void {
    if (candle.time <= this.time) return;
    this.time = candle.time;
    this.inputs++;
    const result = this.step(candle);
    this.previous = this.value;
    // null: the library had nothing new (a VWAP candle without volume): the value stands.
    if (result !== null && this.inputs >= this.required && this.stable()) this.value = result;
  }
}

function sourceOf(source: PriceSource): (c: Candle) => number {
  switch (source) {
    case 'open':
      return (c) => c.open;
    case 'high':
      return (c) => c.high;
    case 'low':
      return (c) => c.low;
    case 'typical':
      return (c) => (c.high + c.low + c.close) / 3;
    case 'close':
      return (c) => c.close;
  }
}

/**
 * A spec over a trading-signals indicator. `converged`: candles until the value no longer depends on the seed
 * (at least the library's own count; a finite window, SMA or bands, is exact once full: nothing more).
 */
function spec<T, I>(
  kind: string,
  timeframe: Timeframe,
  make: () => LibraryIndicator<T, I>,
  input: (c: Candle) => I,
  converged = 0,
): IndicatorSpec<T> {
  const seed = make().getRequiredInputs();
  return {
    kind,
    timeframe,
    seed,
    warmUp: Math.max(seed, converged),
    create() {
      const ind = make();
      return new IndicatorFeed<T>(
        timeframe,
        (c) => ind.update(input(c), false),
        () => ind.isStable,
        this.warmUp,
      );
    },
  };
}

function positiveInt(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name}: expected a positive integer, found ${n}`);
  return n;
}

/** Simple moving average of `period` candles' `source` (default close). */
export function sma(timeframe: Timeframe, period: number, source: PriceSource = 'close'): IndicatorSpec<number> {
  positiveInt('sma period', period);
  return spec('sma', timeframe, () => new SMA(period), sourceOf(source));
}

/** Exponential moving average (smoothing 2 / (period + 1), seeded with the first price). */
export function ema(timeframe: Timeframe, period: number, source: PriceSource = 'close'): IndicatorSpec<number> {
  positiveInt('ema period', period);
  return spec('ema', timeframe, () => new EMA(period), sourceOf(source), emaConverged(period));
}

/** Relative strength index (Wilder's smoothing), 0 to 100. */
export function rsi(timeframe: Timeframe, period = 14, source: PriceSource = 'close'): IndicatorSpec<number> {
  positiveInt('rsi period', period);
  return spec('rsi', timeframe, () => new RSI(period), sourceOf(source), 1 + wilderConverged(period));
}

/** MACD line (fast EMA - slow EMA), its signal EMA and the histogram. */
export function macd(
  timeframe: Timeframe,
  periods: { fast?: number; slow?: number; signal?: number } = {},
  source: PriceSource = 'close',
): IndicatorSpec<MACDResult> {
  const fast = positiveInt('macd fast', periods.fast ?? 12);
  const slow = positiveInt('macd slow', periods.slow ?? 26);
  const signal = positiveInt('macd signal', periods.signal ?? 9);
  if (fast >= slow) throw new RangeError(`macd: expected fast < slow, found ${fast} and ${slow}`);
  // The signal line starts on the MACD line's first value (at `slow` inputs) and converges after that.
  return spec(
    'macd',
    timeframe,
    () => new MACD(new EMA(fast), new EMA(slow), new EMA(signal)),
    sourceOf(source),
    Math.max(slow, emaConverged(slow)) + emaConverged(signal),
  );
}

/** Bollinger bands: the SMA of `period` and `deviations` standard deviations above and below it. */
export function bollinger(
  timeframe: Timeframe,
  period = 20,
  deviations = 2,
  source: PriceSource = 'close',
): IndicatorSpec<BandsResult> {
  positiveInt('bollinger period', period);
  if (!(deviations > 0)) throw new RangeError(`bollinger deviations: expected a positive number, found ${deviations}`);
  return spec('bollinger', timeframe, () => new BollingerBands(period, deviations), sourceOf(source));
}

/** Average true range (Wilder's smoothing) over `period` candles. */
export function atr(timeframe: Timeframe, period = 14): IndicatorSpec<number> {
  positiveInt('atr period', period);
  return spec(
    'atr',
    timeframe,
    () => new ATR(period),
    (c) => c,
    wilderConverged(period),
  );
}

/** Stochastic oscillator: %K over `k` candles slowed by `slowing`, %D its `d`-candle SMA. */
export function stochastic(
  timeframe: Timeframe,
  periods: { k?: number; d?: number; slowing?: number } = {},
): IndicatorSpec<StochasticResult> {
  const kPeriod = positiveInt('stochastic k', periods.k ?? 14);
  const dPeriod = positiveInt('stochastic d', periods.d ?? 3);
  const kSlowingPeriod = positiveInt('stochastic slowing', periods.slowing ?? 3);
  return spec(
    'stochastic',
    timeframe,
    () => new StochasticOscillator({ kPeriod, dPeriod, kSlowingPeriod }),
    (c) => c,
  );
}

const DAY_MS = 86_400_000;

/**
 * Volume-weighted average price of the typical price since the UTC day's start (the session VWAP: anchored, so
 * it does not depend on where the run started; its warm-up is a day of its candles); candles without volume
 * are skipped.
 */
export function vwap(timeframe: Timeframe): IndicatorSpec<number> {
  const perDay = Math.max(1, Math.ceil(DAY_MS / TIMEFRAME_MS[timeframe]));
  return {
    kind: 'vwap',
    timeframe,
    seed: 1,
    warmUp: perDay,
    create() {
      let ind = new VWAP();
      let day = -Infinity;
      return new IndicatorFeed<number>(
        timeframe,
        (c) => {
          const d = Math.floor(c.time / DAY_MS);
          if (d !== day) [ind, day] = [new VWAP(), d];
          return ind.update(c, false);
        },
        () => ind.isStable,
        this.warmUp,
      );
    },
  };
}

/** `spec` on an informative pair's candles (the definition's `informative` lists the pair). */
export function informative<T>(symbol: string, spec: IndicatorSpec<T>): IndicatorSpec<T> {
  return { ...spec, symbol };
}

/** The indicator specs a strategy declares, by the name the hooks read them under. */
export type IndicatorSpecs = Record<string, IndicatorSpec<unknown>>;

/** `ctx.indicators` for a strategy that declared `I`. */
export type IndicatorViews<I extends IndicatorSpecs> = { readonly [K in keyof I]: IndicatorView<SpecValue<I[K]>> };
type SpecValue<X> = X extends IndicatorSpec<infer T> ? T : never;

/** Where an indicator set reads closed candles (the engine's CandleBuilder). */
export interface ClosedCandles {
  /** Candles closed so far over every timeframe (grows by one per candle closed). */
  readonly closedCount: number;
  lastClosedTime(timeframe: Timeframe): number;
  candlesSince(timeframe: Timeframe, time: number): readonly Candle[];
}

/** One instance's indicators: made from the definition's specs, fed from its symbol's candles (or an informative pair's). */
export class IndicatorSet {
  readonly views: IndicatorViews<IndicatorSpecs>;
  /** The feeds by the symbol whose candles they read (undefined: the instance's own). */
  private readonly sources: { symbol: string | undefined; feeds: IndicatorFeed<unknown>[]; fedAt: number }[] = [];

  constructor(specs: IndicatorSpecs) {
    const views: Record<string, IndicatorFeed<unknown>> = {};
    for (const [key, ind] of Object.entries(specs)) {
      const feed = ind.create();
      views[key] = feed;
      let source = this.sources.find((s) => s.symbol === ind.symbol);
      if (source === undefined) this.sources.push((source = { symbol: ind.symbol, feeds: [], fedAt: -1 }));
      source.feeds.push(feed);
    }
    this.views = views;
  }

  /**
   * Feeds each indicator the closed candles it has not seen (the first time: every candle kept, its warm-up),
   * from `own` or, for one on an informative pair, `other(symbol)`. Costs one comparison a source when no candle
   * closed.
   */
  feed(own: ClosedCandles | undefined, other?: (symbol: string) => ClosedCandles | undefined): void {
    const sources = this.sources;
    for (let s = 0; s < sources.length; s++) {
      const entry = sources[s] as (typeof sources)[number];
      const source = entry.symbol === undefined ? own : other?.(entry.symbol);
      if (source === undefined || source.closedCount === entry.fedAt) continue;
      entry.fedAt = source.closedCount;
      const feeds = entry.feeds;
      for (let i = 0; i < feeds.length; i++) {
        const feed = feeds[i] as IndicatorFeed<unknown>;
        if (source.lastClosedTime(feed.timeframe) <= feed.time) continue;
        for (const candle of source.candlesSince(feed.timeframe, feed.time)) feed.update(candle);
      }
    }
  }
}
