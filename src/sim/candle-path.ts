/**
 * The path inside a candle, and the volume on it: how a recording imported from one-minute candles is replayed.
 *
 * The candle importer (record/candles.ts) writes each candle as four tickers at +0/15/30/45 s of its minute:
 * open, the extreme nearer the open, the other extreme, close. Which extreme came first is not in the data, so
 * it is a model, chosen at replay time (`bot backtest --candle-path`, PAPER_CANDLE_PATH): one import serves
 * every model, and the column cache keeps the tickers as recorded. A replay finds a candle's four tickers (one
 * symbol's consecutive tickers at those offsets whose middle two are the candle's extremes) and, when the model
 * orders the extremes otherwise, swaps the two middle prices (and the 24-hour high and low the first of them
 * shows).
 *
 * A candle happens at its close (design.md, invariant 15). The data say that the open was traded first and the
 * close last, and what the high and low were, not when: so a replay moves both extremes to the close's time,
 * just before it. The open is seen at the minute's start; then, at one instant, the market walks the model's
 * path (the first extreme, the second, the close) and resting orders match against it in that order; an order
 * that reached the book inside the candle meets the path at its first extreme. Nothing of the path can be seen
 * before that instant (no ticker, no fill), and whatever a strategy decides on what it sees then (the close, the
 * candle's high and low, its fills) reaches the book after the whole path: a strategy learns nothing from the
 * modelled inside of a candle that it could have traded on. What it sees of a candle it could have known when
 * the candle closed: the close ticker carries the candle's open, high and low (`c`, the market watch's
 * extension on candle data; Ticker.candle), so the strategies' candles are the imported ones. The models of the
 * path:
 *
 * - `shortest` (the default): open, the extreme against the candle's direction, the other, close (an up candle
 *   dips first, a down candle rises first; a flat one keeps the import's order). Of the two orders it is the one
 *   with less travel (the other is longer by twice |close - open|), so resting orders are crossed the fewest
 *   times: the buy-low, sell-high round trips a grid or a dip buyer would harvest inside one minute, which the
 *   data cannot show happened, are not handed to it. It is the conservative choice for resting orders.
 * - `nearer-first`: the extreme nearer the open first, as imported (the path before there was a choice).
 * - `longest`: the other order, the most travel: an upper bound for resting-order strategies.
 * - `high-first`, `low-first`: always that extreme first.
 *
 * Volume: a candle's base volume (the difference of the rolling 24-hour base volume between its closing tick,
 * where the importer adds it, and its opening tick) is shared equally by its four tickers, as the volume traded
 * since the previous one. The matching engine caps resting fills at a share of it (`participationRate`).
 */
import { BotError } from '../errors.js';
import type { WireTicker } from '../wire/schemas.js';
import { fromWire } from '../market/decimal.js';

export const CANDLE_PATHS = ['shortest', 'nearer-first', 'longest', 'high-first', 'low-first'] as const;
export type CandlePath = (typeof CANDLE_PATHS)[number];
export const DEFAULT_CANDLE_PATH: CandlePath = 'shortest';

/** Each model in words, as the backtest report states it. */
export const CANDLE_PATH_WORDS: Record<CandlePath, string> = {
  shortest:
    'open, the extreme against the candle’s direction (an up candle dips first, a down candle rises first), the ' +
    'other extreme, close: the shorter of the two paths, so resting orders are crossed the fewest times',
  'nearer-first': 'open, the extreme nearer the open, the other extreme, close',
  longest: 'open, the extreme in the candle’s direction, the other extreme, close: the longer of the two paths',
  'high-first': 'open, high, low, close',
  'low-first': 'open, low, high, close',
};

/** Offsets of a candle's four tickers inside its minute (the importer's). */
export const CANDLE_TICK_OFFSETS_MS = [0, 15_000, 30_000, 45_000] as const;

/** A --candle-path (or PAPER_CANDLE_PATH) value, refused in one line naming `flag` and the valid names. */
export function parseCandlePath(value: string, flag = '--candle-path'): CandlePath {
  if ((CANDLE_PATHS as readonly string[]).includes(value)) return value as CandlePath;
  throw new BotError('E_USAGE', `${flag} must be one of ${CANDLE_PATHS.join(', ')}, got '${value}'`);
}

/** Whether four tickers of one symbol (times, prices) are a candle as imported: offsets, extremes in the middle. */
export function isCandle(
  t0: number,
  t1: number,
  t2: number,
  t3: number,
  p0: number,
  p1: number,
  p2: number,
  p3: number,
): boolean {
  const [, o1, o2, o3] = CANDLE_TICK_OFFSETS_MS;
  if (t1 - t0 !== o1 || t2 - t0 !== o2 || t3 - t0 !== o3) return false;
  const hi = Math.max(p1, p2);
  const lo = Math.min(p1, p2);
  return hi >= p0 && hi >= p3 && lo <= p0 && lo <= p3;
}

/** Whether `path` visits the high first in a candle recorded as open p0, then p1, p2, close p3. */
function highFirst(path: CandlePath, p0: number, p1: number, p3: number, recordedHighFirst: boolean): boolean {
  switch (path) {
    case 'nearer-first':
      return recordedHighFirst;
    case 'high-first':
      return true;
    case 'low-first':
      return false;
    case 'shortest':
      return p3 === p0 ? recordedHighFirst : p3 < p0;
    case 'longest':
      return p3 === p0 ? recordedHighFirst : p3 > p0;
  }
}

/** Whether `path` swaps the two middle prices of a candle recorded as p0, p1, p2, p3 (isCandle). */
export function swapsExtremes(path: CandlePath, p0: number, p1: number, p2: number, p3: number): boolean {
  if (p1 === p2) return false;
  const recorded = p1 > p2;
  return highFirst(path, p0, p1, p3, recorded) !== recorded;
}

