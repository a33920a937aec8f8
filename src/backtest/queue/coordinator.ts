/**
 * The coordinator's side of a sweep on the Redis queue (BullMQ): a SweepExecutor that adds one job per
 * combination and collects what `bot worker` processes answer, so runSweep ranks the same results it would from
 * the local threads and the outputs are byte-identical.
 *
 * - A job's id is its content's hash (queue-jobs.ts): adding it again is a no-op, so a coordinator restarted with
 *   the same command finds the finished results in Redis and re-adds only what is missing.
 * - Results are taken by job id, once: a job retried after its worker was killed is one result.
 * - Completions arrive as QueueEvents; every few seconds the coordinator also reads the state of every job it
 *   still waits for, which catches events missed while Redis was away and re-adds jobs a Redis that restarted
 *   without its data has lost.
 * - A job that failed (its run threw, or its worker refused it) fails the sweep once every job has finished or
 *   failed, naming the first; a failed job found when a sweep (re)starts is retried once.
 */
import { Queue, QueueEvents } from 'bullmq';
import { BotError } from '../../errors.js';
import type { SweepExecutor, SweepJob, SweepProgress, SweepRun } from '../sweep.js';
import type { QueueUrl } from './queue-url.js';
import {
  type ComboJob,
  type ComboResult,
  comboJobId,
  JOB_VERSION,
  QUEUE_NAME,
  type RecordingRef,
  type SweepSpec,
  specHash,
} from './queue-jobs.js';
import { type RecordingServer, serveRecordings } from './recording-store.js';
import path from 'node:path';

export interface QueueExecutorOptions {
  url: QueueUrl;
  /** How the coordinator read the recordings (the workers read them the same way). */
  load: SweepSpec['load'];
  /** Serve the recordings over HTTP on this address (`--serve-data HOST:PORT`). */
  serve?: { host: string; port: number };
  /** How often the state of every pending job is read (default 2 s). */
  reconcileMs?: number;
  /** Lines for the terminal (Redis away, jobs re-added); never the URL's credentials. */
  note?: (line: string) => void;
}

export interface QueueExecutor extends SweepExecutor {
  close(): Promise<void>;
}

/** Attempts of a job whose worker could not get its inputs (a run that throws is not attempted again). */
const ATTEMPTS = 3;
const WEEK_S = 7 * 86_400;

export async function openQueueExecutor(options: QueueExecutorOptions): Promise<QueueExecutor> {
  const note = options.note ?? ((line: string) => console.error(line));
  // Commands wait for Redis while it is away (a restart delays the sweep, it does not end it).
  const connection = { ...options.url.connection, maxRetriesPerRequest: null };
  let away: string | undefined;
  const onError = (err: Error) => {
    const reason = err.message.split('\n')[0] ?? '';
    if (away === reason) return;
    away = reason;
    note(`queue: ${options.url.shown}: ${reason} (waiting for it)`);
  };
  const queue = new Queue(QUEUE_NAME, { connection });
  const events = new QueueEvents(QUEUE_NAME, { connection });
  queue.on('error', onError);
  events.on('error', onError);
  const server = options.serve ? await serveRecordings(options.serve.host, options.serve.port) : undefined;
  try {
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  } catch (err) {
    await Promise.allSettled([queue.close(), events.close(), server?.close()]);
    throw new BotError('E_SWEEP', `queue: ${options.url.shown}: ${(err as Error).message}`, { cause: err });
  }
  return {
    run: (job, onProgress) =>
      runOnQueue(queue, events, job, options, server, onProgress, () => {
        if (away !== undefined) note(`queue: ${options.url.shown}: back`);
        away = undefined;
      }),
    close: async () => {
      await Promise.allSettled([queue.close(), events.close(), server?.close()]);
    },
  };
}

function specOf(job: SweepJob, load: SweepSpec['load'], server: RecordingServer | undefined): SweepSpec {
  server?.add(job.data.files);
  const recordings: RecordingRef[] = job.data.files.map((file) => ({
    file,
    at: path.resolve(file.path),
    ...(server ? { url: server.urlOf(file.sha256) } : {}),
  }));
  return { sources: job.sources, settings: job.settings, load, recordings };
}

