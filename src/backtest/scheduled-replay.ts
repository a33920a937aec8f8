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
import type { Engine } from '../engine/engine.js';
import type { TickerInput } from '../sim/matching-engine.js';
import type { Ticker } from '../ports/venue-records.js';
import { RefreshGate, type ReplayParts, TickAccount, tickerAt } from './replay.js';
import type { SymbolInfo, TickData } from './tick-data.js';

export interface DaemonJobs {
  /** The orders poll's cron schedule (the daemon's ORDERS_POLL). */
  ordersPoll: string;
  /** The refresh's (REFRESH). */
  refresh: string;
}

const MARKET = 0;
const POLL = 1;
const REFRESH = 2;

interface Job {
  kind: number;
  schedule: string;
  cron: CronSchedule;
  due: number;
  /** A market job's symbols (the unit's slots), in the order the venue's market watch lists them. */
  slots: number[];
}

/** Steps of one tick at which the loop may stop for a promise and resume. */
const JOBS = 0;
const MOVE = 1;

const sym0 = (data: TickData, i: number): number => data.columns.sym[i] as number;

export class ScheduledReplay {
  readonly account: TickAccount;
  private i: number;
  private step = JOBS;
  private readonly gate: RefreshGate;
  private readonly jobs: Job[];
  /** Per symbol of the data, the index of its last tick replayed (-1: none yet). */
  private readonly latest: Int32Array;

  constructor(
    private readonly data: TickData,
    private readonly slot: Int32Array,
    private readonly first: number,
    private readonly p: ReplayParts,
    jobs: DaemonJobs,
    sampleMs: number,
    apiKey: string,
  ) {
    this.i = first;
    const now = p.clock.time;
    this.account = new TickAccount(p, sampleMs, apiKey);
    this.gate = new RefreshGate(p);
    this.latest = new Int32Array(slot.length).fill(-1);
    this.latest[sym0(data, first)] = first;
    const listed = p.sim.pairConfigs().map((c) => c.symbol);
    const instances = p.engine.instances();
    const job = (kind: number, schedule: string): Job => {
      const cron = new CronSchedule(schedule);
      const symbols = new Set(instances.filter((i) => i.schedule === schedule).map((i) => i.symbol));
      const slots = listed
        .filter((name) => symbols.has(name))
        .map((name) => data.symbols.findIndex((info) => info.symbol === name));
      return { kind, schedule, cron, due: cron.next(now), slots };
    };
    this.jobs = [
      ...p.engine.schedules().map((s) => job(MARKET, s)),
      job(POLL, jobs.ordersPoll),
      job(REFRESH, jobs.refresh),
    ];
  }

  /** The market as a ticker moves it (the daemon's feed gives the simulated exchange the same keys). */
  static ticker(data: TickData, i: number): TickerInput {
    const { sym, time, price, high, low, vb, vq } = data.columns;
    const t: TickerInput = {
      s: (data.symbols[sym[i] as number] as SymbolInfo).symbol,
      p: price[i] as number,
      t: time[i] as number,
    };
    const h = high[i] as number;
    const l = low[i] as number;
    const b = vb[i] as number;
    const q = vq[i] as number;
    if (h === h) t.h = h;
    if (l === l) t.l = l;
    if (b === b) t.vb = b;
    if (q === q) t.vq = q;
    return t;
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
      const t = time[i] as number;
      if (this.step === JOBS) {
        // The jobs due before this ticker, with the market as the previous one left it.
        const pending = this.fireDue(t, false);
        if (pending) return pending;
        this.step = MOVE;
      }
      this.account.sampleUpTo(t);
      clock.time = t;
      const p = price[i] as number;
      if (i !== this.first) sim.onTicker(ScheduledReplay.ticker(this.data, i));
      this.latest[sym[i] as number] = i;
      equity.prices[k] = p;
      this.account.settle(t, k, p);
    }
    // The jobs due up to the last ticker's time, after it (the daemon's clock stops there in the parity test).
    return this.fireDue(clock.time, true);
  }

  /** Fires, in time order (then the jobs' order), the jobs due before `limit` (or at it when inclusive). */
  private fireDue(limit: number, inclusive: boolean): Promise<void> | undefined {
    const jobs = this.jobs;
    for (;;) {
      let next = jobs[0] as Job;
      for (let j = 1; j < jobs.length; j++) if ((jobs[j] as Job).due < next.due) next = jobs[j] as Job;
      if (inclusive ? next.due > limit : next.due >= limit) return undefined;
      const due = next.due;
      next.due = next.cron.next(due);
      this.p.clock.time = due;
      const pending = this.fire(next);
      if (pending) return pending;
    }
  }

  /** What the daemon's market job would read: a fresh ticker per symbol, as the last tick left it. */
  private marketWatch(slots: readonly number[]): Ticker[] {
    const out: Ticker[] = [];
    for (const s of slots) {
      const i = this.latest[s] as number;
      if (i !== -1) out.push(tickerAt(this.data, this.p.symbols, i));
    }
    return out;
  }

  private fire(job: Job): Promise<void> | undefined {
    const engine: Engine = this.p.engine;
    if (job.kind === MARKET) return engine.observeCycle(this.marketWatch(job.slots), job.schedule);
    if (job.kind === POLL) return engine.pollOrders();
    return this.gate.refresh();
  }
}
