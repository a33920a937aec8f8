/**
 * OHLCV candles built from the ticks the engine sees, at the timeframes strategies declare. Each timeframe
 * keeps a ring of the last `count` closed candles and one forming candle, so memory is bounded by what the
 * strategies asked for and every tick costs O(1) per timeframe.
 *
 * Buckets are aligned on the UTC epoch (a '4h' candle opens at 00:00, 04:00…; a '1d' at midnight UTC). A
 * candle opens on the first tick of its bucket and closes on the first tick of a later bucket (a bucket
 * without ticks makes no candle). Prices are the ticks' own: on a recording imported from one-minute candles
 * (four ticks per candle walking open, extremes, close) the '1m' candles are exactly the imported ones.
 *
 * Volume: a ticker carries only the rolling 24-hour base volume, so the volume traded in a minute is the
 * change of that figure over the minute plus what left the 24-hour window meanwhile, i.e. what was traded in
 * the same minute a day before (a ring of 1,440 minute volumes). That is exact on imported candles from the
 * first imported day on, and on live data once the builder has seen a day (before that a minute's volume is
 * the net change, never below zero). Volumes are rounded to 8 decimals, the exchanges' precision, so float
 * noise never accumulates.
 */

export const TIMEFRAMES = ['1m', '5m', '15m', '1h', '4h', '1d'] as const;
export type Timeframe = (typeof TIMEFRAMES)[number];

const MINUTE_MS = 60_000;
export const TIMEFRAME_MS: Readonly<Record<Timeframe, number>> = {
  '1m': MINUTE_MS,
  '5m': 5 * MINUTE_MS,
  '15m': 15 * MINUTE_MS,
  '1h': 60 * MINUTE_MS,
  '4h': 240 * MINUTE_MS,
  '1d': 1440 * MINUTE_MS,
};

/** One candle; `time` is its open time (epoch ms, the bucket's start). */
export interface Candle {
  readonly time: number;
  readonly open: number;
  readonly high: number;
  readonly low: number;
  readonly close: number;
  readonly volume: number;
}

/** Timeframe -> how many closed candles to keep. */
export type CandleNeeds = Partial<Record<Timeframe, number>>;

export const isTimeframe = (x: string): x is Timeframe => (TIMEFRAMES as readonly string[]).includes(x);

const round8 = (x: number): number => Math.round(x * 1e8) / 1e8;

interface Forming {
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

/** Closed candles of one timeframe (a ring of `capacity`) and the forming one. */
class CandleSeries {
  private readonly ring: (Candle | undefined)[];
  /** Closed candles ever pushed; the ring holds the last `capacity` of them. */
  closed = 0;
  forming: Forming | undefined;
  private cache: { closed: number; count: number; list: readonly Candle[] } | undefined;

  constructor(
    readonly ms: number,
    readonly capacity: number,
  ) {
    this.ring = new Array<Candle | undefined>(capacity);
  }

  /** One tick; true when it closed a candle. */
  tick(time: number, price: number): boolean {
    const f = this.forming;
    if (f !== undefined && time < f.time + this.ms) {
      if (price > f.high) f.high = price;
      if (price < f.low) f.low = price;
      f.close = price;
      return false;
    }
    if (f !== undefined) this.push(Object.freeze({ ...f }));
    const start = time - (time % this.ms);
    this.forming = { time: start, open: price, high: price, low: price, close: price, volume: 0 };
    return f !== undefined;
  }

  addVolume(volume: number): void {
    if (this.forming !== undefined) this.forming.volume = round8(this.forming.volume + volume);
  }

  push(candle: Candle): void {
    this.ring[this.closed % this.capacity] = candle;
    this.closed++;
  }

  /**
   * The last `count` closed candles (and the forming one after them when asked), oldest first. The closed list is
   * cached until a candle closes (a list with the forming candle, which changes at every tick, is not, and does
   * not evict it).
   */
  list(count: number, forming: boolean): readonly Candle[] {
    const c = this.cache;
    if (!forming && c !== undefined && c.closed === this.closed && c.count === count) return c.list;
    const n = Math.min(count, this.capacity, this.closed);
    const out: Candle[] = [];
    for (let i = this.closed - n; i < this.closed; i++) out.push(this.ring[i % this.capacity] as Candle);
    if (forming && this.forming !== undefined) out.push(Object.freeze({ ...this.forming }));
    else this.cache = { closed: this.closed, count, list: out };
    return out;
  }

  /** Closed candles opened after `time`, oldest first (at most the ring). */
  since(time: number): Candle[] {
    const out: Candle[] = [];
    const n = Math.min(this.capacity, this.closed);
    for (let i = this.closed - n; i < this.closed; i++) {
      const candle = this.ring[i % this.capacity] as Candle;
      if (candle.time > time) out.push(candle);
    }
    return out;
  }

  lastClosedTime(): number {
    return this.closed === 0 ? -Infinity : (this.ring[(this.closed - 1) % this.capacity] as Candle).time;
  }
}

/** What a CandleBuilder saves so that a restart does not wait for its lookback again (JSON). */
export interface CandleSnapshot {
  version: 1;
  lastTime: number;
  lastVolume24h: number | null;
  minute: number;
  minuteDelta: number;
  minuteLeft: number;
  /** [minute, volume] of the last day's minutes. */
  minutes: [number, number][];
  series: { timeframe: Timeframe; closed: Candle[]; forming: Candle | null }[];
}

const DAY_MINUTES = 1440;

/** The candles of one symbol at the timeframes asked for. */
export class CandleBuilder {
  private readonly series = new Map<Timeframe, CandleSeries>();
  private readonly list: CandleSeries[] = [];
  private lastTime = -Infinity;
  private lastVolume24h = NaN;
  private minute = -1;
  private minuteDelta = 0;
  /** The volume that left the 24-hour window as this minute began (traded a day before it). */
  private minuteLeft = 0;
  private readonly minuteIds = new Float64Array(DAY_MINUTES).fill(-1);
  private readonly minuteVolumes = new Float64Array(DAY_MINUTES);
  /** Candles closed so far over every timeframe: a reader's one-comparison test for "anything new?". */
  closedCount = 0;

