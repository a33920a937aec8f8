/**
 * A backtest's ticks with the candle path it runs with (sim/candle-path.ts): the loaded columns stay as recorded
 * (the column cache's and a sweep's shared memory), and each run gets prices, 24-hour highs and lows with the
 * model's order inside every candle, and the base volume each tick carries for the participation cap.
 */
import { type CandlePath, CandleFinder, candleTickVolume, swapsExtremes } from '../sim/candle-path.js';
import type { TickData } from './tick-data.js';

export interface CandleTicks {
  data: TickData;
  /** Base volume traded on each tick (NaN where none is known); undefined when the data hold no candles. */
  volume: Float64Array | undefined;
  /** Candles found, and how many of them the model walks otherwise than recorded. */
  candles: number;
  swapped: number;
}

export function candleTicks(data: TickData, path: CandlePath): CandleTicks {
  if (!data.files.some((f) => f.source === 'candles')) return { data, volume: undefined, candles: 0, swapped: 0 };
  const { sym, time, vb } = data.columns;
  const price = Float64Array.from(data.columns.price);
  const high = Float64Array.from(data.columns.high);
  const low = Float64Array.from(data.columns.low);
  const volume = new Float64Array(data.length).fill(NaN);
  let candles = 0;
  let swapped = 0;
  const candle = (a: number, b: number, c: number, d: number) => {
    candles++;
    const v = candleTickVolume(vb[a] as number, vb[d] as number);
    if (v !== undefined) volume[a] = volume[b] = volume[c] = volume[d] = v;
    const p1 = price[b] as number;
    const p2 = price[c] as number;
    if (!swapsExtremes(path, price[a] as number, p1, p2, price[d] as number)) return;
    swapped++;
    price[b] = p2;
    price[c] = p1;
    // The 24-hour high and low at the first extreme: the open's and that extreme (at the second they include both).
    high[b] = Math.max(high[a] as number, p2);
    low[b] = Math.min(low[a] as number, p2);
  };
  const at = (i: number) => time[i] as number;
  const priceAt = (i: number) => price[i] as number;
  const finders = data.symbols.map(() => new CandleFinder(at, priceAt, candle, () => undefined));
  for (let i = 0; i < data.length; i++) (finders[sym[i] as number] as CandleFinder<number>).push(i);
  if (candles === 0) return { data, volume: undefined, candles: 0, swapped: 0 };
  return { data: { ...data, columns: { ...data.columns, price, high, low } }, volume, candles, swapped };
}
