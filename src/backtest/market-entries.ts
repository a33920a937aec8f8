/**
 * The entries that move the simulated market in a backtest, one per tick: the daemon's feed gives the simulated
 * exchange the same keys (price, time, the 24-hour high, low and volumes a taker's impact reads).
 */
import type { TickerInput } from '../sim/matching-engine.js';
import { valueAt } from './number-column.js';
import type { SymbolInfo } from './tick-columns.js';
import type { TickData } from './tick-data.js';

/** The market as tick i moves it: a new entry. */
export function marketTicker(data: TickData, i: number): TickerInput {
  const { sym, time, price, high, low, vb, vq } = data.columns;
  const t: TickerInput = {
    s: (data.symbols[sym[i] as number] as SymbolInfo).symbol,
    p: valueAt(price, i),
    t: valueAt(time, i),
  };
  const h = valueAt(high, i);
  const l = valueAt(low, i);
  const b = valueAt(vb, i);
  const q = valueAt(vq, i);
  if (h === h) t.h = h;
  if (l === l) t.l = l;
  if (b === b) t.vb = b;
  if (q === q) t.vq = q;
  return t;
}

/**
 * Per symbol of the data, the entry that moves the market, rewritten in place at each of its ticks while it has
 * the same keys (the matching engine keeps only the last one, and copies it when it lists the market).
 */
export class MarketEntries {
  private readonly inputs: (TickerInput | undefined)[];
  /** Which of h, l, vb, vq (bits 1, 2, 4, 8) each symbol's entry has. */
  private readonly inputKeys: Int8Array;

  constructor(private readonly data: TickData) {
    this.inputs = new Array<TickerInput | undefined>(data.symbols.length).fill(undefined);
    this.inputKeys = new Int8Array(data.symbols.length);
  }

  /** The entry of tick i: its symbol's, rewritten, or a new one when its keys differ. */
  at(i: number): TickerInput {
    const { sym, time, price, high, low, vb, vq } = this.data.columns;
    const s = sym[i] as number;
    const h = valueAt(high, i);
    const l = valueAt(low, i);
    const b = valueAt(vb, i);
    const q = valueAt(vq, i);
    const keys = (h === h ? 1 : 0) | (l === l ? 2 : 0) | (b === b ? 4 : 0) | (q === q ? 8 : 0);
    const entry = this.inputs[s];
    if (entry === undefined || this.inputKeys[s] !== keys) {
      const fresh = marketTicker(this.data, i);
      this.inputs[s] = fresh;
      this.inputKeys[s] = keys;
      return fresh;
    }
    entry.p = valueAt(price, i);
    entry.t = valueAt(time, i);
    if (keys & 1) entry.h = h;
    if (keys & 2) entry.l = l;
    if (keys & 4) entry.vb = b;
    if (keys & 8) entry.vq = q;
    return entry;
  }
}