  constructor(needs: CandleNeeds) {
    for (const tf of TIMEFRAMES) {
      const count = needs[tf];
      if (count === undefined || count <= 0) continue;
      const s = new CandleSeries(TIMEFRAME_MS[tf], count);
      this.series.set(tf, s);
      this.list.push(s);
    }
  }

  /** Timeframes kept, with their capacity. */
  get needs(): CandleNeeds {
    const out: CandleNeeds = {};
    for (const [tf, s] of this.series) out[tf] = s.capacity;
    return out;
  }

  /**
   * One tick: its time (epoch ms), last price and the ticker's rolling 24-hour base volume (NaN when the
   * ticker has none). A tick older than the last one seen is ignored.
   */
  tick(time: number, price: number, volume24h: number): void {
    if (time < this.lastTime || !(price > 0)) return;
    this.lastTime = time;
    const minute = Math.floor(time / MINUTE_MS);
    if (minute !== this.minute) {
      if (this.minute !== -1) this.closeMinute();
      this.minuteLeft = this.leftSince(this.minute, minute);
      this.minute = minute;
      this.minuteDelta = 0;
    }
    if (volume24h === volume24h) {
      const last = this.lastVolume24h;
      if (last === last) this.minuteDelta += volume24h - last;
      this.lastVolume24h = volume24h;
    }
    const list = this.list;
    for (let i = 0; i < list.length; i++) if ((list[i] as CandleSeries).tick(time, price)) this.closedCount++;
  }

  /**
   * What left the 24-hour window between minute `previous` and minute `next`: the volume of the minutes a day
   * before, after `previous`'s and up to `next`'s (one minute's in a gapless series).
   */
  private leftSince(previous: number, next: number): number {
    if (previous === -1) return 0;
    let left = 0;
    // Only minutes up to `previous` were ever recorded: at most a day of them to look at.
    const last = Math.min(next - DAY_MINUTES, previous);
    for (let m = previous - DAY_MINUTES + 1; m <= last; m++) {
      const slot = ((m % DAY_MINUTES) + DAY_MINUTES) % DAY_MINUTES;
      if (this.minuteIds[slot] === m) left += this.minuteVolumes[slot] as number;
    }
    return left;
  }

  private closeMinute(): void {
    const m = this.minute;
    const slot = m % DAY_MINUTES;
    const volume = Math.max(0, round8(this.minuteDelta + this.minuteLeft));
    this.minuteIds[slot] = m;
    this.minuteVolumes[slot] = volume;
    const list = this.list;
    for (let i = 0; i < list.length; i++) (list[i] as CandleSeries).addVolume(volume);
  }

  /** Up to `count` closed candles of `timeframe`, oldest first; with `forming`, the forming one last. */
  candles(timeframe: Timeframe, count: number, forming = false): readonly Candle[] {
    const s = this.series.get(timeframe);
    if (s === undefined) return EMPTY;
    return s.list(count, forming);
  }

  /** Closed candles of `timeframe` opened after `time`, oldest first (what an indicator has not seen). */
  candlesSince(timeframe: Timeframe, time: number): Candle[] {
    return this.series.get(timeframe)?.since(time) ?? [];
  }

  /** Open time of the last closed candle of `timeframe` (-Infinity when none): a cheap "anything new?". */
  lastClosedTime(timeframe: Timeframe): number {
    return this.series.get(timeframe)?.lastClosedTime() ?? -Infinity;
  }

  snapshot(): CandleSnapshot {
    const minutes: [number, number][] = [];
    for (let i = 0; i < DAY_MINUTES; i++) {
      const id = this.minuteIds[i] as number;
      if (id >= 0) minutes.push([id, this.minuteVolumes[i] as number]);
    }
    const series: CandleSnapshot['series'] = [];
    for (const [timeframe, s] of this.series) {
      const f = s.forming;
      series.push({ timeframe, closed: s.since(-Infinity), forming: f === undefined ? null : { ...f } });
    }
    return {
      version: 1,
      lastTime: this.lastTime,
      lastVolume24h: this.lastVolume24h === this.lastVolume24h ? this.lastVolume24h : null,
      minute: this.minute,
      minuteDelta: this.minuteDelta,
      minuteLeft: this.minuteLeft,
      minutes,
      series,
    };
  }

  /** Takes up a snapshot (timeframes this builder does not keep are ignored; capacities are this builder's). */
  restore(snap: CandleSnapshot): void {
    if (snap.version !== 1) return;
    this.lastTime = snap.lastTime;
    this.lastVolume24h = snap.lastVolume24h ?? NaN;
    this.minute = snap.minute;
    this.minuteDelta = snap.minuteDelta;
    this.minuteLeft = snap.minuteLeft;
    for (const [id, volume] of snap.minutes) {
      this.minuteIds[id % DAY_MINUTES] = id;
      this.minuteVolumes[id % DAY_MINUTES] = volume;
    }
    for (const saved of snap.series) {
      const s = this.series.get(saved.timeframe);
      if (s === undefined) continue;
      for (const c of saved.closed) s.push(Object.freeze({ ...c }));
      this.closedCount += saved.closed.length;
      s.forming = saved.forming === null ? undefined : { ...saved.forming };
    }
  }
}

const EMPTY: readonly Candle[] = Object.freeze([]);
