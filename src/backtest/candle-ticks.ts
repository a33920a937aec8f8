/**
 * A backtest's ticks with the candle path it runs with (sim/candle-path.ts): the loaded columns stay as recorded
 * (the column cache's and a sweep's shared memory), and each run gets prices, 24-hour highs and lows with the
 * model's order inside every candle, the extremes at the close's time (a candle happens at its close), the base
 * volume each tick carries for the participation cap, and the candle's range told with its close.
 *
 * A run whose caller holds the columns alone (`bot backtest`'s runs, one after another on one thread) walks them
 * in place instead of copying three of them (14.5 MB on 1.2M ticks), and puts them back as recorded after it
 * (restore()): what it keeps for that is the two ticks and one 24-hour range of each candle it swapped.
 */
import type { CandleRange } from '../ports/venue-records.js';
import { type CandlePath, candleTickVolume, isCandle, swapsExtremes } from '../sim/candle-path.js';
import { type NumberColumn, setValue, valueAt, withValues } from './number-column.js';
import type { TickColumns } from './tick-columns.js';
import type { TickData } from './tick-data.js';

/**
 * What a candle's ticks carry beyond their price: the base volume of each (candleTickVolume: a quarter of its
 * candle's), worked out when the replay reaches the candle from the 24-hour volumes at its open and close, and the
 * candle's range at its close. A byte per tick says which of its candle's four it is (0: none), where a column of
 * the volumes took 8 (9.7 MB on 1.2M ticks).
 */
export class CandleInfo {
  /** Per symbol: the ticks of the candle last worked out (first, last; none at first) and its volume (NaN: none). */
  private readonly open: Int32Array;
  private readonly close: Int32Array;
  private readonly volume: Float64Array;

  constructor(
    private readonly data: TickData,
    /** Per tick: 1 to 4 for a candle's open, first extreme, second extreme and close; 0 outside candles. */
    private readonly role: Uint8Array,
  ) {
    this.open = new Int32Array(data.symbols.length).fill(1);
    this.close = new Int32Array(data.symbols.length);
    this.volume = new Float64Array(data.symbols.length);
  }

  /** A new one on the same ticks, with nothing worked out yet: for another run on the same walk (CandleWalks). */
  fresh(): CandleInfo {
    return new CandleInfo(this.data, this.role);
  }

  /** Whether tick i is one of a candle's extremes: the path inside it, which no strategy observes. */
  inPath(i: number): boolean {
    const r = this.role[i] as number;
    return r === 2 || r === 3;
  }

  /** The range of the candle tick i closes (a close tick: role 4), told with its close (Ticker.candle). */
  rangeAt(i: number): CandleRange | undefined {
    if (this.role[i] !== 4) return undefined;
    const { sym, price } = this.data.columns;
    const s = sym[i] as number;
    const a = valueAt(price, nth(sym, i, s, -2));
    const b = valueAt(price, nth(sym, i, s, -1));
    return { open: valueAt(price, nth(sym, i, s, -3)), high: Math.max(a, b), low: Math.min(a, b) };
  }

  /** The base volume traded on tick i, when known. */
  at(i: number): number | undefined {
    const role = this.role[i] as number;
    if (role === 0) return undefined;
    const { sym, vb } = this.data.columns;
    const s = sym[i] as number;
    if (!((this.open[s] as number) <= i && i <= (this.close[s] as number))) {
      const open = nth(sym, i, s, 1 - role);
      const close = nth(sym, i, s, 4 - role);
      this.open[s] = open;
      this.close[s] = close;
      this.volume[s] = candleTickVolume(valueAt(vb, open), valueAt(vb, close)) ?? NaN;
    }
    const v = this.volume[s] as number;
    return v === v ? v : undefined;
  }
}

/**
 * Raised whenever what findCandles finds changes (isCandle's test, CANDLE_TICK_OFFSETS_MS, the walk below): the
 * column cache keeps each recording's roles with the version that found them, and an entry of another version
 * is not read (column-cache.ts).
 */
