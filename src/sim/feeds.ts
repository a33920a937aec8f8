/**
 * Price feeds: what moves the simulated exchange's market. The server starts one with its engine and stops it
 * on close; every feed gives the engine tickers through `onTicker`, so the market watch serves whatever keys
 * the feed's tickers carry.
 *
 * - replayFeed: recordings on a clock in the recording's time (a replay clock at `speed` times the wall
 *   clock, or the daemon's), all symbols merged in time order: each ticker goes in once the clock reaches its
 *   time, so timers never drift cumulatively, and every ticker due at a wake-up goes in at once. With `loop`, the recording starts over with its times shifted
 *   past the end (one recorded step later), so times keep increasing; the price jumps back to the start.
 * - lockstepFeed: one recorded ticker per market-watch request, whatever `symbol` the request asks for, so a
 *   daemon polling the market moves it one tick per poll. Exhausted, it keeps serving the last tickers.
 * - randomWalkFeed: a seeded walk on the pairs' tick grid, deterministic for a seed.
 * - proxyFeed: paper trading on real market data: the live market watch of an upstream venue, fetched at most
 *   every minIntervalMs when the market watch is asked for; with `newPairs`, a pair the upstream lists after the
 *   start is listed here too once its rules are read (a pair list's newcomer).
 *
 * A ticker the engine refuses (a non-positive price in a recording) is skipped with a warning.
 */
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { BotError, describeError } from '../errors.js';
import type { WireTicker, WireTickerSource } from '../wire/schemas.js';
import type { PairConfig } from '../ports/venue-records.js';
import { D, type Dec, dec, type DecimalLike } from '../market/decimal.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import type { Clock, ClockReading, Timer } from '../ports/clock.js';
import { ReplayClock } from '../clocks/replay-clock.js';
import { wallClock } from '../clocks/wall-clock.js';
import type { Warn } from '../record/recording-reader.js';
import { SimRejectError } from './error-codes.js';
import type { MatchingEngine, TickerInput } from './matching-engine.js';
import { mulberry32 } from './prng.js';
import { countTickers, groupBySymbol, type SymbolFiles, TickerCursor } from './recorded-tickers.js';
import { type CandlePath, DEFAULT_CANDLE_PATH, TICK_VOLUME, type WalkedTicker } from './candle-path.js';
import { missingRulesMessage } from './pair-market.js';

export interface FeedProgress {
  /** Tickers fed so far. */
  fed: number;
  /** The data is exhausted (never, for looping, random and live feeds). */
  done: boolean;
  /** Time (epoch ms) of the last ticker fed. */
  time?: number;
  /** Time (epoch ms) of the first ticker a replay fed: where it started (PAPER_FROM, after the warm-up, resumed). */
  from?: number;
  /** Tickers in the recordings, once counted (replay and lockstep count them in the background at start). */
  total?: number;
}

export interface PriceFeed {
  /** Called once by the server with its engine. */
  start(engine: MatchingEngine): Promise<void> | void;
  /** Called before the server answers GET /api/v3/spot/market_watch (lockstep feeds advance here). */
  beforeMarketWatch?(): Promise<void> | void;
  stop(): Promise<void> | void;
  /** Ticks fed so far and whether the data is exhausted. */
  readonly progress: FeedProgress;
  /** Where a recorded feed stands (undefined before start, and for feeds that cannot resume). */
  position?(): ReplayPosition | undefined;
  /**
   * The recorded tickers before the position the replay started at (resumed, or PAPER_FROM), within the
   * warm-up asked for, oldest first: what the strategies' candles warm up on (empty before start).
   */
  warmUpTickers?(): readonly WarmUpTick[];
}

/** What the candles' warm-up reads of a ticker (a recorded ticker holds four times as much). */
export type WarmUpTick = Pick<WireTicker, 's' | 't' | 'p' | 'vb'>;

/** The tickers of the last `ms` of those added (in time order): a replay's warm-up, bounded. */
class WarmUpWindow {
  private tickers: WarmUpTick[] = [];
  private head = 0;

