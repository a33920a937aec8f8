/**
 * The backtest's tick loop with each instance's schedule applied as the daemon applies it on paper: the
 * recorded tickers move the market at their times, and the daemon's jobs fire at the matches of their cron
 * schedules in the data's time (a market job per distinct instance schedule: `engine.marketCycle`, then the
 * orders poll, then the refresh, in that order at equal times), each with the market as the last ticker left
 * it. A ticker due at the same time as a job is in the market first. This is what the daemon does on the
 * replay clock, so the same strategy file decides at the same moments in both (the parity test holds them to
 * it); `--every-tick` keeps the older loop (replay.ts) in which every instance sees every tick.
 *
 * As in replay.ts, `run()` is synchronous until the engine hands back a promise, and is called again once it
 * settled; a job's next due time is set before it fires, so a resumed run goes on with the next job.
 */
import { CronSchedule } from '../clocks/cron-schedule.js';
import type { DaemonSchedule } from '../config/env.js';
import type { Engine } from '../engine/engine.js';
import type { Ticker } from '../ports/venue-records.js';
import { MarketEntries } from './market-entries.js';
import { RefreshGate, type ReplayParts, TickAccount, tickerAt } from './replay.js';
import type { SymbolInfo } from './tick-columns.js';
import type { TickData } from './tick-data.js';
import { valueAt } from './number-column.js';

const HOUR_MS = 3_600_000;
const MARKET = 0;
const POLL = 1;
const REFRESH = 2;

interface Job {
  kind: number;
  schedule: string;
  cron: CronSchedule;
  /** A market job's symbols (the unit's slots), in the order the venue's market watch lists them. */
  slots: number[];
  /** The slots' symbols. */
  symbols: string[];
  /** The tickers a market job hands the engine, refilled at each firing (the engine keeps none of the array). */
  watch: Ticker[];
  /** `moved` when the job last fired or was passed: equal to it, no tick moved the market since. */
  movedAt: number;
  /**
   * The price bands within which its firings on new tickers would call nothing (Engine.quietBands; two entries a
   * slot), asked when `fires` was bandAt (nothing the engine decides from has changed since), and whether any.
   */
  bands: Float64Array;
  bandAt: number;
  bandOk: boolean;
  /** Per symbol of the data, its slot's index in `slots` (-1: not one of the job's). */
  slotOf: Int32Array;
}

/** Steps of one tick at which the loop may stop for a promise and resume. */
const JOBS = 0;
const MOVE = 1;

const sym0 = (data: TickData, i: number): number => data.columns.sym[i] as number;

/** The gap between a table of the hour's matches' entries when they are evenly spaced over the hour; else 0. */
function evenStep(offsets: Float64Array | undefined): number {
  if (offsets === undefined || offsets.length === 0) return 0;
  const step = HOUR_MS / offsets.length;
  if (!Number.isInteger(step) || (offsets[0] as number) >= step) return 0;
  for (let i = 1; i < offsets.length; i++) if ((offsets[i] as number) - (offsets[i - 1] as number) !== step) return 0;
  return step;
}

/** Copies `from` into `to` (a few entries: cheaper than TypedArray.set's call). */
function copy(from: Float64Array | Int32Array, to: Float64Array | Int32Array): void {
  for (let i = 0; i < from.length; i++) to[i] = from[i] as number;
}

