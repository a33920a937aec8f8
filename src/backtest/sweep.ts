/**
 * Parameter sweeps: every combination of the --sweep values (a grid, the last key varying fastest), run on
 * worker threads that share the parsed recording (its columns live on SharedArrayBuffers: nothing is parsed
 * or copied per worker). Workers take the next combination when they finish one, so a slow combination does
 * not hold the others up; the ranking does not depend on which worker ran what.
 *
 * Ranking: by the objective (--rank-by, Sharpe by default), highest first, a missing value below any; then by
 * total return; then by combination order. A combination in which an instance ended early (a hook threw, it
 * was paused or refused) has failed, and one with fewer closed trades than --min-trades is too thin to judge:
 * both are listed after the ranked ones, without a rank, and are never the best.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { BotError } from '../errors.js';
import { workerEntry } from '../ops/worker-entry.js';
import { D } from '../market/decimal.js';
import type { JobSettings } from './job-settings.js';
import { type LuckRecord, luckOf } from './luck/luck.js';
import type { ConfigSource } from './strategy-configs.js';
import { overrideValue } from './strategy-configs.js';
import type { DataGaps, Metrics } from './summary.js';
import type { TickData } from './tick-data.js';

export interface SweepAxis {
  key: string;
  values: unknown[];
}

/**
 * `key=a,b,c` typed against every source (the same key applies to each strategy file of the run); `flag` names
 * the flag in errors (--set takes the same form with one value).
 */
export function parseSweep(spec: string, sources: readonly ConfigSource[], flag = '--sweep'): SweepAxis {
  const eq = spec.indexOf('=');
  const key = eq > 0 ? spec.slice(0, eq).trim() : '';
  const texts =
    eq > 0
      ? spec
          .slice(eq + 1)
          .split(',')
          .map((v) => v.trim())
      : [];
  if (key === '' || texts.length === 0 || texts.some((t) => t === ''))
    throw new BotError('E_USAGE', `${flag}: expected key=value1,value2,…, found '${spec}'`);
  // Typed against each file: a key must mean the same type in every strategy file it applies to.
  const typed = texts.map((t) => overrideValue(sources[0]?.raw ?? {}, key, t, flag));
  for (const source of sources.slice(1)) {
    const other = texts.map((t) => overrideValue(source.raw, key, t, flag));
    if (JSON.stringify(other) !== JSON.stringify(typed))
      throw new BotError(
        'E_USAGE',
        `${flag} ${key}: ${sources[0]!.file} and ${source.file} give it different types; use one file per run`,
      );
  }
  return { key, values: typed };
}

/** Every combination of the axes, as overrides by key; the last axis varies fastest. */
export function sweepGrid(axes: readonly SweepAxis[]): Record<string, unknown>[] {
  let combos: Record<string, unknown>[] = [{}];
  for (const axis of axes) combos = combos.flatMap((c) => axis.values.map((v) => ({ ...c, [axis.key]: v })));
  return combos;
}

export const RANK_BY = ['return', 'sharpe', 'sortino', 'calmar', 'profit-factor', 'expectancy'] as const;
export type RankBy = (typeof RANK_BY)[number];

/** The metric each objective reads. */
export const OBJECTIVE_METRIC = {
  return: 'totalReturnPct',
  sharpe: 'sharpe',
  sortino: 'sortino',
  calmar: 'calmar',
  'profit-factor': 'profitFactor',
  expectancy: 'expectancy',
} as const satisfies Record<RankBy, keyof Metrics>;

export interface Ranking {
  rankBy: RankBy;
  /** Combinations with fewer closed trades are listed, not ranked. */
  minTrades: number;
}

export const DEFAULT_RANKING: Ranking = { rankBy: 'sharpe', minTrades: 0 };

/** The objective's value in a run's metrics (null: undefined for this run, e.g. a Sharpe without deviation). */
export function objective(metrics: Metrics, rankBy: RankBy): string | null {
  return metrics[OBJECTIVE_METRIC[rankBy]];
}

