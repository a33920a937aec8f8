/**
 * What report.html's chart draws of a run: the equity after the last tick of each of the report's candles,
 * gathered as the replay goes, and each symbol's candles at the report's timeframe (and at the timeframes its
 * instances' indicators read, to draw them as the page does: strategy/indicator-chart.ts), made after the run from
 * the warm-up's ticks and the run's (so an indicator is drawn from the run's start, as the strategy read it).
 * Display only: doubles are fine here.
 */
import { CandleBuilder, type CandleNeeds, TIMEFRAME_MS, TIMEFRAMES, type Timeframe } from '../market/candles.js';
import type { IndicatorSpecs } from '../strategy/indicators.js';
import { valueAt } from './number-column.js';
import type { TickData } from './tick-data.js';

/** The most candles the report's chart draws per symbol (a week of five minutes, three weeks of fifteen). */
export const REPORT_SLOTS = 3000;

/** The report's timeframe: the finest that draws the run in at most REPORT_SLOTS candles. */
export function reportTimeframe(spanMs: number): Timeframe {
  return TIMEFRAMES.find((tf) => spanMs / TIMEFRAME_MS[tf] < REPORT_SLOTS) ?? '1d';
}

/**
 * The candles a symbol's chart keeps: the run's at the report's timeframe, and at each indicator's timeframe its
 * warm-up and the run's.
 */
export function chartNeeds(timeframe: Timeframe, spanMs: number, specs: readonly IndicatorSpecs[]): CandleNeeds {
  const count = (tf: Timeframe) => Math.ceil(spanMs / TIMEFRAME_MS[tf]) + 2;
  const needs: CandleNeeds = { [timeframe]: count(timeframe) };
  for (const set of specs)
    for (const ind of Object.values(set))
      needs[ind.timeframe] = Math.max(needs[ind.timeframe] ?? 0, count(ind.timeframe) + ind.warmUp);
  return needs;
}

export class ChartSeries {
  readonly candles: CandleBuilder;
  /** The start (ms) of each report candle a tick of the run came in, in order… */
  readonly slots: number[] = [];
  /** …the time of its last tick, and the equity after that tick. */
  readonly lastTick: number[] = [];
  readonly equity: number[] = [];

  constructor(
    needs: CandleNeeds,
    private readonly stepMs: number,
  ) {
    this.candles = new CandleBuilder(needs);
  }

  /**
   * The run's tick at `time`: the equity after it, kept as its report candle's last. The candles are made after
   * the run (chartCandles): no call a tick but this one, which the replay's loop takes in.
   */
  add(time: number, equity: number): void {
    const slot = time - (time % this.stepMs);
    const n = this.slots.length;
    if (n > 0 && this.slots[n - 1] === slot) {
      this.lastTick[n - 1] = time;
      this.equity[n - 1] = equity;
    } else {
      this.slots.push(slot);
      this.lastTick.push(time);
      this.equity.push(equity);
    }
  }
}

/**
 * Each chart's candles fed with its symbol's ticks [from, to) in order: the warm-up's and the run's, as the run saw
 * them (charts[k] is the run's unit symbol k, `slot` each data symbol's unit, -1 for none). In one pass after the
 * run: a candle book fed in the replay's loop cost about 60 ns a tick there, mostly its doubles boxed for the call.
 */
export function chartCandles(
  charts: readonly ChartSeries[],
  data: TickData,
  slot: Int32Array,
  from: number,
  to: number,
): void {
  if (charts.length === 0) return;
  const { sym, time, price } = data.columns;
  for (let i = from; i < to; i++) {
    const k = slot[sym[i] as number] as number;
    if (k !== -1) charts[k]?.candles.tick(valueAt(time, i), valueAt(price, i), NaN);
  }
}
