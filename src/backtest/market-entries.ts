/**
 * The entries that move the simulated market in a backtest, one per tick: the daemon's feed gives the simulated
 * exchange the same keys (price, time, the 24-hour high, low and volumes a taker's impact reads).
 */
import type { MatchingEngine, TickerInput } from '../sim/matching-engine.js';
import type { CandleInfo } from './candle-ticks.js';
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
  /** Per symbol, the tick that moved its price without its entry given to the market yet (-1: none). */
  private readonly pending: Int32Array;
  /** Whether some symbol has a pending entry. */
  private anyPending = false;
  /** Per symbol of the data, its name. */
  private readonly names: string[];
  /** Per symbol, at 3s, 3s + 1 and 3s + 2, the market's quiet bounds for a stretch (MatchingEngine.quietBounds). */
  private readonly bounds: Float64Array;

  constructor(private readonly data: TickData) {
    this.inputs = new Array<TickerInput | undefined>(data.symbols.length).fill(undefined);
    this.inputKeys = new Int8Array(data.symbols.length);
    this.pending = new Int32Array(data.symbols.length).fill(-1);
    this.names = data.symbols.map((info) => info.symbol);
    this.bounds = new Float64Array(3 * data.symbols.length);
  }

  /**
   * Moves the market by tick i. A tick that crosses no resting order's threshold and brings no order's arrival
   * (MatchingEngine.quietPrice: most ticks) only moves the last price: its entry is given to the market when
   * something may read it (flush(), before the engine runs). Any other tick goes in full, with its entry and the
   * base volume it carries.
   */
  move(sim: MatchingEngine, i: number, volume: CandleInfo | undefined): void {
    const { sym, time, price } = this.data.columns;
    const s = sym[i] as number;
    if (sim.quietPrice(this.names[s] as string, valueAt(price, i), valueAt(time, i))) {
      this.pending[s] = i;
      this.anyPending = true;
      return;
    }
    this.pending[s] = -1;
    sim.onTicker(this.at(i), volume?.at(i));
  }

  /**
   * A stretch of quiet moves that the market learns of at its end (endStretch): the market's bounds are read once,
   * each tick is checked against them (moveInStretch), and nothing may read the market's last prices before the
   * stretch ends.
   */
  startStretch(sim: MatchingEngine): void {
    for (let s = 0; s < this.names.length; s++) sim.quietBounds(this.names[s] as string, this.bounds, 3 * s);
  }

  /**
   * move()'s quiet case within a stretch, without the market: true when tick i of symbol s at `price` and `time`
   * lies within the market's quiet bounds (it is then the symbol's pending tick); else false, nothing moved.
   */
  moveInStretch(s: number, i: number, price: number, time: number): boolean {
    const b = this.bounds;
    const o = 3 * s;
    if (!(price > (b[o] as number) && price < (b[o + 1] as number) && time < (b[o + 2] as number))) return false;
    this.pending[s] = i;
    this.anyPending = true;
    return true;
  }

  /**
   * The end of the stretch that followed tick `from`: the market moved by each symbol's last tick in it, in the
   * ticks' order (its clock is the last one's), as quietPrice would have left it tick by tick.
   */
  endStretch(sim: MatchingEngine, from: number): void {
    const { pending } = this;
    const { price, time } = this.data.columns;
    for (;;) {
      let next = -1;
      for (let s = 0; s < pending.length; s++) {
        const i = pending[s] as number;
        if (i > from && (next === -1 || i < (pending[next] as number))) next = s;
      }
      if (next === -1) break;
      from = pending[next] as number;
      if (!sim.quietPrice(this.names[next] as string, valueAt(price, from), valueAt(time, from)))
        throw new Error(`a stretch's quiet tick ${from} is no longer quiet for the market`);
    }
  }

  /** Gives the market the entries of the ticks that moved it quietly: before anything reads the market watch. */
  flush(sim: MatchingEngine): void {
    if (!this.anyPending) return;
    this.anyPending = false;
    const pending = this.pending;
    for (let s = 0; s < pending.length; s++) {
      const i = pending[s] as number;
      if (i === -1) continue;
      pending[s] = -1;
      sim.setTicker(this.at(i));
    }
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
      entry = keys === ALL_KEYS ? new FullEntry(this.names[s] as string) : marketTicker(this.data, i);
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