export class ScheduledReplay {
  readonly account: TickAccount;
  private i: number;
  private step = JOBS;
  private readonly gate: RefreshGate;
  private readonly jobs: Job[];
  /**
   * When each job is next due (epoch ms), and for a schedule that repeats every hour (all the bot's), the
   * hour of that time and its index in the schedule's table of the hour's matches: a job that fires is due
   * next at the table's next entry, worked out here in place rather than asked of the schedule (a call that
   * passes and returns a double takes two heap numbers, at every one of millions of firings).
   */
  private readonly due: Float64Array;
  private readonly dueHour: Float64Array;
  private readonly dueIndex: Int32Array;
  private readonly offsets: (Float64Array | undefined)[];
  /** Per job, the gap between its table's entries when they are evenly spaced over the hour, else 0. */
  private readonly steps: Float64Array;
  /** The three above as they were before refireUnchanged passed a stretch, to put back when it cannot. */
  private readonly saved: { due: Float64Array; hour: Float64Array; index: Int32Array };
  /**
   * [0]: the earliest due time as fireDue last left the jobs (a tick before it has no job to fire first: most
   * ticks, as a candle's extremes and close share one time); [1]: the last firing a stretch passed (skip()); [2]:
   * the time a stretch stops at (stretchStop: a job it cannot pass, or a pair list due); [3]: the
   * last firing of its market job that stretch passed. In a typed array, as a double in a field or returned would
   * take a heap number at each write.
   */
  private readonly times = new Float64Array(4).fill(-Infinity);
  /** Per symbol of the data, the index of its last tick replayed (-1: none yet). */
  private readonly latest: Int32Array;
  /**
   * Per symbol of the data, the ticker of its last tick once a market job asked for it, and that tick's index:
   * built once per tick, not per firing. A schedule every second over 15-second ticks fires 15 times per tick
   * on the same figures, and building a ticker each time was most of what a backtest allocated (its young
   * generation, hence its peak memory, and its time). Each tick still gets its own object, never rewritten,
   * so a strategy that keeps the previous ticker keeps its figures.
   */
  private readonly tickers: (Ticker | undefined)[];
  private readonly tickerOf: Int32Array;
  private readonly entries: MarketEntries;
  /** Ticks that moved the market so far. */
  private moved = 0;
  /** Jobs fired so far: the engine decides nothing between two (a market job's bands hold until the next). */
  private fires = 0;
  /**
   * Per symbol of the data, the tick whose ticker market jobs passed in a quiet band would have kept (-1: none
   * since the engine last got them): given to the engine before any job fires (catchUp), as the daemon's firings
   * would have left its market state.
   */
  private readonly kept: Int32Array;
  private behind = false;
  private readonly caught: Ticker[] = [];
  /**
   * A market job just passed in its quiet bands, the jobs it passed with it passable still: the ticks that follow
   * may move the market at once (passQuiet), with no job stepped, while nothing can change (see there).
   */
  private quiet: Job | undefined;
  /** The simulated exchange's revision when `quiet` was set: a move since that changed it ends the stretch. */
  private quietRevision = -1;

  constructor(
    private readonly data: TickData,
    private readonly slot: Int32Array,
    private readonly first: number,
    private readonly p: ReplayParts,
    jobs: DaemonSchedule,
    sampleMs: number,
  ) {
    this.i = first;
    const now = p.clock.time;
    this.account = new TickAccount(p, sampleMs);
    this.gate = new RefreshGate(p);
    this.latest = new Int32Array(slot.length).fill(-1);
    this.latest[sym0(data, first)] = first;
    this.tickers = new Array<Ticker | undefined>(slot.length).fill(undefined);
    this.tickerOf = new Int32Array(slot.length).fill(-1);
    this.kept = new Int32Array(slot.length).fill(-1);
    this.entries = new MarketEntries(data);
    const listed = p.sim.pairConfigs().map((c) => c.symbol);
    const job = (kind: number, schedule: string): Job => {
      const cron = new CronSchedule(schedule);
      const symbols = p.engine.watchedSymbols(schedule);
      const slots = listed
        .filter((name) => symbols.has(name))
        .map((name) => data.symbols.findIndex((info) => info.symbol === name));
      const names = slots.map((s) => (data.symbols[s] as SymbolInfo).symbol);
      const bands = new Float64Array(2 * slots.length);
      const slotOf = new Int32Array(slot.length).fill(-1);
      slots.forEach((s, j) => (slotOf[s] = j));
      return {
        kind,
        schedule,
        cron,
        slots,
        symbols: names,
        watch: [],
        movedAt: -1,
        bands,
        bandAt: -1,
        bandOk: false,
        slotOf,
      };
    };
    this.jobs = [
      ...p.engine.schedules().map((s) => job(MARKET, s)),
      job(POLL, jobs.ordersPoll),
      job(REFRESH, jobs.refresh),
    ];
    this.due = Float64Array.from(this.jobs, (j) => j.cron.next(now));
    this.dueHour = this.due.map((d) => Math.floor(d / HOUR_MS) * HOUR_MS);
    this.offsets = this.jobs.map((j) => (j.cron.hourly ? Float64Array.from(j.cron.hourly) : undefined));
    this.steps = Float64Array.from(this.offsets, (o) => evenStep(o));
    this.dueIndex = Int32Array.from(
      this.jobs,
      (_, j) => this.offsets[j]?.indexOf((this.due[j] as number) - (this.dueHour[j] as number)) ?? -1,
    );
    this.saved = {
      due: new Float64Array(this.jobs.length),
      hour: new Float64Array(this.jobs.length),
      index: new Int32Array(this.jobs.length),
    };
  }

