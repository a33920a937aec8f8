/**
 * `npm run bench:lifecycle`: how quickly the daemon's process-level guards act, with real processes on a paper
 * daemon (lockstep replay, a temp folder). Prints, over a few rounds each:
 * - refusal: from spawning a second daemon on a held journal to its exit (it names the holder);
 * - kill -9 then start: from SIGKILL of the holder to the next daemon holding the lock and running;
 * - orphan stop: from SIGKILL of `npm start` to the bot (npm's child) gone, in order (parent watch);
 * - listener: from spawning a daemon whose venue is unreachable to /healthz answering 200.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DaemonProcess,
  daemonEnv,
  everyOrderFile,
  lockstepPaperEnv,
  ROOT,
  waitFor,
} from '../test/e2e/daemon-process.js';
import { processAlive } from '../test/support/child-processes.js';
import { freePort } from '../test/support/free-port.js';
import { deadline } from '../test/support/until.js';

const ROUNDS = Number(process.env.ROUNDS ?? '3');
const dir = mkdtempSync(join(tmpdir(), 'bench-lifecycle-'));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const show = (what: string, xs: number[]) =>
  console.log(
    `${what.padEnd(28)} median ${median(xs).toFixed(0)} ms, min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)} (${xs.length} rounds)`,
  );

async function main(): Promise<void> {
  const refusals: number[] = [];
  const restarts: number[] = [];
  const orphans: number[] = [];
  const listeners: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    process.stdout.write(`round ${round + 1}/${ROUNDS}…\n`);
    const run = join(dir, `r${round}`);
    const env = await lockstepPaperEnv(
      mkdtempSync(`${run}-`),
      { 'churn.json': everyOrderFile('churn', { churn: 1000 }) },
      { count: 2000 },
    );
    const holder = new DaemonProcess(env);
    await waitFor('the holder to run', () => holder.messages(/"daemon running"/).length > 0, {
      daemon: holder,
      giveUp: deadline(60_000),
    });
    let t = performance.now();
    const second = new DaemonProcess(env);
    await second.exited;
    refusals.push(performance.now() - t);

    t = performance.now();
    await holder.stop('SIGKILL');
    const next = new DaemonProcess(env);
    await waitFor('the next daemon to run', () => next.messages(/"daemon running"/).length > 0, {
      daemon: next,
      giveUp: deadline(60_000),
    });
    restarts.push(performance.now() - t);
    await next.stop('SIGTERM');

    const npmEnv = await lockstepPaperEnv(
      mkdtempSync(`${run}-npm-`),
      { 'churn.json': everyOrderFile('churn', { churn: 1000 }) },
      { count: 2000 },
    );
    const npm = spawn('npm', ['start'], { cwd: ROOT, env: npmEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    await waitFor('npm start to run the bot', () => out.includes('"daemon running"'), { giveUp: deadline(60_000) });
    // The lock's line names the holder: the bot's own pid.
    const botPid = Number(/"pid":(\d+),[^\n]*holding the journal's lock/.exec(out)?.[1] ?? NaN);
    t = performance.now();
    process.kill(npm.pid!, 'SIGKILL');
    if (Number.isFinite(botPid)) {
      await waitFor('the orphaned bot to stop', () => !processAlive(botPid), { giveUp: deadline(30_000) });
      orphans.push(performance.now() - t);
    }
    try {
      process.kill(-npm.pid!, 'SIGKILL');
    } catch {
      // The group is gone already: what the bench expects.
    }

    const port = await freePort();
    t = performance.now();
    const down = new DaemonProcess(
      daemonEnv({
        MODE: 'live',
        EXCHANGE_BASE_URL: `http://127.0.0.1:${await freePort()}`,
        EXCHANGE_API_KEY: 'k',
        EXCHANGE_API_SECRET: 's',
        DB_PATH: join(run, 'down.db'),
        CONFIG_DIR: join(ROOT, 'config'),
        STRATEGIES_DIR: join(ROOT, 'strategies'),
        KILL_SWITCH_FILE: join(run, 'KILL'),
        METRICS_PORT: String(port),
      }),
    );
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      if (down.exit) throw new Error(`the daemon exited: ${down.lines.slice(-5).join('\n')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    listeners.push(performance.now() - t);
    await down.stop('SIGTERM');
  }
  console.log('');
  show('second daemon refused', refusals);
  show('kill -9, next one running', restarts);
  show('npm SIGKILL, bot gone', orphans);
  show('venue down, /healthz 200', listeners);
}

main()
  .catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