export const CANDLE_DETECTOR_VERSION = 1;

/**
 * What the candle detection found in a load's columns (candleRoles: 1 to 4 for a candle's open, first extreme,
 * second extreme and close; 0 outside candles), for exactly the columns `of`: any other columns (a slice, a copy,
 * columns let go) are detected again. Kept with the columns in the column cache, so a warm run does not detect.
 */
export interface KnownRoles {
  of: TickColumns;
  roles: Uint8Array;
}

/** The candle roles the load found for the data's columns as they are (the column cache's), if any. */
function knownRoles(data: TickData): Uint8Array | undefined {
  return data.candleRoles?.of === data.columns ? data.candleRoles.roles : undefined;
}

/** The candle roles of ticks [from, to) of the columns, found by findCandles over each symbol's ticks. */
export function candleRoles(columns: TickColumns, from: number, to: number, symbols: number): Uint8Array {
  const role = new Uint8Array(to - from);
  const sym = columns.sym.subarray(from, to);
  const time = withValues(columns.time, columns.time.values.subarray(from, to));
  const price = withValues(columns.price, columns.price.values.subarray(from, to));
  findCandles(sym, to - from, time, price, symbols, (a, b, c, d) => {
    role[a] = 1;
    role[b] = 2;
    role[c] = 3;
    role[d] = 4;
  });
  return role;
}

/**
 * The roles of a file's ticks as a load keeps them (the ticks [0, stop) of the file, those at or after `from`),
 * from `roles` found over the whole file (rewritten in place), when they are what detection would find over the
 * kept ticks; else undefined. The detection walks each symbol's ticks from its first with nothing held, and holds nothing after a
 * candle's close: so a symbol's kept ticks (when they are all its ticks from some point on) are found alike when
 * the tick before them closed a candle. Those of a candle closing at or after `stop` are then in none. `end`
 * false: the detection goes on into the next file's ticks, which it finds alike only if every symbol ends on a
 * candle's close.
 */
export function keptRoles(
  roles: Uint8Array,
  columns: TickColumns,
  start: number,
  stop: number,
  from: number,
  symbols: number,
  end: boolean,
): Uint8Array | undefined {
  const { sym, time } = columns;
  // As the load keeps them (tick-data.ts: all of them without a `from`).
  const keeps = (i: number) => from === -Infinity || valueAt(time, start + i) >= from;
  const kept = roles;
  const before = new Uint8Array(symbols).fill(4);
  const keeping = new Uint8Array(symbols);
  let n = 0;
  for (let i = 0; i < stop; i++) {
    const s = sym[start + i] as number;
    if (keeps(i)) {
      keeping[s] = 1;
      kept[n++] = roles[i] as number;
    } else if (keeping[s] === 1) return undefined;
    else before[s] = roles[i] as number;
  }
  if (before.some((r) => r !== 4)) return undefined;
  // Backwards: a symbol's ticks after its last close are in no candle (a candle cut by `stop`).
  const closed = new Uint8Array(symbols);
  for (let k = n - 1, i = stop - 1; k >= 0; i--) {
    if (!keeps(i)) continue;
    const s = sym[start + i] as number;
    if (kept[k] === 4) closed[s] = 1;
    else if (closed[s] === 0) {
      if (!end) return undefined;
      kept[k] = 0;
    }
    k--;
  }
  return kept.subarray(0, n);
}

/**
 * The known roles of the data's ticks [a, b) (sliceTicks: a run from --from, a window), when detection over
 * those ticks alone finds the same: each symbol's last tick before them closed a candle (or there is none).
 */
export function slicedRoles(data: TickData, a: number, b: number): Uint8Array | undefined {
  const known = knownRoles(data);
  if (known === undefined) return undefined;
  const { sym } = data.columns;
  const symbols = data.symbols.length;
  const seen = new Uint8Array(symbols);
  for (let i = a - 1, left = symbols; i >= 0 && left > 0; i--) {
    const s = sym[i] as number;
    if (seen[s] === 1) continue;
    if (known[i] !== 4) return undefined;
    seen[s] = 1;
    left--;
  }
  return keptRoles(known.slice(a, b), data.columns, a, b - a, -Infinity, symbols, true);
}

