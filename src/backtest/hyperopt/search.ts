/**
 * A hyperopt's search: trials proposed by a sampler in batches of a fixed size (--batch, default 8), each batch
 * run on the sweep's executors (the local worker threads or the Redis queue), its results told to the sampler
 * before the next batch is proposed.
 *
 * Byte-identical for a seed with any number of workers: batch b's points are a function of the trials of the
 * batches before it (their values and losses, in trial order) and of its own random stream, the seed's
 * xoroshiro128+ stream jumped b + 1 times (2^64 draws apart), never of which worker finished first. The batch
 * size is the trade: a larger one keeps more workers busy, and learns from the results less often.
 *
 * Resumable: each trial is appended to trials.jsonl (with its equity and returns) once its batch is done; a
 * search given those trials proposes every batch again (the same points: it checks), runs only the trials
 * missing, and ends where an uninterrupted run ends. A longer --epochs continues a finished search the same way.
 */
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { BotError, ConfigError } from '../../errors.js';
import type { JobSettings } from '../job-settings.js';
import { type ConfigSource, instancesOf } from '../strategy-configs.js';
import type { DataGaps, Metrics } from '../summary.js';
import type { SweepExecutor, SweepProgress } from '../sweep.js';
import type { TickData } from '../tick-data.js';
import type { LossFunction, LossName } from './loss.js';
import { RandomSampler, type Sampler, type SamplerName, TooTightError } from './sampler.js';
import { decodePoint, encodeValue, feasible, type Space } from './space.js';
import { TpeSampler } from './tpe.js';

export interface HyperoptSettings {
  space: Space;
  sampler: SamplerName;
  epochs: number;
  batch: number;
  seed: number;
  loss: LossName;
  /** Trials with fewer closed trades are listed, not ranked. */
  minTrades: number;
}

export const DEFAULT_BATCH = 8;

export type TrialStatus = 'ranked' | 'failed' | 'too few trades' | 'refused';

export interface Trial {
  /** 0-based, in the order proposed. */
  trial: number;
  batch: number;
  /** The space's keys and the values tried. */
  values: Record<string, unknown>;
  status: TrialStatus;
  /** Lower is better; null: undefined for this trial, or not ranked. */
  loss: number | null;
  /** Null when refused (never run). */
  metrics: Metrics | null;
  ended: string[];
  /** Why the strategy file refused the values (status refused). */
  problem: string | null;
  equity: [number, number][];
  returns: number[];
  dataGaps: DataGaps | null;
}

export interface SearchJob {
  sources: ConfigSource[];
  data: TickData;
  settings: JobSettings;
  /** The --set values, applied to every trial. */
  fixed: Readonly<Record<string, unknown>>;
  hyperopt: HyperoptSettings;
  loss: LossFunction;
  /** Run every trial on the ticks with from <= time < to only (a holdout's or a walk-forward's part). */
  window?: { from: number; to: number };
}

export interface SearchProgress {
  trials: number;
  epochs: number;
  /** The best ranked trial so far. */
  best: Trial | undefined;
  /** Inside the batch running: its runs done, and ticks replayed of all its runs (threads only). */
  batch: SweepProgress | undefined;
}

/** Where a search's finished trials are kept: loaded when it starts, appended batch by batch. */
export interface TrialLog {
  done: readonly Trial[];
  append(trials: readonly Trial[]): Promise<void>;
}

/**
 * A log in a file (trials.jsonl), one trial a line. Resumed: the trials it holds (a last line cut by a kill is
 * dropped, and the file rewritten without it); otherwise it starts empty.
 */
export async function fileTrialLog(file: string, resume: boolean): Promise<TrialLog> {
  const text = resume ? await readFile(file, 'utf8').catch(() => '') : '';
  const done: Trial[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      done.push(JSON.parse(line) as Trial);
    } catch {
      break;
    }
  }
  await writeFile(`${file}.tmp`, done.map((t) => `${JSON.stringify(t)}\n`).join(''));
  await rename(`${file}.tmp`, file);
  return {
    done,
    append: async (trials) => appendFile(file, trials.map((t) => `${JSON.stringify(t)}\n`).join('')),
  };
}

export function samplerOf(name: SamplerName, space: Space): Sampler {
  return name === 'tpe' ? new TpeSampler(space.dimensions) : new RandomSampler(space.dimensions);
}

/** Best first: ranked by loss (a null loss after every defined one), then failed, too few trades, refused. */
export function rankTrials(trials: readonly Trial[]): (Trial & { rank: number | null })[] {
  const ranked = trials
    .filter((t) => t.status === 'ranked')
    .sort((a, b) => (a.loss ?? Infinity) - (b.loss ?? Infinity) || a.trial - b.trial)
    .map((t, i) => ({ ...t, rank: i + 1 }));
  const rest = (s: TrialStatus) => trials.filter((t) => t.status === s).map((t) => ({ ...t, rank: null }));
  return [...ranked, ...rest('failed'), ...rest('too few trades'), ...rest('refused')];
}

