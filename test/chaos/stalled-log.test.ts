/**
 * A stop is bounded whatever the log sink does: the daemon's stdout is a pipe nobody reads (a stalled log
 * collector), filled by a chatty strategy; SIGTERM still ends it in order (exit 0), and a second signal ends
 * it at once.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonEnv, readDb, ROOT, waitFor } from '../e2e/daemon-process.js';
import { spawn } from 'node:child_process';
import { CHAOS_STRATEGIES, sleep } from './run-files.js';
import { trackChild } from '../support/child-processes.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('chaos-stalled-log');

/** Starts the paper daemon with its stdout on a FIFO whose reader never reads; resolves once its pipe is full. */
async function stalledDaemon(name: string) {
  const fifo = join(dir, `${name}.fifo`);
  execFileSync('mkfifo', [fifo]);
  const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK); // open, never read
  const writer = openSync(fifo, 'w');
  const config = join(dir, `${name}-config`);
  mkdirSync(config);
  // 20 kB a tick: the 64 kB pipe is full within a few ticks.
  writeFileSync(
    join(config, 'chatty.json'),
    JSON.stringify({
      name: 'chatty',
      strategy: 'chatty',
      symbol: 'BTCUSDT',
      schedule: '* * * * * *',
      params: { logBytes: 20_000 },
    }),
  );
  const db = join(dir, `${name}.db`);
  const env = daemonEnv({
    DB_PATH: db,
    CONFIG_DIR: config,
    STRATEGIES_DIR: CHAOS_STRATEGIES,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
  });
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run'], {
      cwd: ROOT,
      env,
      stdio: ['ignore', writer, 'pipe'],
    }),
  );
  closeSync(writer);
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  await waitFor('the daemon to start trading', () =>
    readDb(db, (d) => d.prepare("SELECT count(*) FROM events WHERE kind = 'started'").pluck().get() as number),
  );
  await sleep(5_000); // several 20 kB ticks: the pipe and the daemon's buffer hold what it could not write
  const bounded = async (ms: number) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
    const outcome = await Promise.race([exited, timeout]);
    clearTimeout(timer);
    if (outcome === 'hung') child.kill('SIGKILL');
    return outcome;
  };
  return { child, bounded, close: () => closeSync(reader) };
}

describe('a stop whatever the log sink does', () => {
  it('SIGTERM stops the daemon in order while its stdout is a pipe nobody reads', async () => {
    const d = await stalledDaemon('term');
    d.child.kill('SIGTERM');
    expect(await d.bounded(20_000)).toEqual({ code: 0, signal: null });
    d.close();
  }, 60_000);

  it('a second signal exits at once', async () => {
    const d = await stalledDaemon('twice');
    d.child.kill('SIGTERM');
    d.child.kill('SIGTERM');
    const outcome = await d.bounded(5_000);
    expect(outcome).not.toBe('hung');
    // Either the second signal cut the stop short (143), or the stop had already finished (0).
    expect([0, 143]).toContain((outcome as { code: number }).code);
    d.close();
  }, 60_000);
});
