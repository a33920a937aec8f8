/**
 * bot hyperopt through real processes: SIGKILLed once its first batch is kept, then resumed, it ends with the
 * same outputs byte for byte as an uninterrupted run; on Redis with two `bot worker` processes, the same again.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { run as hyperopt } from '../../src/cli/hyperopt.js';
import { ROOT, waitFor } from '../e2e/daemon-process.js';
import { trackChild } from '../support/child-processes.js';
import { startRedis, startWorker } from '../support/redis.js';
import { capture } from '../support/command-output.js';
import { SAMPLE } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('hyperopt-processes');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OUTPUTS = ['hyperopt.json', 'hyperopt.csv', 'hyperopt.html', 'best.json', 'trials.jsonl'];
const outputs = (out: string) => OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));
const lines = (file: string) =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l !== '').length
    : 0;

/** 12 trials of TPE in batches of 4 over one day of the sample: the first batch random, the others TPE's. */
const args = (out: string, more: string[] = []) => [
  '--config',
  'config/grid-btcusdt.json',
  '--data',
  SAMPLE,
  '--from',
  '2023-03-09T00:00:00Z',
  '--to',
  '2023-03-10T00:00:00Z',
  '--space',
  'spacingPct=0.2..1.0',
  '--space',
  'levels=2..8:int',
  '--epochs',
  '12',
  '--batch',
  '4',
  '--seed',
  '3',
  '--min-trades',
  '0',
  '--out',
  out,
  ...more,
];

it('resumes a hyperopt killed mid-search to the outputs of an uninterrupted run, and runs it on Redis the same', async () => {
  const whole = join(dir, 'whole');
  const straight = await capture(hyperopt, args(whole, ['--workers', '2']));
  expect(straight.code, straight.err.join('\n')).toBe(0);
  const expected = outputs(whole);

  // A real process, SIGKILLed once the first batch is kept (and before the last is).
  const killed = join(dir, 'killed');
  const child = trackChild(
    spawn(process.execPath, ['bin/bot.js', 'hyperopt', ...args(killed, ['--workers', '1'])], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const trials = join(killed, 'trials.jsonl');
  await waitFor('the first batch kept', () => lines(trials) >= 4 || child.exitCode !== null);
  child.kill('SIGKILL');
  await new Promise((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve),
  );
  const kept = lines(trials);
  expect(kept).toBeGreaterThanOrEqual(4);
  expect(kept).toBeLessThan(12);
  expect(existsSync(join(killed, 'hyperopt.json'))).toBe(false);

  const resumed = await capture(hyperopt, args(killed, ['--workers', '2', '--resume']));
  expect(resumed.code, resumed.err.join('\n')).toBe(0);
  expect(resumed.err.join('\n')).toContain(`${kept} trials kept in trials.jsonl, resuming`);
  expect(outputs(killed)).toEqual(expected);
  expect(resumed.out).toEqual(straight.out);

  // On Redis: two workers take the trials; the outputs are the local run's.
  const redis = await startRedis();
  const workers = [
    await startWorker(redis.url, join(dir, 'cache-a')),
    await startWorker(redis.url, join(dir, 'cache-b')),
  ];
  try {
    const queued = await capture(hyperopt, args(join(dir, 'queued'), ['--queue', redis.url]));
    expect(queued.code, queued.err.join('\n')).toBe(0);
    expect(outputs(join(dir, 'queued'))).toEqual(expected);
    expect(workers.map((w) => w.done()).reduce((a, b) => a + b)).toBe(12);
  } finally {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await redis.stop();
  }
}, 600_000);