async function runOnQueue(
  queue: Queue,
  events: QueueEvents,
  job: SweepJob,
  options: QueueExecutorOptions,
  server: RecordingServer | undefined,
  onProgress: ((p: SweepProgress) => void) | undefined,
  reachable: () => void,
): Promise<SweepRun[]> {
  const spec = specOf(job, options.load, server);
  const hash = specHash(spec);
  const window = job.window ?? null;
  /** The combinations each job id stands for (the same overrides twice are one job). */
  const pending = new Map<string, number[]>();
  const datas = new Map<string, ComboJob>();
  job.combos.forEach((overrides, index) => {
    const id = comboJobId(hash, overrides, window);
    pending.set(id, [...(pending.get(id) ?? []), index]);
    if (!datas.has(id)) datas.set(id, { v: JOB_VERSION, specHash: hash, spec, index, overrides, window });
  });
  const results = new Map<number, SweepRun>();
  const failures = new Map<string, string>();
  const running = new Set<string>();
  const total = job.combos.length;
  const report = () =>
    onProgress?.({
      runs: results.size,
      runsTotal: total,
      ticks: 0,
      ticksTotal: 0,
      running: running.size,
      failed: failures.size,
    });

  const add = async (ids: readonly string[]) => {
    for (let i = 0; i < ids.length; i += 500) {
      await queue.addBulk(
        ids.slice(i, i + 500).map((id) => ({
          name: 'combination',
          data: datas.get(id) as ComboJob,
          opts: {
            jobId: id,
            attempts: ATTEMPTS,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: { age: WEEK_S },
            removeOnFail: { age: WEEK_S },
          },
        })),
      );
    }
  };
  const take = (id: string, value: unknown) => {
    const indices = pending.get(id);
    if (!indices) return;
    const r = value as ComboResult;
    for (const index of indices)
      results.set(index, {
        index,
        overrides: job.combos[index] as Record<string, unknown>,
        metrics: r.metrics,
        ended: r.ended,
        equity: r.equity,
        returns: r.returns,
        dataGaps: r.dataGaps,
      });
    pending.delete(id);
    running.delete(id);
  };
  const fail = (id: string, reason: string) => {
    if (!pending.has(id)) return;
    failures.set(id, reason);
    pending.delete(id);
    running.delete(id);
  };

  let wake: () => void = () => undefined;
  const settled = () => pending.size === 0;
  /** One pass over every pending job's state; `first`: failed jobs are retried, not taken as failures. */
  const reconcile = async (first: boolean) => {
    const ids = [...pending.keys()];
    const lost: string[] = [];
    for (let i = 0; i < ids.length; i += 200) {
      const chunk = ids.slice(i, i + 200);
      const states = await Promise.all(chunk.map((id) => queue.getJobState(id)));
      for (const [k, id] of chunk.entries()) {
        const state = states[k];
        if (state === 'unknown') lost.push(id);
        else if (state === 'active') running.add(id);
        else if (state === 'completed' || state === 'failed') {
          const found = await queue.getJob(id);
          if (!found) lost.push(id);
          else if (state === 'completed') take(id, found.returnvalue);
          else if (first) {
            await found.retry('failed', { resetAttemptsMade: true });
          } else fail(id, found.failedReason);
        } else running.delete(id);
      }
    }
    if (lost.length > 0) {
      if (!first)
        options.note?.(`queue: ${lost.length} jobs were not in Redis (restarted without its data?): added again`);
      await add(lost);
    }
    reachable();
    report();
  };

  const onCompleted = ({ jobId }: { jobId: string }) => {
    if (!pending.has(jobId)) return;
    void queue.getJob(jobId).then(
      (found) => {
        if (found && found.finishedOn !== undefined && found.failedReason === undefined) {
          take(jobId, found.returnvalue);
          report();
          if (settled()) wake();
        }
      },
      () => undefined,
    );
  };
  const onFailed = ({ jobId, failedReason }: { jobId: string; failedReason: string }) => {
    if (!pending.has(jobId)) return;
    // A failed attempt with attempts left goes back to wait; only a job in the failed state has failed.
    void queue.getJobState(jobId).then(
      (state) => {
        if (state !== 'failed') return;
        fail(jobId, failedReason);
        report();
        if (settled()) wake();
      },
      () => undefined,
    );
  };
  const onActive = ({ jobId }: { jobId: string }) => {
    if (!pending.has(jobId)) return;
    running.add(jobId);
    report();
  };
  events.on('completed', onCompleted);
  events.on('failed', onFailed);
  events.on('active', onActive);
  try {
    await add([...pending.keys()]);
    await reconcile(true);
    while (!settled()) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.reconcileMs ?? 2000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (!settled()) await reconcile(false);
    }
  } finally {
    events.off('completed', onCompleted);
    events.off('failed', onFailed);
    events.off('active', onActive);
  }
  report();
  if (failures.size > 0) {
    const [id, reason] = [...failures][0] as [string, string];
    const first = datas.get(id) as ComboJob;
    throw new BotError(
      'E_SWEEP',
      `${failures.size} of ${datas.size} combinations failed on the queue; the first, ` +
        `combination ${JSON.stringify(first.overrides)}: ${reason}`,
    );
  }
  return [...results.values()].sort((a, b) => a.index - b.index);
}