/** One line saying how a sweep ranks, for its files and page. */
export function rankingText(ranking: Ranking): string {
  const min = ranking.minTrades > 0 ? `; fewer than ${ranking.minTrades} closed trades: not ranked` : '';
  return `by ${ranking.rankBy}, then total return, then grid order; failed combinations (an instance ended early) are not ranked${min}`;
}

export type SweepStatus = 'ranked' | 'failed' | 'too few trades';

export interface SweepResult {
  /** 1 = best; null when not ranked (see status). */
  rank: number | null;
  status: SweepStatus;
  /** Position in the grid (0-based). */
  index: number;
  overrides: Record<string, unknown>;
  metrics: Metrics;
  /** Instances of the combination that did not run to the end (see endedEarly); empty when all did. */
  ended: string[];
  /** Its equity samples as chart points (equityCurve). */
  equity: [number, number][];
  /** The returns between its equity samples, unrounded (what its Sharpe and the luck figures are computed from). */
  returns: number[];
  /** The gaps in the data it replayed (the same for every combination on the same data and window). */
  dataGaps: DataGaps;
}

export interface SweepJob {
  sources: ConfigSource[];
  data: TickData;
  settings: JobSettings;
  combos: Record<string, unknown>[];
  /** How to rank the results (default: DEFAULT_RANKING). */
  ranking?: Ranking;
  /** Run every combination on the ticks with from <= time < to only (holdout and walk-forward parts). */
  window?: { from: number; to: number };
}

export type WorkerRequest =
  | { index: number; overrides: Record<string, unknown>; progress: boolean; window?: { from: number; to: number } }
  /** The recording, when it was not in workerData (a SweepPool starts its workers before the data is read). */
  | { data: TickData };
export type WorkerReply =
  | {
      index: number;
      metrics: Metrics;
      ended: string[];
      equity: [number, number][];
      returns: number[];
      dataGaps: DataGaps;
    }
  | { index: number; error: string }
  /** Ticks of the combination replayed so far, of its total. */
  | { index: number; done: number; total: number };

/** Where a sweep stands: combinations finished, and ticks replayed over all of them (finished or running). */
export interface SweepProgress {
  runs: number;
  runsTotal: number;
  ticks: number;
  /** 0 until the first combination reported its size (every combination replays the same ticks). */
  ticksTotal: number;
  /** On a queue (queue/coordinator.ts), which counts combinations only: those running now, and those failed. */
  running?: number;
  failed?: number;
}

/** A combination's outcome before ranking. */
export type SweepRun = Omit<SweepResult, 'rank' | 'status'>;

/**
 * Runs a sweep's combinations elsewhere than on this process's threads (the Redis queue, queue/coordinator.ts),
 * each with the same one-combination code (job.ts through sweep-worker.ts); runSweep ranks what it returns.
 */
export interface SweepExecutor {
  run(job: SweepJob, onProgress?: (progress: SweepProgress) => void): Promise<SweepRun[]>;
}

/** Where a sweep runs: this many local worker threads, or an executor. */
export type SweepWorkers = number | SweepExecutor;

function byValue(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return new D(b).cmp(a);
}

/** Ranked first (best first), then failed, then too few trades, each in grid order. */
export function rank(results: SweepRun[], ranking: Ranking = DEFAULT_RANKING): SweepResult[] {
  const status = (r: SweepRun): SweepStatus =>
    r.ended.length > 0 ? 'failed' : r.metrics.roundTrips < ranking.minTrades ? 'too few trades' : 'ranked';
  const all = results.map((r) => ({ ...r, rank: null as number | null, status: status(r) }));
  const ranked = all
    .filter((r) => r.status === 'ranked')
    .sort(
      (a, b) =>
        byValue(objective(a.metrics, ranking.rankBy), objective(b.metrics, ranking.rankBy)) ||
        byValue(a.metrics.totalReturnPct, b.metrics.totalReturnPct) ||
        a.index - b.index,
    );
  ranked.forEach((r, i) => (r.rank = i + 1));
  const rest = (s: SweepStatus) => all.filter((r) => r.status === s).sort((a, b) => a.index - b.index);
  return [...ranked, ...rest('failed'), ...rest('too few trades')];
}

