/**
 * Technical indicators for strategies, computed by trading-signals (TypeScript, no dependencies, incremental:
 * one update per input) over the engine's closed candles. A strategy declares them in its definition
 * (`indicators: (params) => ({ fast: ema('5m', 12), … })`); the engine creates one set per instance, feeds
 * each indicator every closed candle of its timeframe once (the candles kept at start first: the warm-up),
 * and the hooks read them as `ctx.indicators.fast.value`. An indicator is `ready` once the library has had
 * the inputs it needs for a stable result; before that `value` is undefined.
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
import type { Candle, Timeframe } from '../market/candles.js';

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
  /** Closed candles it needs before it is ready (the library's own count). */
  readonly warmUp: number;
  create(): IndicatorFeed<T>;
}

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

function spec<T, I>(
  kind: string,
  timeframe: Timeframe,
  make: () => LibraryIndicator<T, I>,
  input: (c: Candle) => I,
): IndicatorSpec<T> {
  const warmUp = make().getRequiredInputs();
  return {
    kind,
    timeframe,
    warmUp,
    create() {
      const ind = make();
      return new IndicatorFeed<T>(
        timeframe,
        (c) => ind.update(input(c), false),
        () => ind.isStable,
        warmUp,
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

/** Exponential moving average (smoothing 2 / (period + 1), seeded with the SMA of the first `period`). */
export function ema(timeframe: Timeframe, period: number, source: PriceSource = 'close'): IndicatorSpec<number> {
  positiveInt('ema period', period);
  return spec('ema', timeframe, () => new EMA(period), sourceOf(source));
}

/** Relative strength index (Wilder's smoothing), 0 to 100. */
export function rsi(timeframe: Timeframe, period = 14, source: PriceSource = 'close'): IndicatorSpec<number> {
  positiveInt('rsi period', period);
  return spec('rsi', timeframe, () => new RSI(period), sourceOf(source));
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
  return spec('macd', timeframe, () => new MACD(new EMA(fast), new EMA(slow), new EMA(signal)), sourceOf(source));
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

/**
 * Volume-weighted average price of the typical price, cumulative over every candle fed since the instance
 * started (its warm-up included); candles without volume are skipped.
 */
export function vwap(timeframe: Timeframe): IndicatorSpec<number> {
  return spec(
    'vwap',
    timeframe,
    () => new VWAP(),
    (c) => c,
  );
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

/** One instance's indicators: made from the definition's specs, fed from its symbol's candles. */
export class IndicatorSet {
  readonly views: IndicatorViews<IndicatorSpecs>;
  private readonly feeds: IndicatorFeed<unknown>[];
  /** The source's closedCount when last fed (-1: never). */
  private fedAt = -1;

  constructor(specs: IndicatorSpecs) {
    const views: Record<string, IndicatorFeed<unknown>> = {};
    for (const [key, ind] of Object.entries(specs)) views[key] = ind.create();
    this.views = views;
    this.feeds = Object.values(views);
  }

  /**
   * Feeds each indicator the closed candles it has not seen (the first time: every candle kept, its warm-up).
   * Costs one comparison when no candle closed.
   */
  feed(source: ClosedCandles): void {
    if (source.closedCount === this.fedAt) return;
    this.fedAt = source.closedCount;
    const feeds = this.feeds;
    for (let i = 0; i < feeds.length; i++) {
      const feed = feeds[i] as IndicatorFeed<unknown>;
      if (source.lastClosedTime(feed.timeframe) <= feed.time) continue;
      for (const candle of source.candlesSince(feed.timeframe, feed.time)) feed.update(candle);
    }
  }
}