  /** Replays ticks until the end (undefined) or until a promise must settle: call again once it has. */
  run(): Promise<void> | undefined {
    const { sym, time, price } = this.data.columns;
    const { clock, sim, equity } = this.p;
    const n = this.data.length;
    for (; this.i < n; this.i++, this.step = JOBS) {
      const i = this.i;
      const k = this.slot[sym[i] as number] as number;
      if (k === -1) continue;
      const t = valueAt(time, i);
      if (this.step === JOBS) {
        // The jobs due before this ticker, with the market as the previous one left it.
        if ((this.times[0] as number) < t) {
          const pending = this.fireDue(t, false);
          if (pending) return pending;
        }
        this.step = MOVE;
      }
      this.account.sampleUpTo(t);
      clock.time = t;
      const p = valueAt(price, i);
      if (i !== this.first) this.entries.move(sim, i, this.p.volume);
      this.latest[sym[i] as number] = i;
      this.moved++;
      equity.prices[k] = p;
      this.account.settle(t, k);
      if (this.quiet !== undefined) this.passQuiet(this.quiet);
    }
    // The jobs due up to the last ticker's time, after it (the daemon's clock stops there in the parity test).
    const pending = this.fireDue(clock.time, true);
    if (pending !== undefined) return pending;
    if (this.behind) this.catchUp();
    this.entries.flush(sim);
    return undefined;
  }

  /** Fires, in time order (then the jobs' order), the jobs due before `limit` (or at it when inclusive). */
  private fireDue(limit: number, inclusive: boolean): Promise<void> | undefined {
    const due = this.due;
    for (;;) {
      let next = 0;
      for (let j = 1; j < due.length; j++) if ((due[j] as number) < (due[next] as number)) next = j;
      const at = due[next] as number;
      if (inclusive ? at > limit : at >= limit) {
        this.times[0] = at;
        return undefined;
      }
      const job = this.jobs[next] as Job;
      if (job.kind === MARKET) {
        // Its firings on the market it last saw, or on tickers whose prices stay in its quiet bands, call nothing.
        const moved = job.movedAt !== this.moved;
        const inBands = this.inBands(job);
        if ((!moved || inBands) && this.refireUnchanged(next, limit, inclusive)) {
          if (moved) this.keep(job);
          if (inBands) {
            this.quiet = job;
            this.quietRevision = this.p.sim.revision;
          }
          continue;
        }
      } else if (job.kind === POLL ? this.p.engine.pollNoop() : this.gate.idle()) {
        // A firing that would do nothing at all (the engine's state untouched) is passed.
        this.advance(next, job);
        continue;
      }
      this.advance(next, job);
      this.p.clock.time = at;
      job.movedAt = this.moved;
      const pending = this.fire(job);
      if (pending) return pending;
    }
  }