/** The luck figures of a sweep's best among every combination that ran (luck/luck.ts). */
export function sweepLuck(results: readonly SweepResult[], sampleMs: number): LuckRecord | null {
  const best = results.findIndex((r) => r.rank === 1);
  return luckOf(results, best < 0 ? undefined : best, sampleMs);
}

/**
 * A thread running sweep-worker's protocol (a local pool's or `bot worker`'s), with V8's default young
 * generation: bin/bot.js caps the main thread's for a backtest's peak RSS (README), and the flag, the process's,
 * is read by every isolate made later; capped, a sweep's replays took about 8 % more CPU. 0 is V8's default.
 */
export function startSweepThread(workerData: unknown): Worker {
  setFlagsFromString('--max-semi-space-size=0');
  return new Worker(workerEntry(import.meta.url, 'sweep-worker'), { workerData });
}

export function defaultWorkers(): number {
  return availableParallelism();
}

/**
 * A sweep's threads: `asked` (--workers N; every core when not given), at most the machine's cores (a thread
 * more than the cores only adds its start-up and its compiler's warm-up: nothing runs sooner) and at most the
 * combinations. `capped` says the cores cut what was asked.
 */
export function sweepThreads(
  asked: number | undefined,
  combinations: number,
  cores = availableParallelism(),
): { threads: number; capped: boolean } {
  const wanted = asked ?? cores;
  return { threads: Math.max(1, Math.min(wanted, cores, combinations)), capped: wanted > cores };
}

/** What a run of the pool tracks: its job, results, and which combination each worker holds. */
interface PoolRun {
  job: SweepJob;
  onProgress?: (progress: SweepProgress) => void;
  results: SweepRun[];
  /** Ticks replayed by the combinations still running, by index; and each combination's tick count. */
  running: Map<number, number>;
  perRun: number;
  next: number;
  /** Workers this run still waits for (they stop being counted once they are given nothing more). */
  busy: Set<Worker>;
  resolve: (results: SweepRun[]) => void;
  reject: (err: Error) => void;
}

/**
 * The sweep's worker threads. They start at once and load the code and the strategy modules while the main
 * thread reads the data (setData hands them its columns: shared memory, nothing copied), and they serve every
 * run of a sweep (a holdout's two parts, each walk-forward window) without starting again. Workers take the
 * next combination when they finish one; a worker that dies or fails fails the run, naming the combination.
 */
export class SweepPool implements SweepExecutor {
  private readonly threads: Worker[] = [];
  private readonly alive = new Set<Worker>();
  /** The combination each worker is running, and the one it finished before (for naming a failure). */
  private readonly current = new Map<Worker, number>();
  private readonly finished = new Map<Worker, number>();
  private active: PoolRun | undefined;
  /** Set once a worker died or failed: the pool runs nothing more. */
  private broken: Error | undefined;
  private hasData = false;

  constructor(size: number, sources: readonly ConfigSource[], settings: JobSettings) {
    for (let i = 0; i < Math.max(1, size); i++) {
      const w = startSweepThread({ sources, settings });
      this.threads.push(w);
      this.alive.add(w);
      w.on('message', (reply: WorkerReply) => this.onReply(w, reply));
      w.on('error', (err) => this.fail(w, `a sweep worker failed: ${err.message}`, err));
      w.on('exit', (code) => {
        this.alive.delete(w);
        if (code !== 0 || this.current.has(w) || this.active?.busy.has(w))
          this.fail(w, `a sweep worker exited (code ${code})`);
      });
    }
  }

  get size(): number {
    return this.threads.length;
  }

  /** The recording every run replays (windows of it, per job). */
  setData(data: TickData): void {
    for (const w of this.alive) w.postMessage({ data } satisfies WorkerRequest);
    this.hasData = true;
  }

