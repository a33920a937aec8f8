/**
 * What a price chart draws, for the page (the daemon's candles) and report.html (a backtest's): candles laid on
 * their timeframe's buckets, one slot per bucket from the first to the last, so the time axis is linear in time and
 * a bucket without a candle (a hole in the data, a daemon that was down) stays an empty slot; and each instance's
 * declared indicators (strategy definitions' `indicators`) recomputed over the same candles with fresh feeds of the
 * library the strategy reads (its own are never touched), each value placed where the strategy could first read
 * it: at the first slot that opens after the candle it was computed on closed (a 1h EMA on a 1m chart steps once an
 * hour; a 1m EMA on a 1m chart stands one slot after its candle). Moving averages, bands and VWAP are drawn over
 * the price; an oscillator (RSI, MACD, stochastic, ATR) gets a pane of its own, as FreqUI and plot-dataframe
 * draw them. Display only: doubles are fine here.
 */
import { type Candle, TIMEFRAME_MS, type Timeframe } from '../market/candles.js';
import type { IndicatorSpec, IndicatorSpecs } from './indicators.js';

/** Indicator kinds drawn over the price; any other kind gets a pane of its own. */
const OVER_PRICE: ReadonlySet<string> = new Set(['sma', 'ema', 'bollinger', 'vwap']);

/** Figures a chart rounds to (display only; a price of 1e-5 keeps its digits). */
const round = (x: number) => Number(x.toPrecision(10));

/** One line of an indicator (`value`, or a part of a compound one: `upper`, `middle`, `lower`, `signal`…). */
export interface ChartLine {
  key: string;
  /** One per slot: null before the indicator is ready, and in an empty slot. */
  values: (number | null)[];
}

export interface ChartIndicator {
  instance: string;
  /** The name the strategy reads it under (`ctx.indicators.fast`). */
  name: string;
  kind: string;
  timeframe: Timeframe;
  pane: 'price' | 'own';
  lines: ChartLine[];
}

/** A chart's data: slots `start + k * step` (epoch ms), `k < candles.length`. */
export interface ChartData {
  timeframe: Timeframe;
  start: number;
  step: number;
  /** [open, high, low, close] per slot, or null where no candle opened in that bucket. */
  candles: ([number, number, number, number] | null)[];
  indicators: ChartIndicator[];
}

/** Where a chart reads candles: closed ones (and the forming one when asked), oldest first, per timeframe. */
export interface CandleSource {
  candles(timeframe: Timeframe, count: number, forming?: boolean): readonly Candle[];
}

/** The instances on the chart's symbol with the indicators each declares (for its current params). */
export interface ChartInstance {
  instance: string;
  specs: IndicatorSpecs;
}

/** Every closed candle kept, at most this many (more than any chart's slots and warm-up). */
const ALL = 1_000_000;

/**
 * The chart of `timeframe` from a candle source: the latest `maxSlots` buckets (the forming candle last), from the
 * bucket of `from` at the earliest (a backtest's start: its warm-up's candles are not drawn), and the instances'
 * indicators on them. Empty (no slot) when the source has no candle of that timeframe yet.
 */
export function chartData(
  source: CandleSource,
  timeframe: Timeframe,
  instances: readonly ChartInstance[],
  maxSlots: number,
  from = -Infinity,
): ChartData {
  const step = TIMEFRAME_MS[timeframe];
  const list = source.candles(timeframe, ALL, true);
  const last = list[list.length - 1];
  const fromSlot = Number.isFinite(from) ? from - (from % step) : -Infinity;
  if (last === undefined || last.time < fromSlot) return { timeframe, start: 0, step, candles: [], indicators: [] };
  const earliest = Math.max((list[0] as Candle).time, fromSlot);
  const count = Math.min(maxSlots, Math.round((last.time - earliest) / step) + 1);
  const start = last.time - (count - 1) * step;
  const candles: ChartData['candles'] = new Array<null>(count).fill(null);
  for (const c of list) {
    const k = Math.round((c.time - start) / step);
    if (k >= 0) candles[k] = [round(c.open), round(c.high), round(c.low), round(c.close)];
  }
  const indicators = instances.flatMap(({ instance, specs }) =>
    Object.entries(specs).map(([name, spec]) => ({
      instance,
      name,
      kind: spec.kind,
      timeframe: spec.timeframe,
      pane: OVER_PRICE.has(spec.kind) ? ('price' as const) : ('own' as const),
      lines: indicatorLines(spec, source.candles(spec.timeframe, ALL), start, step, candles),
    })),
  );
  return { timeframe, start, step, candles, indicators };
}

/** A value's lines: a number is `value`; a compound one (bands, MACD, stochastic) has a line per numeric field. */
function parts(value: unknown): [string, number][] {
  if (typeof value === 'number') return [['value', value]];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).filter((e): e is [string, number] => typeof e[1] === 'number');
}

/**
 * The indicator fed `candles` (its timeframe's, closed, oldest first) by a fresh feed; each slot gets the latest
 * value known when the slot opened (computed on a candle that had closed by then). Slots without a candle stay
 * empty, so the lines break where the candles do.
 */
function indicatorLines(
  spec: IndicatorSpec<unknown>,
  candles: readonly Candle[],
  start: number,
  step: number,
  slots: ChartData['candles'],
): ChartLine[] {
  const feed = spec.create();
  const tf = TIMEFRAME_MS[spec.timeframe];
  const lines = new Map<string, ChartLine>();
  let next = 0;
  let known: [string, number][] = [];
  const fill = (until: number) => {
    // Slots that opened before `until` (the close of the next candle to feed) show what was known before it.
    for (; next < slots.length && start + next * step < until; next++) {
      if (slots[next] === null) continue;
      for (const [key, v] of known) {
        let line = lines.get(key);
        if (line === undefined) lines.set(key, (line = { key, values: new Array<null>(slots.length).fill(null) }));
        line.values[next] = round(v);
      }
    }
  };
  for (const c of candles) {
    fill(c.time + tf);
    feed.update(c);
    if (feed.ready) known = parts(feed.value);
  }
  fill(Infinity);
  return [...lines.values()];
}