/** The loss the sampler learns from: a trial that is not ranked counts as the worst. */
function learnt(t: Trial): number | null {
  return t.status === 'ranked' ? t.loss : null;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Runs (or, from `log`, takes up) the search; every trial, in trial order. */
export async function runSearch(
  job: SearchJob,
  executor: SweepExecutor,
  log: TrialLog,
  onProgress?: (p: SearchProgress) => void,
): Promise<Trial[]> {
  const { space, epochs, batch, seed, minTrades } = job.hyperopt;
  const sampler = samplerOf(job.hyperopt.sampler, space);
  const stream = xoroshiro128plus(seed);
  const known = new Map(log.done.map((t) => [t.trial, t]));
  const trials: Trial[] = [];
  const raw = job.sources[0]?.raw ?? {};
  let best: Trial | undefined;
  const better = (t: Trial) =>
    t.status === 'ranked' &&
    t.loss !== null &&
    (best === undefined || best.loss === null || t.loss < best.loss || (t.loss === best.loss && t.trial < best.trial));
  for (let b = 0; b * batch < epochs; b++) {
    stream.jump();
    const observations = trials.map((t) => ({
      point: space.dimensions.map((d) => encodeValue(d, t.values[d.key])),
      loss: learnt(t),
    }));
    let points: number[][];
    try {
      points = sampler.ask(observations, batch, stream.clone(), (p) =>
        feasible(space, decodePoint(space, p), job.fixed, raw),
      );
    } catch (err) {
      if (!(err instanceof TooTightError)) throw err;
      throw new BotError(
        'E_USAGE',
        `hyperopt: the constraints ${space.constraints.map((c) => c.text).join(', ')} leave no room in the space: ${err.message}`,
      );
    }
    const first = b * batch;
    const count = Math.min(batch, epochs - first);
    const batchTrials: Trial[] = [];
    const toRun: Trial[] = [];
    for (let k = 0; k < count; k++) {
      const values = decodePoint(space, points[k] as number[]);
      const trial = first + k;
      const found = known.get(trial);
      if (found) {
        if (!same(found.values, values))
          throw new BotError(
            'E_SWEEP',
            `hyperopt: trial ${trial} in the trials kept has ${JSON.stringify(found.values)}, the search proposes ` +
              `${JSON.stringify(values)}: they were drawn by other code or inputs; start again without --resume`,
          );
        batchTrials.push(found);
        continue;
      }
      const base: Trial = {
        trial,
        batch: b,
        values,
        status: 'refused',
        loss: null,
        metrics: null,
        ended: [],
        problem: null,
        equity: [],
        returns: [],
        dataGaps: null,
      };
      const problem = await refusal(job.sources, { ...job.fixed, ...values });
      if (problem !== null) batchTrials.push({ ...base, problem });
      else toRun.push(base);
    }
    if (toRun.length > 0) {
      const runs = await executor.run(
        {
          sources: job.sources,
          data: job.data,
          settings: job.settings,
          combos: toRun.map((t) => ({ ...job.fixed, ...t.values })),
          ...(job.window ? { window: job.window } : {}),
        },
        (p) => onProgress?.({ trials: trials.length, epochs, best, batch: p }),
      );
      for (const run of runs) {
        const t = toRun[run.index] as Trial;
        const status =
          run.ended.length > 0 ? 'failed' : run.metrics.roundTrips < minTrades ? 'too few trades' : 'ranked';
        batchTrials.push({
          ...t,
          status,
          loss: status === 'ranked' ? job.loss(run.metrics, run.equity) : null,
          metrics: run.metrics,
          ended: run.ended,
          equity: run.equity,
          returns: run.returns,
          dataGaps: run.dataGaps,
        });
      }
    }
    batchTrials.sort((x, y) => x.trial - y.trial);
    const fresh = batchTrials.filter((t) => !known.has(t.trial));
    if (fresh.length > 0) await log.append(fresh);
    for (const t of batchTrials) {
      trials.push(t);
      if (better(t)) best = t;
    }
    onProgress?.({ trials: trials.length, epochs, best, batch: undefined });
  }
  return trials;
}

/** Why the strategy files refuse these values (their schemas, the strategy's params), or null. */
async function refusal(sources: readonly ConfigSource[], overrides: Record<string, unknown>): Promise<string | null> {
  for (const source of sources) {
    try {
      await instancesOf(source, overrides);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems.join('; ');
      throw err;
    }
  }
  return null;
}
