/**
 * `bot worker`'s side of the queue: takes combination jobs from Redis (BullMQ) and runs each on a worker thread
 * with the local pool's own code (sweep-worker.ts, which calls job.ts), so a combination gives on any machine
 * exactly what it gives locally. The event loop stays free while a combination runs, so the job's lock is
 * renewed however long it takes; a worker killed mid-job lets its lock lapse and another worker takes the job.
 *
 * Before a job runs, its inputs are checked by content: each recording is read from this worker's cache or
 * fetched (shared path, or the coordinator's URL) and must hash to the sha256 the job names; each strategy
 * module it would load must hash to the sha256 the coordinator sent, or the job is refused. A run that throws,
 * or a refused module, fails the job for good (UnrecoverableError); inputs that could not be fetched are
 * attempted again.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Worker as ThreadWorker } from 'node:worker_threads';
import { type Job, UnrecoverableError, Worker } from 'bullmq';
import { shown, strategySourceFile } from '../../strategy/loader.js';
import type { WorkerReply, WorkerRequest } from '../sweep.js';
import { startSweepThread } from '../sweep.js';
import { COLUMN_CACHE_ENV } from '../column-cache.js';
import { loadTicks, type TickData } from '../tick-data.js';
import type { ConfigSource } from '../strategy-configs.js';
import { type ComboJob, type ComboResult, parseComboJob, QUEUE_NAME } from './queue-jobs.js';
import type { QueueUrl } from './queue-url.js';
import { dropCached, recordingByContent } from './recording-store.js';

export interface QueueWorkerOptions {
  url: QueueUrl;
  /** Where fetched recordings (recordings/SHA256/) and their columns (columns/SHA256.cols) are kept. */
  cacheDir: string;
  /** Where strategy modules are found; default: the folder the coordinator named (the project's strategies/). */
  strategiesDir?: string;
  /** A lapsed lock (a killed worker) is noticed within about lockMs + stalledMs (defaults 10 s and 5 s). */
  lockMs?: number;
  stalledMs?: number;
  log: (line: string) => void;
}

/** One thread running the combinations of one spec, one at a time (sweep-worker.ts's protocol). */
class ComboThread {
  private readonly thread: ThreadWorker;
  private waiting: { resolve: (r: WorkerReply) => void; reject: (e: Error) => void } | undefined;
  private dead: Error | undefined;

  constructor(sources: ConfigSource[], data: TickData, settings: ComboJob['spec']['settings']) {
    this.thread = startSweepThread({ sources, data, settings });
    const die = (err: Error) => {
      this.dead = err;
      this.waiting?.reject(err);
      this.waiting = undefined;
    };
    this.thread.on('message', (reply: WorkerReply) => {
      if ('done' in reply) return;
      this.waiting?.resolve(reply);
      this.waiting = undefined;
    });
    this.thread.on('error', (err) => die(new Error(`the worker thread failed: ${err.message}`)));
    this.thread.on('exit', (code) => die(new Error(`the worker thread exited (code ${code})`)));
  }

