/**
 * Holes in the data: stretches of data time longer than a bound (`--max-gap`) between two consecutive ticks of
 * one of a run's symbols. They are listed in summary.json and the report, and the equity series takes no sample
 * inside one past the bound: such a sample would only repeat the equity of the last price before the hole, a
 * made-up zero return in Sharpe, Sortino and volatility. The change across a hole stays, as one return from the
 * last sample before it to the first after it (a position held across the hole did make or lose it).
 */
import type { TickData } from './tick-data.js';
import { valueAt } from './number-column.js';

export interface DataGap {
  symbol: string;
  /** The last tick before the hole and the first after it (epoch ms). */
  from: number;
  to: number;
  /** to - from. */
  ms: number;
}

/** The default bound, in data steps: a poll or two the recorder missed is jitter, not a hole. */
export const MAX_GAP_STEPS = 4;
/** ...and never under a minute: a recording polled every second should not list every slow poll. */
export const MIN_DEFAULT_MAX_GAP_MS = 60_000;

/** The default bound for data of this step: 4 steps, at least a minute (a missing one-minute candle is listed). */
export function defaultMaxGapMs(dataStepMs: number): number {
  return Math.max(MAX_GAP_STEPS * dataStepMs, MIN_DEFAULT_MAX_GAP_MS);
}

/**
 * The gaps longer than `maxGapMs` between consecutive ticks of each symbol with a slot (the run's), from tick
 * index `from` on, in the order they start (ties: by symbol).
 */
export function findGaps(data: TickData, slot: Int32Array, from: number, maxGapMs: number): DataGap[] {
  const { sym, time } = data.columns;
  const last = new Float64Array(data.symbols.length).fill(NaN);
  const gaps: DataGap[] = [];
  for (let i = from; i < data.length; i++) {
    const s = sym[i] as number;
    if (slot[s] === -1) continue;
    const t = valueAt(time, i);
    const previous = last[s] as number;
    if (t - previous > maxGapMs)
      gaps.push({ symbol: (data.symbols[s] as { symbol: string }).symbol, from: previous, to: t, ms: t - previous });
    last[s] = t;
  }
  return gaps.sort((a, b) => a.from - b.from || (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
}

/**
 * Which sample times fall in a gap past its bound (from + maxGapMs < t <= to: the sample at `to` is taken
 * before the tick at `to` moves anything, so it too would be the price before the hole). Asked in increasing
 * time order, as the replay samples.
 */
export class GapSamples {
  /** The union of the gaps' made-up stretches, as disjoint (start, end] intervals in time order. */
  private readonly spans: [number, number][] = [];
  private k = 0;

  constructor(gaps: readonly DataGap[], maxGapMs: number) {
    const spans = gaps.map((g): [number, number] => [g.from + maxGapMs, g.to]).sort((a, b) => a[0] - b[0]);
    for (const span of spans) {
      const top = this.spans[this.spans.length - 1];
      if (top && span[0] <= top[1]) top[1] = Math.max(top[1], span[1]);
      else this.spans.push([span[0], span[1]]);
    }
  }

  /** True when a sample at `t` would be made up. */
  madeUp(t: number): boolean {
    while (this.k < this.spans.length && t > (this.spans[this.k] as [number, number])[1]) this.k++;
    const span = this.spans[this.k];
    return span !== undefined && t > span[0];
  }
}