/** Calls `candle` with the four ticks of each candle the roles say, in the order of their closes (as findCandles). */
function eachCandle(
  role: Uint8Array,
  sym: Uint16Array,
  length: number,
  symbols: number,
  candle: (a: number, b: number, c: number, d: number) => void,
): void {
  const held = new Int32Array(3 * symbols);
  for (let i = 0; i < length; i++) {
    const r = role[i] as number;
    if (r === 0) continue;
    const at = 3 * (sym[i] as number);
    if (r < 4) held[at + r - 1] = i;
    else candle(held[at] as number, held[at + 1] as number, held[at + 2] as number, i);
  }
}

/** The index of the n-th tick of symbol s after tick i (before it when n < 0). */
function nth(sym: Uint16Array, i: number, s: number, n: number): number {
  const step = Math.sign(n);
  for (let left = Math.abs(n); left > 0;) if (sym[(i += step)] === s) left--;
  return i;
}

/**
 * Calls `candle` with the four ticks of each candle as imported (sim/candle-path.ts's CandleFinder over each
 * symbol's ticks, on tick indices): per symbol, up to four ticks held back in a ring of indices, the oldest let go
 * when the four are not a candle. It reads the times as recorded: a candle's extremes are moved once it is found,
 * behind it. The finder's objects and calls through closures took a heap number for each time and price they
 * returned, eight per tick (about 100 MB over 1.2M ticks, every run).
 */
function findCandles(
  sym: Uint16Array,
  length: number,
  time: NumberColumn,
  price: NumberColumn,
  symbols: number,
  candle: (a: number, b: number, c: number, d: number) => void,
): void {
  const ring = new Int32Array(4 * symbols);
  const held = new Uint8Array(symbols);
  for (let i = 0; i < length; i++) {
    const s = sym[i] as number;
    const at = 4 * s;
    const n = held[s] as number;
    ring[at + n] = i;
    if (n < 3) {
      held[s] = n + 1;
      continue;
    }
    const a = ring[at] as number;
    const b = ring[at + 1] as number;
    const c = ring[at + 2] as number;
    const d = ring[at + 3] as number;
    const t0 = valueAt(time, a);
    if (
      isCandle(
        t0,
        valueAt(time, b),
        valueAt(time, c),
        valueAt(time, d),
        valueAt(price, a),
        valueAt(price, b),
        valueAt(price, c),
        valueAt(price, d),
      )
    ) {
      held[s] = 0;
      candle(a, b, c, d);
    } else {
      ring[at] = b;
      ring[at + 1] = c;
      ring[at + 2] = d;
      held[s] = 3;
    }
  }
}

export interface CandleTicks {
  data: TickData;
  /** Base volume traded on each tick; undefined when the data hold no candles. */
  volume: CandleInfo | undefined;
  /** Candles found, and how many of them the model walks otherwise than recorded. */
  candles: number;
  swapped: number;
  /** Puts the columns walked in place back as recorded (nothing to do for a copy). Call it once. */
  restore(): void;
}

const nothing = () => undefined;

/** The extremes' offsets before their close as recorded (+15 s and +30 s of a candle closing at +45 s). */
const EXTREME_BEFORE_CLOSE = [0, 30_000, 15_000] as const;

/**
 * The walks a thread that runs backtest after backtest on one data object (a sweep's worker) made on copies, by
 * candle path, for the runs that follow: a walk on copies is only read, so each run after the first takes it with
 * a CandleInfo of its own (fresh()) instead of copying four columns and finding the candles again. Another data
 * object (a run on a slice of the data: --from, a window) replaces them.
 */
export class CandleWalks {
  private data: TickData | undefined;
  private readonly walks = new Map<CandlePath, CandleTicks>();