  constructor(private readonly ms: number) {}

  add(ticker: WireTicker): void {
    if (!(this.ms > 0)) return;
    // Only what the warm-up reads is kept: 123 bytes a ticker rather than 460 (days of one-second data).
    this.tickers.push({ s: ticker.s, t: ticker.t, p: ticker.p, vb: ticker.vb });
    const oldest = ticker.t - this.ms;
    while ((this.tickers[this.head] as WarmUpTick).t < oldest) this.head++;
    if (this.head > 4096 && this.head * 2 > this.tickers.length) {
      this.tickers = this.tickers.slice(this.head);
      this.head = 0;
    }
  }

  clear(): void {
    this.tickers = [];
    this.head = 0;
  }

  /** The tickers within `ms` before `start`. */
  before(start: number): WarmUpTick[] {
    return this.tickers.slice(this.head).filter((t) => t.t >= start - this.ms && t.t < start);
  }
}

const DAY_MS = 86_400_000;

/** Hours, to one decimal place where it has one. */
const hours = (ms: number) => String(Math.round(ms / 360_000) / 10);

/** Tickers fed between two turns of the event loop, so requests are served during a fast replay. */
const YIELD_EVERY = 2000;

const defaultWarn: Warn = (message) => process.emitWarning(message, 'SimFeedWarning');

function feedError(message: string): BotError {
  return new BotError('E_SIM_CONFIG', message);
}

/** Feeds one ticker, skipping (with a warning) one the engine refuses; counts it in `progress`. */
function feeder(progress: FeedProgress, warn: Warn) {
  return (engine: MatchingEngine, ticker: TickerInput): void => {
    try {
      engine.onTicker(ticker, (ticker as WalkedTicker)[TICK_VOLUME]);
    } catch (err) {
      if (!(err instanceof SimRejectError)) throw err;
      warn(`skipped a ticker of ${ticker.s} at ${ticker.t}: ${err.message}`);
      return;
    }
    progress.fed++;
    progress.time = ticker.t;
  };
}

/** The recordings grouped by symbol, every symbol checked against the engine's pairs. */
async function openRecordings(files: readonly string[], engine: MatchingEngine, warn: Warn): Promise<SymbolFiles> {
  if (files.length === 0) throw feedError('a recorded feed needs at least one recording file');
  const groups = await groupBySymbol(files, warn);
  if (groups.size === 0) throw feedError(`no tickers in ${files.join(', ')}`);
  for (const [symbol, of] of groups) {
    if (engine.pairConfigs(symbol).length === 0) throw feedError(missingRulesMessage(symbol, of.join(', ')));
  }
  return groups;
}

/** Opens the recordings for a feed: a cursor at their first ticker, and their count started in the background. */
async function openFeed(
  files: readonly string[],
  engine: MatchingEngine,
  progress: FeedProgress,
  stopped: () => boolean,
  warn: Warn,
  path: CandlePath,
): Promise<{ groups: SymbolFiles; cursor: TickerCursor }> {
  const groups = await openRecordings(files, engine, warn);
  countTickers(groups, stopped).then(
    (total) => {
      if (total !== undefined) progress.total = total;
    },
    (err: unknown) => warn(`could not count the recorded tickers: ${describeError(err)}`),
  );
  return { groups, cursor: new TickerCursor(groups, warn, path) };
}

/**
 * Where a replay (or lockstep) feed stands, so a restarted paper run resumes it: the tickers taken in the
 * current pass over the recordings, and for a looping replay the shift of this pass and what the first pass
 * learnt (first and last recorded time, the recorded step). The position counts a ticker as taken before the
 * engine sees it, so a change the ticker causes is committed with a position past it.
 */
export interface ReplayPosition {
  files: string[];
  taken: number;
  shift: number;
  first?: number;
  last?: number;
  step?: number;
  /** The first pass's shift, when a new replay went on after a resumed account's records (whole days). */
  base?: number;
}