  /**
   * Market job j, due again with no tick since it last fired: its firings up to the next tick (or the limit) all
   * find the market it last saw. The other jobs due meanwhile are passed with them when a firing of theirs would
   * do nothing (an orders poll with nothing to learn, a refresh with nothing moved: Engine.pollIdle,
   * RefreshGate.idle; passing them changes nothing, so neither can change in the stretch), so a quiet stretch
   * between two ticks is one step; another market job, or a poll or refresh with work, ends it (the first such
   * firing in time, then the jobs' order). When the engine says none of j's firings would do anything but count
   * a tick (Engine.mayRefire: its strategies would not be called), they are counted at once and passed;
   * true. Otherwise every job's times are left as they were (false): the jobs fire one by one. Each job skips
   * its firings of the stretch at once (skip()), not one by one: a schedule every second over a minute's
   * candle would otherwise step 45 firings of each job at every tick.
   */
  private refireUnchanged(j: number, limit: number, inclusive: boolean): boolean {
    const { due, dueHour, dueIndex, saved, jobs } = this;
    if (!this.p.engine.mayRefire((jobs[j] as Job).schedule)) return false;
    const n = due.length;
    const pollIdle = this.p.engine.pollIdle();
    const refreshIdle = this.gate.idle();
    const stopJob = this.stretchStop(j, pollIdle, refreshIdle);
    const stopAt = this.times[2] as number;
    copy(due, saved.due);
    copy(dueHour, saved.hour);
    copy(dueIndex, saved.index);
    let firings = 0;
    let last = -Infinity;
    for (let k = 0; k < n; k++) {
      const kind = (jobs[k] as Job).kind;
      if (k !== j && !(kind === POLL ? pollIdle : kind === REFRESH && refreshIdle)) continue;
      // Job k's firings at times x with x < bound, or x === bound when atBound, are in the stretch.
      const bound = limit < stopAt ? limit : stopAt;
      const atBound = (limit > stopAt || inclusive) && (limit < stopAt || k < stopJob);
      const passed = this.skip(k, bound, atBound);
      if (passed === 0) continue;
      if (k === j) {
        firings = passed;
        this.times[3] = this.times[1] as number;
      }
      if ((this.times[1] as number) > last) last = this.times[1] as number;
    }
    if (firings > 0 && this.p.engine.refireUnchanged((jobs[j] as Job).schedule, firings, last)) {
      this.p.clock.time = last;
      return true;
    }
    copy(saved.due, due);
    copy(saved.hour, dueHour);
    copy(saved.index, dueIndex);
    return false;
  }

  /**
   * The firing that ends a stretch of market job j's firings, in times[2], and its job (returned; -1 for none): the
   * earliest of a job that cannot be passed now (another market job, a poll or refresh with work), the first of
   * them at a tie; none at the time a pair list is due (a firing then works it out: Engine.refireUnchanged).
   */
  private stretchStop(j: number, pollIdle: boolean, refreshIdle: boolean): number {
    const { due, jobs } = this;
    let stopAt = this.p.engine.pairListsDueAt();
    let stopJob = -1;
    for (let k = 0; k < due.length; k++) {
      if (k === j) continue;
      const kind = (jobs[k] as Job).kind;
      const passable = kind === POLL ? pollIdle : kind === REFRESH && refreshIdle;
      if (!passable && (due[k] as number) < stopAt) {
        stopAt = due[k] as number;
        stopJob = k;
      }
    }
    this.times[2] = stopAt;
    return stopJob;
  }

