/**
 * Sweeps on the Redis queue (BullMQ) with real processes: redis-server on a free loopback port (with a
 * password), two `bot worker` processes, the coordinator in process. The outputs are byte-identical to the
 * local run's; a worker SIGKILLed while it holds a job changes nothing (the job is run again elsewhere and
 * counted once); the password is in no log line and no job.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, expect, it } from 'vitest';
import { QUEUE_NAME } from '../../src/backtest/queue/queue-jobs.js';
import { parseQueueUrl } from '../../src/backtest/queue/queue-url.js';
import { startRedis, startWorker, type WorkerProcess } from '../support/redis.js';
import { bot, gridConfig, SAMPLE, sliceFlags } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('queue-test');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PASSWORD = `pw-${Math.random().toString(36).slice(2)}-secret`;
const OUTPUTS = ['sweep.csv', 'sweep.json', 'sweep.html'];
/** 16 combinations over two days of the sample. */
const SWEEP = ['--sweep', 'spacingPct=0.3,0.4,0.5,0.6', '--sweep', 'levels=3,4,5,6'];

const outputs = (out: string) => OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));

it('runs a 16-combination sweep on two bot workers, byte-identical to the local run, also with one SIGKILLed mid-run', async () => {
  const config = gridConfig(dir);
  const local = await bot(sliceFlags(config, join(dir, 'local'), [...SWEEP, '--workers', '2']));
  expect(local.code).toBe(0);
  const expected = outputs(join(dir, 'local'));
  expect((JSON.parse(expected[1]!) as { results: unknown[] }).results).toHaveLength(16);

  // Two workers, all combinations: identical, and both took a share.
  let redis = await startRedis({ password: PASSWORD });
  let workers = [
    await startWorker(redis.url, join(dir, 'cache-a')),
    await startWorker(redis.url, join(dir, 'cache-b')),
  ];
  const queued = await bot(sliceFlags(config, join(dir, 'queued'), [...SWEEP, '--queue', redis.url]));
  expect(queued.code).toBe(0);
  expect(outputs(join(dir, 'queued'))).toEqual(expected);
  expect(queued.out).toEqual(local.out);
  expect(workers.map((w) => w.done()).reduce((a, b) => a + b)).toBe(16);
  expect(workers.every((w) => w.done() > 0)).toBe(true);
  // Each worker kept the recording and its columns under the recording's sha256.
  const sha = createHash('sha256').update(readFileSync(SAMPLE)).digest('hex');
  for (const cache of ['cache-a', 'cache-b']) {
    expect(readFileSync(join(dir, cache, 'recordings', sha, basename(SAMPLE)))).toEqual(readFileSync(SAMPLE));
    expect(existsSync(join(dir, cache, 'columns', `${sha}.cols`))).toBe(true);
  }
  const lines = [...queued.err, ...queued.out, ...workers.flatMap((w) => w.lines)];
  await Promise.all(workers.map((w) => w.stop()));
  await redis.stop();

  // A fresh Redis (no finished results to reuse): one worker is killed while it holds a job.
  redis = await startRedis({ password: PASSWORD });
  workers = [await startWorker(redis.url, join(dir, 'cache-a')), await startWorker(redis.url, join(dir, 'cache-b'))];
  const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(redis.url, 'test').connection });
  try {
    const running = bot(sliceFlags(config, join(dir, 'killed'), [...SWEEP, '--queue', redis.url]));
    const killedJob = await killMidJob(workers[0]!, queue);
    const r = await running;
    expect(r.code).toBe(0);
    expect(outputs(join(dir, 'killed'))).toEqual(expected);
    // The killed worker's job was started again (by the other worker) and counted once.
    const job = (await queue.getJob(killedJob))!;
    expect(await job.getState()).toBe('completed');
    expect(job.attemptsStarted + job.stalledCounter).toBeGreaterThanOrEqual(2);
    expect(
      workers[1]!.lines.some((l) => l.includes(JSON.stringify((job.data as { overrides: unknown }).overrides))),
    ).toBe(true);
    // The password is in no line anyone wrote, nor in any job.
    lines.push(...r.err, ...r.out, ...workers.flatMap((w) => w.lines));
    expect(lines.join('\n')).toContain('redis://***@127.0.0.1:');
    expect(lines.join('\n')).not.toContain(PASSWORD);
    const jobs = await queue.getJobs(['completed', 'failed', 'waiting', 'active']);
    expect(jobs).toHaveLength(16);
    expect(JSON.stringify(jobs.map((j) => j.data as unknown))).not.toContain(PASSWORD);
  } finally {
    await queue.close();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await redis.stop();
  }
}, 240_000);

/**
 * SIGKILLs `worker` while it holds a job, deterministically: it is frozen (SIGSTOP) and killed only when Redis
 * says a job is active in its name; otherwise it is let go on and tried again. Returns that job's id.
 */
async function killMidJob(worker: WorkerProcess, queue: Queue): Promise<string> {
  const name = new RegExp(`-${worker.child.pid}$`);
  for (let attempt = 0; attempt < 3000; attempt++) {
    worker.child.kill('SIGSTOP');
    const held = (await queue.getActive()).find((j) => name.test(j.processedBy ?? ''));
    if (held?.id !== undefined) {
      await worker.stop('SIGKILL');
      return held.id;
    }
    worker.child.kill('SIGCONT');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`the worker never held a job: ${worker.lines.join('\n')}`);
}