/** The recordings read from a position: the cursor, the pass's shift, and how far into the pass. */
class ReplayCursor {
  shift = 0;
  /** The first pass's shift: 0 unless a new replay must go on after a resumed account's records. */
  base = 0;
  taken = 0;
  first: number | undefined;
  last: number | undefined;
  step: number | undefined;

  constructor(
    private cursor: TickerCursor,
    private readonly groups: SymbolFiles,
    private readonly loop: boolean,
    private readonly warn: Warn,
    private readonly path: CandlePath,
  ) {}

  /**
   * Skips to `at` (tickers taken without feeding them, handed to `skipped` in this pass's time); false when the
   * recordings hold fewer now.
   */
  async seek(at: ReplayPosition, skipped: (ticker: WireTicker) => void): Promise<boolean> {
    this.shift = at.shift;
    this.base = at.base ?? 0;
    this.first = at.first;
    this.last = at.last;
    this.step = at.step;
    while (this.taken < at.taken) {
      if (!(await this.cursor.ready())) return false;
      const ticker = this.cursor.take();
      skipped(this.shift === 0 ? ticker : { ...ticker, t: ticker.t + this.shift });
      this.taken++;
    }
    return true;
  }

  /**
   * Takes the tickers recorded before `time` in the first pass (handed to `skipped`): a replay from a time. True
   * when the pass holds a ticker at or after it (a looping cursor does not start the next pass here).
   */
  async skipBefore(time: number, skipped: (ticker: WireTicker) => void): Promise<boolean> {
    while ((await this.cursor.ready()) && this.cursor.peek().t < time) skipped(this.take());
    return this.cursor.ready();
  }

  /** True when a ticker is waiting; at the end of a pass, a looping cursor starts the next one. */
  async ready(): Promise<boolean> {
    while (!(await this.cursor.ready())) {
      // A pass that gave nothing would loop for ever.
      if (!this.loop || this.taken === 0 || this.first === undefined) return false;
      this.shift += (this.last ?? this.first) - this.first + (this.step ?? 1000);
      this.taken = 0;
      await this.cursor.close();
      this.cursor = new TickerCursor(this.groups, this.warn, this.path);
    }
    return true;
  }

  /** The waiting ticker's time in this pass. */
  peekTime(): number {
    return this.cursor.peek().t + this.shift;
  }

  /** The waiting ticker, its time shifted into this pass; counted as taken before anyone sees it. */
  take(): WireTicker {
    const ticker = this.cursor.take();
    this.taken++;
    if (this.shift === this.base) {
      this.first ??= ticker.t;
      this.step ??= ticker.t > this.first ? ticker.t - this.first : undefined;
      this.last = ticker.t;
    }
    return this.shift === 0 ? ticker : { ...ticker, t: ticker.t + this.shift };
  }

  /**
   * Shifts a new replay (nothing taken in this pass's time yet) forward by whole days, so that its waiting
   * ticker comes after `time`; whole days keep every candle boundary and the time of day. Returns the shift.
   */
  startAfter(time: number): number {
    const gap = time - this.cursor.peek().t;
    if (gap < 0) return 0;
    this.shift = this.base = (Math.floor(gap / DAY_MS) + 1) * DAY_MS;
    return this.base;
  }

  position(files: string[]): ReplayPosition {
    const { taken, shift, first, last, step, base } = this;
    return { files, taken, shift, first, last, step, ...(base === 0 ? {} : { base }) };
  }

  close(): Promise<void> {
    return this.cursor.close();
  }
}

/**
 * Opens a replay cursor, at `resume` when given and still within the recordings (else at the start, warned);
 * `resumed` says which.
 */