  of(data: TickData, path: CandlePath): CandleTicks {
    if (data !== this.data) {
      this.walks.clear();
      this.data = data;
    }
    let walk = this.walks.get(path);
    if (walk === undefined) this.walks.set(path, (walk = candleTicks(data, path)));
    return { ...walk, volume: walk.volume?.fresh() };
  }
}

/**
 * The ticks walked by `path`: on copies of the price, high, low and time columns, or with `inPlace` on the columns
 * themselves (no other reader may see them until restore()).
 */
export function candleTicks(data: TickData, path: CandlePath, inPlace = false): CandleTicks {
  const none = { data, volume: undefined, candles: 0, swapped: 0, restore: nothing };
  if (!data.files.some((f) => f.source === 'candles')) return none;
  const { sym } = data.columns;
  const own = (column: NumberColumn) => (inPlace ? column : withValues(column, column.values.slice()));
  const price = own(data.columns.price);
  const high = own(data.columns.high);
  const low = own(data.columns.low);
  const time = own(data.columns.time);
  // Price, high and low share one unit (number-column.ts): a price goes into a high or a low as it is, and a
  // column's stored values swap and come back as they are.
  const set = (column: NumberColumn, i: number, v: number) => {
    if (!setValue(column, i, v)) throw new Error(`candle-ticks: ${v} does not fit the price columns' unit`);
  };
  // In place, each swap's two ticks and the recorded 24-hour range of its first (at most one swap per 4 ticks;
  // pages never written are never resident).
  const room = inPlace ? 2 * Math.ceil(data.length / 4) : 0;
  const swaps = new Int32Array(room);
  const ranges = new Float64Array(room);
  // The roles the load found (the column cache's), else found here.
  const known = knownRoles(data);
  const role = known ?? new Uint8Array(data.length);
  let candles = 0;
  let swapped = 0;
  const swap = (b: number, c: number) => {
    const p = price.values[b] as number;
    price.values[b] = price.values[c] as number;
    price.values[c] = p;
  };
  const candle = (a: number, b: number, c: number, d: number) => {
    candles++;
    if (known === undefined) {
      role[a] = 1;
      role[b] = 2;
      role[c] = 3;
      role[d] = 4;
    }
    // The candle happens at its close: both extremes at the close's time (sim/candle-path.ts).
    const close = valueAt(time, d);
    set(time, b, close);
    set(time, c, close);
    const p2 = valueAt(price, c);
    if (!swapsExtremes(path, valueAt(price, a), valueAt(price, b), p2, valueAt(price, d))) return;
    if (inPlace) {
      swaps[2 * swapped] = b;
      swaps[2 * swapped + 1] = c;
      ranges[2 * swapped] = high.values[b] as number;
      ranges[2 * swapped + 1] = low.values[b] as number;
    }
    swapped++;
    swap(b, c);
    // The 24-hour high and low at the first extreme: the open's and that extreme (at the second they include both).
    set(high, b, Math.max(valueAt(high, a), p2));
    set(low, b, Math.min(valueAt(low, a), p2));
  };
  if (known) eachCandle(known, sym, data.length, data.symbols.length, candle);
  else findCandles(sym, data.length, time, price, data.symbols.length, candle);
  if (candles === 0) return none;
  const restore = () => {
    for (let k = 0; k < swapped; k++) {
      const b = swaps[2 * k] as number;
      swap(b, swaps[2 * k + 1] as number);
      high.values[b] = ranges[2 * k] as number;
      low.values[b] = ranges[2 * k + 1] as number;
    }
    swapped = 0;
    for (let i = 0; i < role.length; i++) {
      const r = role[i] as number;
      if (r === 2 || r === 3) set(time, i, valueAt(time, i) - EXTREME_BEFORE_CLOSE[r - 1]!);
    }
  };
  const walked = inPlace ? data : { ...data, columns: { ...data.columns, price, high, low, time } };
  const volume = new CandleInfo(walked, role);
  return { data: walked, volume, candles, swapped, restore: inPlace ? restore : nothing };
}
