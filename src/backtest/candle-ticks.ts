/**
 * A backtest's ticks with the candle path it runs with (sim/candle-path.ts): the loaded columns stay as recorded
 * (the column cache's and a sweep's shared memory), and each run gets prices, 24-hour highs and lows with the
 * model's order inside every candle, and the base volume each tick carries for the participation cap.
 *
 * A run whose caller holds the columns alone (`bot backtest`'s runs, one after another on one thread) walks them
 * in place instead of copying three of them (29 MB on 1.2M ticks), and puts them back as recorded after it
 * (restore()): what it keeps for that is the two ticks and one 24-hour range of each candle it swapped.
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
  /** Puts the columns walked in place back as recorded (nothing to do for a copy). Call it once. */
  restore(): void;
}

const nothing = () => undefined;

/**
 * The ticks walked by `path`: on copies of the price, high and low columns, or with `inPlace` on the columns
 * themselves (no other reader may see them until restore()).
 */
export function candleTicks(data: TickData, path: CandlePath, inPlace = false): CandleTicks {
  const none = { data, volume: undefined, candles: 0, swapped: 0, restore: nothing };
  if (!data.files.some((f) => f.source === 'candles')) return none;
  const { sym, time, vb } = data.columns;
  const own = (column: Float64Array) => (inPlace ? column : Float64Array.from(column));
  const price = own(data.columns.price);
  const high = own(data.columns.high);
  const low = own(data.columns.low);
  // In place, each swap's two ticks and the recorded 24-hour range of its first (at most one swap per 4 ticks;
  // pages never written are never resident).
  const room = inPlace ? 2 * Math.ceil(data.length / 4) : 0;
  const swaps = new Int32Array(room);
  const ranges = new Float64Array(room);
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
    if (inPlace) {
      swaps[2 * swapped] = b;
      swaps[2 * swapped + 1] = c;
      ranges[2 * swapped] = high[b] as number;
      ranges[2 * swapped + 1] = low[b] as number;
    }
    swapped++;
    price[b] = p2;
    price[c] = p1;
    // The 24-hour high and low at the first extreme: the open's and that extreme (at the second they include both).
    high[b] = Math.max(high[a] as number, p2);
    low[b] = Math.min(low[a] as number, p2);
  };
  const at = (i: number) => time[i] as number;
  const priceAt = (i: number) => price[i] as number;
  const finders = data.symbols.map(() => new CandleFinder(at, priceAt, candle, nothing));
  for (let i = 0; i < data.length; i++) (finders[sym[i] as number] as CandleFinder<number>).push(i);
  if (candles === 0) return none;
  const restore = () => {
    for (let k = 0; k < swapped; k++) {
      const b = swaps[2 * k] as number;
      const c = swaps[2 * k + 1] as number;
      const p = price[b] as number;
      price[b] = price[c] as number;
      price[c] = p;
      high[b] = ranges[2 * k] as number;
      low[b] = ranges[2 * k + 1] as number;
    }
    swapped = 0;
  };
  const walked = inPlace ? data : { ...data, columns: { ...data.columns, price, high, low } };
  return { data: walked, volume, candles, swapped, restore: inPlace ? restore : nothing };
}