async function openReplay(
  files: string[],
  engine: MatchingEngine,
  progress: FeedProgress,
  stopped: () => boolean,
  options: {
    loop: boolean;
    resume: ReplayPosition | undefined;
    warn: Warn;
    window: WarmUpWindow;
    path: CandlePath | undefined;
  },
): Promise<{ cursor: ReplayCursor; resumed: boolean }> {
  const path = options.path ?? DEFAULT_CANDLE_PATH;
  const { groups, cursor } = await openFeed(files, engine, progress, stopped, options.warn, path);
  const replay = new ReplayCursor(cursor, groups, options.loop, options.warn, path);
  const { window } = options;
  if (options.resume && !(await replay.seek(options.resume, (t) => window.add(t)))) {
    options.warn(
      `the recordings hold fewer than the ${options.resume.taken} tickers already replayed: replaying from the start`,
    );
    window.clear();
    await replay.close();
    const again = await openFeed(files, engine, progress, stopped, options.warn, path);
    return { cursor: new ReplayCursor(again.cursor, again.groups, options.loop, options.warn, path), resumed: false };
  }
  return { cursor: replay, resumed: options.resume !== undefined };
}

/** A clock in the recording's time; a replay clock is anchored by the feed at the first ticker it feeds. */
export type ReplayTime = Clock & { anchor?(time: number): void };

export function replayFeed(options: {
  files: string[];
  /** Recorded time per wall time, for a replay clock of the feed's own (when `clock` is not given). */
  speed?: number;
  /** The recording's time (paper on recordings: the daemon's replay clock; tests: a virtual clock). */
  clock?: ReplayTime;
  loop?: boolean;
  warn?: (m: string) => void;
  /** Where a previous run stopped: the replay goes on from there. */
  resume?: ReplayPosition;
  /**
   * A resumed paper account's latest record: a new replay (not resumed, or one whose recordings changed) whose
   * data start before it is shifted forward by whole days to go on after it, warned. Asked only for a new replay.
   */
  after?: () => number | undefined;
  /**
   * Where a new replay (not resumed) starts: the first ticker recorded at or after this time (PAPER_FROM), or
   * 'warmed-up': `warmUpMs` after the recordings' first ticker, so the data before it fills every lookback
   * (from the first ticker when the recordings hold no more than that).
   */
  from?: number | 'warmed-up';
  /** How much of the data before the start position warmUpTickers() keeps (the strategies' candle lookback). */
  warmUpMs?: number;
  /** The path inside a candle on recordings imported from candles (default DEFAULT_CANDLE_PATH). */
  candlePath?: CandlePath;
}): PriceFeed {
  const speed = options.speed ?? 1;
  const warmUpMs = options.warmUpMs ?? 0;
  const window = new WarmUpWindow(warmUpMs);
  let warmUp: readonly WarmUpTick[] = [];
  if (!(speed > 0 && Number.isFinite(speed))) throw feedError(`replay speed must be a positive number, got ${speed}`);
  const clock: ReplayTime = options.clock ?? new ReplayClock(speed);
  const warn = options.warn ?? defaultWarn;
  const progress: FeedProgress = { fed: 0, done: false };
  const feed = feeder(progress, warn);
  let stopped = false;
  let timer: Timer | undefined;
  let pumping: Promise<void> = Promise.resolve();
  let replay: ReplayCursor | undefined;

  /**
   * Feeds every ticker due on the clock, then sets a timer for the next one (the timer's firing returns the
   * next pump, so a virtual clock moves on only once the ticker is in the market).
   */
  async function pump(engine: MatchingEngine, r: ReplayCursor, paused?: () => void): Promise<void> {
    let sinceYield = 0;
    while (!stopped) {
      if (!(await r.ready())) {
        progress.done = true;
        return;
      }
      const wait = r.peekTime() - clock.now();
      if (wait > 0) {
        timer = clock.setTimer(() => (pumping = guarded(engine, r)), wait);
        return;
      }
      const ticker = r.take();
      feed(engine, ticker);
      // Never between tickers of one instant (a candle's path runs at its close: nothing may observe it halfway).
      if (++sinceYield >= YIELD_EVERY && (!(await r.ready()) || r.peekTime() !== ticker.t)) {
        sinceYield = 0;
        paused?.();
        await yieldToEventLoop();
      }
    }
  }

  const guarded = (engine: MatchingEngine, r: ReplayCursor, paused?: () => void): Promise<void> =>
    pump(engine, r, paused).catch((err: unknown) => {
      warn(`replay stopped: ${describeError(err)}`);
      progress.done = true;
    });

  return {
    progress,
    position: () => replay?.position(options.files),
    warmUpTickers: () => warmUp,
    async start(engine) {
      let resume = options.resume;
      const open = () =>
        openReplay(options.files, engine, progress, () => stopped, {
          loop: options.loop ?? false,
          resume,
          warn,
          window,
          path: options.candlePath,
        });
      let { cursor: r, resumed } = await open();
      replay = r;
      // A position the recordings no longer hold starts a new replay: from where a new one starts.
      if (!resumed) resume = undefined;
      const from = options.from;
      const keep = (t: WireTicker) => window.add(t);
      if (typeof from === 'number' && resume === undefined) {
        if (!(await r.skipBefore(from, keep)))
          throw feedError(`PAPER_FROM: nothing recorded at or after ${new Date(from).toISOString()} in the recordings`);
      } else if (from === 'warmed-up' && resume === undefined && warmUpMs > 0 && (await r.ready())) {
        const first = r.peekTime();
        if (!(await r.skipBefore(first + warmUpMs, keep))) {
          warn(
            `the recordings hold no more than the strategies' warm-up (${hours(warmUpMs)} h of data before the first ` +
              'decision): the replay starts at their first ticker, and the lookbacks fill as it plays',
          );
          window.clear();
          await r.close();
          ({ cursor: r, resumed } = await open());
          replay = r;
        }
      }
      if (!(await r.ready())) {
        progress.done = true;
        return;
      }
      // A new replay on a resumed account goes on after the account's records: time never goes back.
      const after = resumed ? undefined : options.after?.();
      const shifted = after === undefined ? 0 : r.startAfter(after);
      if (shifted > 0)
        warn(
          `the replay's times are shifted ${shifted / DAY_MS} day(s) forward, to go on after the paper account's ` +
            `last record (${new Date(after as number).toISOString()}): its time never goes back`,
        );
      // The first ticker goes in now, so the market has a price before the server answers anything; the
      // replay's time starts there. The data before it is the strategies' warm-up.
      warmUp = window.before(r.peekTime() - shifted).map((t) => (shifted === 0 ? t : { ...t, t: t.t + shifted }));
      window.clear();
      const first = r.take();
      clock.anchor?.(first.t);
      progress.from = first.t;
      feed(engine, first);
      // What is due already goes in, and the timer for the next ticker is set, before the server starts (a
      // virtual clock must not move before that timer exists); a long backlog goes on in the background.
      let paused: () => void = () => undefined;
      const yielded = new Promise<void>((resolve) => (paused = resolve));
      pumping = guarded(engine, r, paused);
      await Promise.race([pumping, yielded]);
    },
    async stop() {
      stopped = true;
      timer?.cancel();
      await pumping;
      await replay?.close();
    },
  };
}