  /**
   * Passes job k's firings at times before `bound` (and at it when `atBound`): returns how many, the last one's
   * time in times[1]. A schedule with a table of the hour's matches moves to the first firing left by a search
   * of the table; another steps.
   */
  private skip(k: number, bound: number, atBound: boolean): number {
    const { due, dueHour, dueIndex } = this;
    const first = due[k] as number;
    if (!(first < bound || (atBound && first === bound))) return 0;
    const offsets = this.offsets[k];
    const index = dueIndex[k] as number;
    const job = this.jobs[k] as Job;
    if (offsets === undefined || index < 0) {
      let passed = 0;
      for (let at = first; at < bound || (atBound && at === bound); at = due[k] as number) {
        this.times[1] = at;
        this.advance(k, job);
        passed++;
      }
      return passed;
    }
    const count = offsets.length;
    let hour = Math.floor(bound / HOUR_MS) * HOUR_MS;
    const offset = bound - hour;
    // The first entry of bound's hour not passed: after the bound, or at it when the bound itself is not passed.
    let lo = 0;
    const step = this.steps[k] as number;
    if (step > 0) {
      // Entries evenly spaced (*/2, */5, a minute's second...): the index (offset - first) / step, rounded.
      const x = (offset - (offsets[0] as number)) / step;
      lo = atBound ? (x < 0 ? 0 : Math.floor(x) + 1) : x <= 0 ? 0 : Math.ceil(x);
      if (lo > count) lo = count;
    } else {
      let hi = count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const o = offsets[mid] as number;
        if (o < offset || (atBound && o === offset)) lo = mid + 1;
        else hi = mid;
      }
    }
    if (lo === count) {
      lo = 0;
      hour += HOUR_MS;
    }
    this.times[1] = lo === 0 ? hour - HOUR_MS + (offsets[count - 1] as number) : hour + (offsets[lo - 1] as number);
    const passed = ((hour - (dueHour[k] as number)) / HOUR_MS) * count + lo - index;
    dueHour[k] = hour;
    dueIndex[k] = lo;
    due[k] = hour + (offsets[lo] as number);
    return passed;
  }

  /**
   * The ticks after the current one while market job `job`'s firings would still call nothing and the other jobs
   * stay passable: each moves the run's prices and equity at once (sampled and charted as in run()), with no job
   * stepped, until one that a firing must see (a price out of the job's quiet bands, a move that reaches an order:
   * MarketEntries.moveInStretch, against the simulated exchange's bounds read when the stretch starts), or the time
   * the stretch stops at (a job that cannot be passed, a pair list due). Nothing the engine decides from can change
   * meanwhile: it runs no job, and the simulated exchange would move only its last prices, which it is given at the
   * stretch's end (each pair's last tick in it). The next tick then goes through run(), whose refireUnchanged passes
   * the whole stretch's firings at once.
   */
  private passQuiet(job: Job): void {
    this.quiet = undefined;
    const { sym, time, price } = this.data.columns;
    const { clock, sim, equity } = this.p;
    const { slotOf, bands } = job;
    // The current tick, which run() moved after the firings were passed, must have left all as they saw it too.
    let i = this.i;
    const s0 = sym[i] as number;
    const j0 = slotOf[s0] as number;
    const p0 = valueAt(price, i);
    if (sim.revision !== this.quietRevision) return;
    if (j0 !== -1 && !((bands[2 * j0] as number) < p0 && p0 < (bands[2 * j0 + 1] as number))) return;
    // Worked out now, from the jobs as they stand after the current tick's firings: another market job passed
    // after this one (its market unchanged) is due again, and its next firing must see the ticks before it.
    this.stretchStop(this.jobs.indexOf(job), this.p.engine.pollIdle(), this.gate.idle());
    const stopAt = this.times[2] as number;
    const n = this.data.length;
    const { entries, latest, slot, account } = this;
    let t = clock.time;
    const from = i;
    entries.startStretch(sim);
    for (i++; i < n; i++) {
      const s = sym[i] as number;
      const k = slot[s] as number;
      if (k === -1) continue;
      const at = valueAt(time, i);
      if (at > stopAt) break;
      const p = valueAt(price, i);
      const j = slotOf[s] as number;
      if (j !== -1 && !((bands[2 * j] as number) < p && p < (bands[2 * j + 1] as number))) break;
      if (!entries.moveInStretch(s, i, p, at)) break;
      t = at;
      account.sampleUpTo(t);
      latest[s] = i;
      this.moved++;
      equity.prices[k] = p;
      account.settle(t, k);
    }
    entries.endStretch(sim, from);
    // Nothing reads the clock inside the stretch: it is where its last tick left it.
    clock.time = t;
    this.i = i - 1;
  }

  /** Sets job j's next due time after its current one (which is about to fire). */
  private advance(j: number, job: Job): void {
    const offsets = this.offsets[j];
    const index = this.dueIndex[j] as number;
    if (offsets === undefined || index < 0) {
      this.due[j] = job.cron.next(this.due[j] as number);
      return;
    }
    let k = index + 1;
    if (k === offsets.length) {
      k = 0;
      this.dueHour[j] = (this.dueHour[j] as number) + HOUR_MS;
    }
    this.dueIndex[j] = k;
    this.due[j] = (this.dueHour[j] as number) + (offsets[k] as number);
  }

  /**
   * Market job `job`, due with ticks since it last fired: whether every one of its symbols' last prices lies in the
   * quiet band the engine gives for it (Engine.quietBands, asked again only after a job fired).
   */
  private inBands(job: Job): boolean {
    if (job.bandAt !== this.fires) {
      job.bandAt = this.fires;
      job.bandOk = this.p.engine.quietBands(job.schedule, job.symbols, job.bands);
    }
    if (!job.bandOk) return false;
    const { slots, bands } = job;
    const price = this.data.columns.price;
    for (let j = 0; j < slots.length; j++) {
      const i = this.latest[slots[j] as number] as number;
      if (i === -1) continue;
      const p = valueAt(price, i);
      if (!((bands[2 * j] as number) < p && p < (bands[2 * j + 1] as number))) return false;
    }
    return true;
  }

  /**
   * Market job `job`'s firings were passed in its quiet bands: the tickers they would have kept, for catchUp. The
   * last of them saw each symbol's last tick at or before its time: after passQuiet, ticks later than it may have
   * moved the market already (a candle's extremes and close share one time, the next firing's).
   */
  private keep(job: Job): void {
    const { slots } = job;
    const { sym, time } = this.data.columns;
    const last = this.times[3] as number;
    for (let j = 0; j < slots.length; j++) {
      const s = slots[j] as number;
      let i = this.latest[s] as number;
      while (i !== -1 && valueAt(time, i) > last) {
        do i--;
        while (i >= this.first && sym[i] !== s);
        if (i < this.first) i = -1;
      }
      if (i !== -1) this.kept[s] = i;
    }
    job.movedAt = this.moved;
    this.behind = true;
  }

  /** Gives the engine the tickers that firings passed in their quiet bands would have kept. */
  private catchUp(): void {
    this.behind = false;
    const { kept, caught } = this;
    caught.length = 0;
    for (let s = 0; s < kept.length; s++) {
      const i = kept[s] as number;
      if (i === -1) continue;
      kept[s] = -1;
      caught.push(this.tickerFor(s, i));
    }
    this.p.engine.cacheTickers(caught);
  }

  /** The ticker of tick i of symbol s: one object per tick, however many firings read it. */
  private tickerFor(s: number, i: number): Ticker {
    if (this.tickerOf[s] !== i) {
      this.tickers[s] = tickerAt(this.data, this.p.symbols, i, this.p.volume);
      this.tickerOf[s] = i;
    }
    return this.tickers[s] as Ticker;
  }

  /** What the daemon's market job would read: a ticker per symbol, as the last tick left it. */
  private marketWatch(job: Job): Ticker[] {
    const { slots, watch } = job;
    let n = 0;
    for (let j = 0; j < slots.length; j++) {
      const s = slots[j] as number;
      const i = this.latest[s] as number;
      if (i !== -1) watch[n++] = this.tickerFor(s, i);
    }
    if (watch.length !== n) watch.length = n;
    return watch;
  }

  private fire(job: Job): Promise<void> | undefined {
    const engine: Engine = this.p.engine;
    this.fires++;
    this.quiet = undefined;
    // A poll that has nothing to learn reads no market: the catch-up waits for a job that may.
    if (this.behind && !(job.kind === POLL && engine.pollIdle())) this.catchUp();
    this.entries.flush(this.p.sim);
    if (job.kind === MARKET) return engine.observeCycle(this.marketWatch(job), job.schedule);
    if (job.kind === POLL) return engine.pollOrders();
    return this.gate.refresh();
  }
}
