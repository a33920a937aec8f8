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

/** All seven keys (15: bits 1, 2, 4, 8 of MarketEntries' key sets), the usual recording's entry. */
const ALL_KEYS = 15;

/**
 * An entry with all seven keys, in marketTicker's order. A class whose constructor first stores a double in each
 * number (NaN) keeps those fields as doubles: rewriting one stores in place. A plain object's fields, in a map
 * shared with every literal of the same keys, ended up generic, so each rewrite of its six numbers took six heap
 * numbers (96 bytes a tick).
 */
class FullEntry implements TickerInput {
  [key: string]: unknown;
  s: string;
  p = NaN;
  t = NaN;
  h = NaN;
  l = NaN;
  vb = NaN;
  vq = NaN;

  constructor(symbol: string) {
    this.s = symbol;
  }
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
    let entry = this.inputs[s];
    if (entry === undefined || this.inputKeys[s] !== keys) {
      entry =
        keys === ALL_KEYS ? new FullEntry((this.data.symbols[s] as SymbolInfo).symbol) : marketTicker(this.data, i);
      this.inputs[s] = entry;
      this.inputKeys[s] = keys;
      if (keys !== ALL_KEYS) return entry;
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