export function lockstepFeed(options: {
  files: string[];
  warn?: (m: string) => void;
  /** Where a previous run stopped: the next market watch goes on from there. */
  resume?: ReplayPosition;
  /** The path inside a candle on recordings imported from candles (default DEFAULT_CANDLE_PATH). */
  candlePath?: CandlePath;
}): PriceFeed {
  const warn = options.warn ?? defaultWarn;
  const progress: FeedProgress = { fed: 0, done: false };
  const feed = feeder(progress, warn);
  let engine: MatchingEngine | undefined;
  let replay: ReplayCursor | undefined;
  let stopped = false;
  /** Steps run one after another: concurrent requests each advance one ticker, in order. */
  let queue: Promise<void> = Promise.resolve();

  async function step(): Promise<void> {
    if (stopped || progress.done || !engine || !replay) return;
    if (await replay.ready()) feed(engine, replay.take());
    else progress.done = true;
  }

  return {
    progress,
    position: () => replay?.position(options.files),
    async start(e) {
      ({ cursor: replay } = await openReplay(options.files, e, progress, () => stopped, {
        loop: false,
        resume: options.resume,
        warn,
        window: new WarmUpWindow(0),
        path: options.candlePath,
      }));
      engine = e;
    },
    beforeMarketWatch() {
      const next = queue.then(step);
      queue = next.catch(() => undefined);
      return next;
    },
    async stop() {
      stopped = true;
      await queue;
      await replay?.close();
    },
  };
}