  /** Runs every combination of the job on the pool's workers (up to one per combination); unranked. */
  async run(job: SweepJob, onProgress?: (progress: SweepProgress) => void): Promise<SweepRun[]> {
    if (this.active) throw new BotError('E_SWEEP', 'the sweep pool runs one job at a time');
    if (this.broken) throw this.broken;
    if (!this.hasData) this.setData(job.data);
    const total = job.combos.length;
    const results = await new Promise<SweepRun[]>((resolve, reject) => {
      const run: PoolRun = {
        job,
        onProgress,
        results: [],
        running: new Map(),
        perRun: 0,
        next: 0,
        busy: new Set(),
        resolve,
        reject,
      };
      this.active = run;
      const workers = [...this.alive].slice(0, Math.max(1, Math.min(this.size, total)));
      if (workers.length === 0) reject(new BotError('E_SWEEP', 'no sweep worker is left'));
      for (const w of workers) {
        run.busy.add(w);
        this.feed(w);
      }
    }).finally(() => (this.active = undefined));
    if (results.length !== total)
      throw new BotError('E_SWEEP', `sweep finished ${results.length} of ${total} combinations`);
    return results;
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((w) => w.terminate()));
  }

  private combo(index: number | undefined): string {
    return JSON.stringify(this.active?.job.combos[index ?? -1]);
  }

  private named(w: Worker, what: string): string {
    const [now, before] = [this.current.get(w), this.finished.get(w)];
    const after = before === undefined ? '' : `after combination ${this.combo(before)}`;
    if (now === undefined) return after === '' ? what : `${what} ${after}`;
    return `${what} while running combination ${this.combo(now)}${after === '' ? '' : ` (${after})`}`;
  }

  private fail(w: Worker, what: string, cause?: Error): void {
    const err = new BotError('E_SWEEP', this.named(w, what), cause ? { cause } : undefined);
    this.broken ??= err;
    this.active?.reject(err);
  }

  private report(run: PoolRun): void {
    if (run.onProgress === undefined) return;
    let ticks = run.results.length * run.perRun;
    for (const done of run.running.values()) ticks += done;
    const total = run.job.combos.length;
    run.onProgress({ runs: run.results.length, runsTotal: total, ticks, ticksTotal: run.perRun * total });
  }

  private feed(w: Worker): void {
    const run = this.active;
    if (!run) return;
    const done = this.current.get(w);
    if (done !== undefined) this.finished.set(w, done);
    this.current.delete(w);
    if (run.next >= run.job.combos.length) {
      run.busy.delete(w);
      if (run.busy.size === 0) run.resolve(run.results);
      return;
    }
    const index = run.next++;
    this.current.set(w, index);
    w.postMessage({
      index,
      overrides: run.job.combos[index] as Record<string, unknown>,
      progress: run.onProgress !== undefined,
      window: run.job.window,
    } satisfies WorkerRequest);
  }

  private onReply(w: Worker, reply: WorkerReply): void {
    const run = this.active;
    if (!run) return;
    if ('done' in reply) {
      run.perRun = reply.total;
      run.running.set(reply.index, reply.done);
      this.report(run);
      return;
    }
    if ('error' in reply) {
      run.reject(new BotError('E_SWEEP', `combination ${JSON.stringify(run.job.combos[reply.index])}: ${reply.error}`));
      return;
    }
    run.results.push({
      index: reply.index,
      overrides: run.job.combos[reply.index] as Record<string, unknown>,
      metrics: reply.metrics,
      ended: reply.ended,
      equity: reply.equity,
      returns: reply.returns,
      dataGaps: reply.dataGaps,
    });
    run.running.delete(reply.index);
    this.report(run);
    this.feed(w);
  }
}

/**
 * Runs every combination on `workers` threads (or the executor given instead: a SweepPool already started, the
 * queue); `onProgress`, when given, as the workers replay (every 65,536 ticks of each) and after each
 * combination. Rejects on the first failure.
 */
export async function runSweep(
  job: SweepJob,
  workers: SweepWorkers,
  onProgress?: (progress: SweepProgress) => void,
): Promise<SweepResult[]> {
  if (typeof workers !== 'number') return rank(await workers.run(job, onProgress), job.ranking);
  const pool = new SweepPool(Math.min(workers, job.combos.length), job.sources, job.settings);
  try {
    pool.setData(job.data);
    return rank(await pool.run(job, onProgress), job.ranking);
  } finally {
    await pool.close();
  }
}
