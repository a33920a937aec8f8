/**
 * Faults on the Redis queue, with real processes (redis-server, `bot worker`, a coordinator process): a run that
 * throws fails its job once and is not attempted again; a worker refuses a strategy module whose sha256 is not
 * the coordinator's; a coordinator SIGKILLed and run again re-uses every finished result (no combination runs
 * twice); Redis SIGKILLed and restarted mid-sweep delays the sweep, and the outputs stay byte-identical.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { QUEUE_NAME } from '../../src/backtest/queue/queue-jobs.js';
import { parseQueueUrl } from '../../src/backtest/queue/queue-url.js';
import { ROOT, waitFor } from '../e2e/daemon-process.js';
import { trackChild } from '../support/child-processes.js';
import { startRedis, startWorker } from '../support/redis.js';
import { tempProject } from '../config/temp-project.js';
import { bot, FROM, gridConfig, SAMPLE, sliceFlags, userStrategy, WRECK_STRATEGY } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('queue-faults');
const project = tempProject();
afterAll(() => {
  project.remove();
});

const OUTPUTS = ['sweep.csv', 'sweep.json', 'sweep.html'];
const SWEEP = ['--sweep', 'spacingPct=0.3,0.5', '--sweep', 'levels=3,4,5,6'];
const outputs = (out: string) => OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));
const queueOf = (url: string) => new Queue(QUEUE_NAME, { connection: parseQueueUrl(url, 'test').connection });

let config: string;
let expected: string[];
beforeAll(async () => {
  config = gridConfig(dir);
  expect((await bot(sliceFlags(config, join(dir, 'local'), [...SWEEP, '--workers', '2']))).code).toBe(0);
  expected = outputs(join(dir, 'local'));
}, 120_000);

it('fails a combination whose run throws once, and refuses a strategy module whose sha256 differs', async () => {
  const redis = await startRedis();
  const queue = queueOf(redis.url);
  let worker = await startWorker(redis.url, join(dir, 'cache'));
  try {
    const wreck = userStrategy(project, 'wreck', WRECK_STRATEGY, { how: 'none' });
    const hour = new Date(Date.parse(FROM) + 3_600_000).toISOString();
    const flags = (to: string, sweep: string, out: string) => [
      ...['--config', wreck, '--data', SAMPLE, '--from', FROM, '--to', to, '--strategies', project.strategiesDir],
      ...['--sweep', sweep, '--queue', redis.url, '--out', join(dir, out)],
    ];
    const r = await bot(flags(hour, 'how=none,throw', 'wreck'));
    expect(r.code).toBe(1);
    expect(r.err.join('\n')).toMatch(
      /1 of 2 combinations failed on the queue; the first, combination \{"how":"throw"\}: .*thrown outside any hook/,
    );
    const [failed] = await queue.getFailed();
    expect(failed!.attemptsMade).toBe(1);
    expect(await queue.getCompletedCount()).toBe(1);

    // The same module name, other bytes on the worker's side: refused, naming both hashes, not attempted again.
    await worker.stop();
    // Beside the project's strategies/, so its `import 'zod'` resolves the same way.
    const other = join(project.root, 'other-strategies');
    mkdirSync(other);
    writeFileSync(join(other, 'wreck.js'), `${WRECK_STRATEGY}// changed\n`);
    worker = await startWorker(redis.url, join(dir, 'cache'), ['--strategies', other]);
    const later = new Date(Date.parse(FROM) + 7_200_000).toISOString();
    const refused = await bot(flags(later, 'how=none', 'refused'));
    expect(refused.code).toBe(1);
    expect(refused.err.join('\n')).toMatch(
      /strategy module .*other-strategies\/wreck\.js has sha256 [0-9a-f]{64}, the coordinator sent [0-9a-f]{64}: refusing to run code the coordinator did not send/,
    );
    expect((await queue.getFailed()).map((j) => j.attemptsMade)).toEqual([1, 1]);
    expect(worker.done()).toBe(0);
  } finally {
    await queue.close();
    await worker.stop('SIGKILL');
    await redis.stop();
  }
}, 120_000);

it('resumes a coordinator SIGKILLed mid-sweep without running any combination twice', async () => {
  const redis = await startRedis();
  const worker = await startWorker(redis.url, join(dir, 'cache'));
  try {
    const out = join(dir, 'resumed');
    const coordinator = trackChild(
      spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'backtest', ...sliceFlags(config, out, SWEEP)], {
        cwd: ROOT,
        env: { ...process.env, SWEEP_QUEUE: redis.url },
        stdio: 'ignore',
      }),
    );
    await waitFor('two combinations done', () => worker.done() >= 2);
    coordinator.kill('SIGKILL');
    const before = worker.done();
    expect(before).toBeLessThan(8);
    const r = await bot([...sliceFlags(config, out, SWEEP), '--queue', redis.url]);
    expect(r.code).toBe(0);
    expect(outputs(out)).toEqual(expected);
    expect(worker.done()).toBe(8);
  } finally {
    await worker.stop('SIGKILL');
    await redis.stop();
  }
}, 120_000);

it('waits out a Redis SIGKILLed and restarted mid-sweep; the outputs are unchanged', async () => {
  const data = tempDir('queue-redis');
  let redis = await startRedis({ dir: data });
  const worker = await startWorker(redis.url, join(dir, 'cache'));
  try {
    const out = join(dir, 'redis-restarted');
    const running = bot([...sliceFlags(config, out, SWEEP), '--queue', redis.url]);
    await waitFor('two combinations done', () => worker.done() >= 2);
    const { port } = redis;
    await redis.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    redis = await startRedis({ dir: data, port });
    const r = await running;
    expect(r.code).toBe(0);
    expect(outputs(out)).toEqual(expected);
    expect(r.err.join('\n')).toMatch(/queue: redis:\/\/127\.0\.0\.1:\d+: .*\(waiting for it\)/);
  } finally {
    await worker.stop('SIGKILL');
    await redis.stop();
  }
}, 120_000);

it('runs a walk-forward on the queue byte-identical to the local one', async () => {
  const walk = ['--sweep', 'spacingPct=0.3,0.5', '--sweep', 'levels=3,5', '--walk-forward', '2'];
  expect((await bot(sliceFlags(config, join(dir, 'walk-local'), [...walk, '--workers', '2']))).code).toBe(0);
  const redis = await startRedis();
  const worker = await startWorker(redis.url, join(dir, 'cache'));
  try {
    const r = await bot(sliceFlags(config, join(dir, 'walk-queued'), [...walk, '--queue', redis.url]));
    expect(r.code).toBe(0);
    expect(outputs(join(dir, 'walk-queued'))).toEqual(outputs(join(dir, 'walk-local')));
    expect(readFileSync(join(dir, 'walk-queued', 'sweep.json'), 'utf8')).toContain('"walkForward"');
    // Each window: its 4 train combinations and its chosen one on the test part.
    expect(worker.done()).toBe(2 * (4 + 1));
  } finally {
    await worker.stop('SIGKILL');
    await redis.stop();
  }
}, 120_000);