export interface RandomWalkFeed extends PriceFeed {
  /** Moves every symbol one step now (the timer calls it every intervalMs). */
  step(): void;
}

const DEFAULT_WALK_START = '1000';
const BPS = new D(10000);

/**
 * Each step moves each symbol (in the order given) by a uniform draw in ±volatilityBps of its price from one
 * mulberry32 stream, rounded to the nearest tick and kept within [max(tick, minPrice), maxPrice]. A symbol
 * starts at `start[symbol]`, else the engine's last price, else 1000 (on the grid). Step n is due at
 * start + n × intervalMs; missed steps are caught up, so the walk is the same however late the timers fire.
 */
export function randomWalkFeed(options: {
  symbols: string[];
  seed: number;
  start?: Record<string, string>;
  intervalMs?: number;
  volatilityBps?: number;
  clock?: ClockReading;
}): RandomWalkFeed {
  const intervalMs = options.intervalMs ?? 1000;
  const volatility = options.volatilityBps ?? 10;
  if (!(intervalMs > 0)) throw feedError(`random walk intervalMs must be positive, got ${intervalMs}`);
  if (!(volatility >= 0 && volatility < 10000))
    throw feedError(`random walk volatilityBps must be within [0, 10000), got ${volatility}`);
  if (options.symbols.length === 0) throw feedError('a random walk needs at least one symbol');
  const clock = options.clock ?? wallClock;
  const random = mulberry32(options.seed);
  const progress: FeedProgress = { fed: 0, done: false };
  const feed = feeder(progress, defaultWarn);
  let walkers: { symbol: string; price: Dec; tick: Dec; min: Dec; max: Dec | undefined }[] = [];
  let engine: MatchingEngine | undefined;
  let timer: NodeJS.Timeout | undefined;
  let w0 = 0;
  let steps = 0;

  const onGrid = (price: Dec, tick: Dec) => price.div(tick).toDecimalPlaces(0, D.ROUND_HALF_EVEN).mul(tick);
  const clamp = (w: (typeof walkers)[number], price: Dec) => {
    const low = D.max(price, w.min);
    return w.max && low.gt(w.max) ? w.max : low;
  };

  function emit(): void {
    const t = clock.now();
    for (const w of walkers) if (engine) feed(engine, { s: w.symbol, p: Number(w.price.toFixed()), t });
  }

  function step(): void {
    for (const w of walkers) {
      const bps = dec((2 * random() - 1) * volatility);
      w.price = clamp(w, onGrid(w.price.mul(BPS.plus(bps)).div(BPS), w.tick));
    }
    emit();
  }

  function schedule(): void {
    const wait = w0 + (steps + 1) * intervalMs - clock.now();
    timer = setTimeout(
      () => {
        // Catch up on steps a late timer missed, a bounded number per wake.
        for (let n = 0; n < 1000 && w0 + (steps + 1) * intervalMs <= clock.now(); n++) {
          steps++;
          step();
        }
        schedule();
      },
      Math.max(0, Math.min(wait, 2_147_483_647)),
    );
  }

  return {
    progress,
    step,
    start(e) {
      engine = e;
      walkers = options.symbols.map((symbol) => {
        const config = e.pairConfigs(symbol)[0];
        if (!config) throw feedError(`random walk: the simulated exchange does not list ${symbol}`);
        const rules = pairRulesFrom(config);
        const min = D.max(rules.tickSize, rules.minPrice);
        const w = { symbol, price: min, tick: rules.tickSize, min, max: rules.maxPrice };
        const from: DecimalLike = options.start?.[symbol] ?? e.lastPrice(symbol) ?? DEFAULT_WALK_START;
        w.price = clamp(w, onGrid(dec(from), w.tick));
        return w;
      });
      emit();
      w0 = clock.now();
      schedule();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
      engine = undefined;
    },
  };
}