/**
 * The base volume each of a candle's four tickers carries: a quarter of the candle's (vb at its close minus vb at
 * its open, exact in decimals); undefined when the recording has no volume.
 */
export function candleTickVolume(vbOpen: number, vbClose: number): number | undefined {
  if (!(vbOpen >= 0) || !(vbClose >= vbOpen)) return undefined;
  // Most volumes are whole hundred-millionths (a recorder's or importer's text): exact in integers, and one
  // correctly rounded division gives the double nearest the exact quarter, as the decimals below do (without
  // their garbage: 300,000 candles took 20 MB of promoted strings).
  const open = hundredMillionths(vbOpen);
  const close = hundredMillionths(vbClose);
  if (open !== undefined && close !== undefined) return (close - open) / 4e8;
  return Number(fromWire(vbClose).minus(fromWire(vbOpen)).div(4).toFixed());
}

/**
 * x as a whole number of 1e-8 when its shortest text has at most 8 decimals and |x| < 2^25 (where the doubles
 * lie closer than 1e-8, so that no other 8-decimal number is the same double); undefined otherwise.
 */
function hundredMillionths(x: number): number | undefined {
  if (!(Math.abs(x) < 2 ** 25)) return undefined;
  const n = Math.round(x * 1e8);
  return n / 1e8 === x ? n : undefined;
}

/**
 * Finds the candles in one symbol's tickers, pushed in time order: four consecutive ones that form a candle
 * (isCandle) go to `candle`, any other to `single`, each in the order pushed (up to three are held back).
 */
export class CandleFinder<T> {
  private pending: T[] = [];

  constructor(
    private readonly time: (x: T) => number,
    private readonly price: (x: T) => number,
    private readonly candle: (a: T, b: T, c: T, d: T) => void,
    private readonly single: (x: T) => void,
  ) {}

  push(x: T): void {
    const p = this.pending;
    p.push(x);
    if (p.length < 4) return;
    const [a, b, c, d] = p as [T, T, T, T];
    const { time: t, price: v } = this;
    if (isCandle(t(a), t(b), t(c), t(d), v(a), v(b), v(c), v(d))) {
      this.pending = [];
      this.candle(a, b, c, d);
    } else this.single(p.shift() as T);
  }

  /** Hands on what is held back (the end of the stream). */
  flush(): void {
    for (const x of this.pending) this.single(x);
    this.pending = [];
  }
}

/**
 * A participation share (--participation, PAPER_PARTICIPATION): a percentage (10%) or a ratio (0.1) in (0, 1],
 * as a plain ratio; `0` or `off` is null (no cap). Anything else is refused in one line naming `flag`.
 */
export function parseParticipation(value: string, flag: string): string | null {
  const text = value.trim();
  if (text === 'off') return null;
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(text);
  const ratio = m ? fromWire(m[1] as string).div(m[2] === '%' ? 100 : 1) : undefined;
  if (ratio === undefined || ratio.gt(1))
    throw new BotError(
      'E_USAGE',
      `${flag} must be a share of the traded volume within [0, 1] or [0%, 100%] (10%, 0.25), or off, got '${value}'`,
    );
  return ratio.isZero() ? null : ratio.toFixed();
}

/** The key of a close ticker's candle on candle data (the market watch's extension): [open, high, low]. */
export const CANDLE_KEY = 'c';

/** Where a recorded feed's ticker carries the base volume traded on it (a symbol key: never served nor stored). */
export const TICK_VOLUME: unique symbol = Symbol('tickVolume');
export type WalkedTicker = WireTicker & { [TICK_VOLUME]?: number };

/** The ticker at a candle's first extreme when the model swaps the extremes: the other price, its 24-hour range. */
function swappedAt(open: WireTicker, at: WireTicker, price: number): WireTicker {
  const out: WireTicker = { ...at, p: price };
  if (typeof open.h === 'number') out.h = Math.max(open.h, price);
  if (typeof open.l === 'number') out.l = Math.min(open.l, price);
  return out;
}

/**
 * One symbol's recorded tickers (in batches, time order) with `path` inside each candle, its extremes at the
 * close's time, the candle's range on the close ticker (CANDLE_KEY), and each candle ticker's volume under
 * TICK_VOLUME: the replay feeds' side of what candle-ticks.ts does for a backtest.
 */
export async function* walkCandles(
  batches: AsyncIterable<WireTicker[]>,
  path: CandlePath,
): AsyncGenerator<WalkedTicker[]> {
  let out: WalkedTicker[] = [];
  const finder = new CandleFinder<WireTicker>(
    (x) => x.t,
    (x) => x.p,
    (a, b, c, d) => {
      const swap = swapsExtremes(path, a.p, b.p, c.p, d.p);
      // The extremes at the close's time: the candle's path runs at one instant (see the module doc).
      const first: WireTicker = swap ? swappedAt(a, b, c.p) : { ...b };
      first.t = d.t;
      const group: WalkedTicker[] = [
        a,
        first,
        { ...c, p: swap ? b.p : c.p, t: d.t },
        { ...d, [CANDLE_KEY]: [a.p, Math.max(b.p, c.p), Math.min(b.p, c.p)] },
      ];
      const v = typeof a.vb === 'number' && typeof d.vb === 'number' ? candleTickVolume(a.vb, d.vb) : undefined;
      for (const x of group) out.push(v === undefined ? x : { ...x, [TICK_VOLUME]: v });
    },
    (x) => out.push(x),
  );
  for await (const batch of batches) {
    for (const x of batch) finder.push(x);
    if (out.length > 0) {
      yield out;
      out = [];
    }
  }
  finder.flush();
  if (out.length > 0) yield out;
}