  run(request: Extract<WorkerRequest, { index: number }>): Promise<WorkerReply> {
    if (this.dead) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.thread.postMessage(request satisfies WorkerRequest);
    });
  }

  get alive(): boolean {
    return this.dead === undefined;
  }

  async close(): Promise<void> {
    await this.thread.terminate();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The sources as this worker runs them: each module found here and hashing to what the coordinator sent. */
async function verifiedSources(job: ComboJob, strategiesDir: string | undefined): Promise<ConfigSource[]> {
  const out: ConfigSource[] = [];
  for (const source of job.spec.sources) {
    const dir = strategiesDir ?? source.strategiesDir;
    const name = String(source.raw.strategy);
    let file: string;
    try {
      file = await strategySourceFile(name, dir);
    } catch (err) {
      throw new UnrecoverableError(`on ${hostname()}: ${(err as Error).message}`);
    }
    const got = sha256(await readFile(file));
    if (got !== source.module.sha256)
      throw new UnrecoverableError(
        `on ${hostname()}: strategy module ${shown(file)} has sha256 ${got}, the coordinator sent ` +
          `${source.module.sha256}: refusing to run code the coordinator did not send`,
      );
    out.push({ ...source, strategiesDir: dir });
  }
  return out;
}

/** Starts taking jobs; resolves to a stop function (waits for the job in hand, then closes). */
export async function startQueueWorker(options: QueueWorkerOptions): Promise<{ stop: () => Promise<void> }> {
  let current: { hash: string; thread: ComboThread } | undefined;

  /** The thread for a job's spec: the last one when the spec is the same, else a new one on freshly read data. */
  const threadFor = async (job: ComboJob): Promise<ComboThread> => {
    if (current?.hash === job.specHash && current.thread.alive) return current.thread;
    await current?.thread.close();
    current = undefined;
    const sources = await verifiedSources(job, options.strategiesDir);
    const files = await Promise.all(job.spec.recordings.map((r) => recordingByContent(r, options.cacheDir)));
    const { from, to, allowPartial } = job.spec.load;
    // The columns too are cached by the recording's sha256 (column-cache.ts), in the same folder.
    const cacheDir = process.env[COLUMN_CACHE_ENV] === 'off' ? undefined : path.join(options.cacheDir, 'columns');
    const data = await loadTicks(files, { from, to, allowPartial, cacheDir });
    const wrong = data.files.findIndex((f, i) => f.sha256 !== job.spec.recordings[i]!.file.sha256);
    if (wrong >= 0) {
      // A cached copy changed on disk since it was verified: dropped, fetched again on the next attempt.
      await dropCached(options.cacheDir, job.spec.recordings[wrong]!);
      throw new Error(
        `cached recording ${files[wrong]} no longer hashes to ${job.spec.recordings[wrong]!.file.sha256}`,
      );
    }
    // What the run reports of its data is what the coordinator read (names, paths as given).
    data.files = job.spec.recordings.map((r) => r.file);
    const thread = new ComboThread(sources, data, job.spec.settings);
    current = { hash: job.specHash, thread };
    return thread;
  };

  const runCombination = async (bull: Job): Promise<ComboResult> => {
    let job: ComboJob;
    try {
      job = parseComboJob(bull.data);
    } catch (err) {
      throw new UnrecoverableError((err as Error).message);
    }
    const started = performance.now();
    const thread = await threadFor(job);
    // The run itself failing (its module, a throw outside any hook, a process.exit) is the combination's own
    // fault: it would fail again anywhere, so it is not attempted again. (Its thread is replaced for the next.)
    const reply = await thread
      .run({
        index: job.index,
        overrides: job.overrides,
        progress: false,
        ...(job.window ? { window: job.window } : {}),
      })
      .catch((err: Error) => {
        throw new UnrecoverableError(err.message);
      });
    if ('error' in reply) throw new UnrecoverableError(reply.error);
    if (!('metrics' in reply)) throw new UnrecoverableError('the worker thread answered no result');
    options.log(
      `worker: combination ${JSON.stringify(job.overrides)} done in ${Math.round(performance.now() - started)} ms`,
    );
    return {
      metrics: reply.metrics,
      ended: reply.ended,
      equity: reply.equity,
      returns: reply.returns,
      dataGaps: reply.dataGaps,
    };
  };

  const worker = new Worker(QUEUE_NAME, runCombination, {
    connection: { ...options.url.connection, maxRetriesPerRequest: null },
    // Named in the job it holds (processedBy), so the process running a job can be told.
    name: `${hostname()}-${process.pid}`,
    concurrency: 1,
    lockDuration: options.lockMs ?? 10_000,
    stalledInterval: options.stalledMs ?? 5_000,
    maxStalledCount: 2,
    autorun: false,
  });
  let away: string | undefined;
  worker.on('error', (err) => {
    const reason = err.message.split('\n')[0] ?? '';
    if (away === reason) return;
    away = reason;
    options.log(`worker: ${options.url.shown}: ${reason}`);
  });
  worker.on('failed', (bull, err) => {
    if (bull) options.log(`worker: job ${bull.id} failed: ${err.message}`);
  });
  await worker.waitUntilReady();
  worker.run().catch((err: Error) => options.log(`worker: stopped taking jobs: ${err.message}`));
  options.log(`worker: taking jobs from ${options.url.shown} (queue ${QUEUE_NAME}) on ${hostname()}`);
  return {
    stop: async () => {
      await worker.close();
      await current?.thread.close();
    },
  };
}