/** The upstream stays the caller's: stop() waits for a fetch in flight but does not close it. */
export function proxyFeed(options: {
  upstream: WireTickerSource;
  minIntervalMs?: number;
  clock?: ClockReading;
  warn?: (m: string) => void;
  /**
   * Pairs the upstream lists after the start (on its market watch, not on the simulated exchange) that `wanted`
   * says a pair list may choose: their rules read from the upstream (`rules`, one request for all of them), each
   * TRADING one listed on the simulated exchange and fed from then on. One whose rules cannot be read or that is
   * not trading yet is tried again `retryMs` later (default a minute). Without it, only the start's pairs trade.
   */
  newPairs?: { wanted: (symbol: string) => boolean; rules: () => Promise<readonly PairConfig[]>; retryMs?: number };
}): PriceFeed {
  const minIntervalMs = options.minIntervalMs ?? 1000;
  const clock = options.clock ?? wallClock;
  const warn = options.warn ?? defaultWarn;
  const progress: FeedProgress = { fed: 0, done: false };
  const feed = feeder(progress, warn);
  let engine: MatchingEngine | undefined;
  let fetchedAt = -Infinity;
  let inFlight: Promise<void> | undefined;
  const newPairs = options.newPairs;
  /** When each pair listed after the start was last asked about and not listed here. */
  const tried = new Map<string, number>();

  /** The upstream's pairs of `tickers` that the simulated exchange takes up now (newPairs). */
  async function listNew(e: MatchingEngine, tickers: readonly WireTicker[]): Promise<void> {
    if (newPairs === undefined) return;
    const now = clock.now();
    const retryMs = newPairs.retryMs ?? 60_000;
    const fresh: string[] = [];
    for (const { s } of tickers)
      if (!e.lists(s) && !(now - (tried.get(s) ?? -Infinity) < retryMs) && newPairs.wanted(s)) fresh.push(s);
    if (fresh.length === 0) return;
    for (const s of fresh) tried.set(s, now);
    let configs: readonly PairConfig[];
    try {
      configs = await newPairs.rules();
    } catch (err) {
      warn(
        `proxy feed: ${fresh.join(', ')} listed upstream since the start: its rules could not be read, asked again ` +
          `in ${retryMs / 1000} s (${describeError(err)})`,
      );
      return;
    }
    for (const symbol of fresh) {
      const config = configs.find((c) => c.symbol === symbol);
      if (config?.status !== 'TRADING' || e.lists(symbol)) continue;
      try {
        e.listPair(config);
        tried.delete(symbol);
      } catch (err) {
        warn(`proxy feed: ${symbol} listed upstream since the start: its rules are not usable (${describeError(err)})`);
      }
    }
  }

  async function refresh(): Promise<void> {
    fetchedAt = clock.now();
    let tickers: WireTicker[];
    try {
      tickers = await options.upstream.marketWatchEntries();
    } catch (err) {
      warn(`proxy feed: upstream market watch failed, serving the last tickers (${describeError(err)})`);
      return;
    }
    if (engine) await listNew(engine, tickers);
    // The live exchange lists many pairs: only those the simulated exchange trades are fed.
    for (const ticker of tickers) if (engine?.lists(ticker.s)) feed(engine, ticker);
  }

  function fetchIfDue(): Promise<void> | undefined {
    if (inFlight) return inFlight;
    if (clock.now() - fetchedAt < minIntervalMs) return undefined;
    inFlight = refresh().finally(() => (inFlight = undefined));
    return inFlight;
  }

  return {
    progress,
    async start(e) {
      engine = e;
      await fetchIfDue();
    },
    beforeMarketWatch: fetchIfDue,
    async stop() {
      await inFlight;
      engine = undefined;
    },
  };
}
