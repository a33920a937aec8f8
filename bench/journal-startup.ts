/**
 * `npm run bench:journal-startup`: the daemon's start against the size of its journal. For each size (FILLS,
 * default 0,30000,100000,300000 fills, one order each, all filled and delivered) and each venue (VENUES, default
 * live,paper: live against a `bot sim` process; paper, whose database also holds the simulated exchange's ledger
 * of as many orders and fills), twice: on a journal of schema 4 (the migrations to the current schema run, a
 * backup first) and on one already current. Prints, per start, the time from spawning `node bin/bot.js run` to
 * the first /healthz answer, the longest /healthz answer while it started (a probe every 100 ms, each allowed
 * 30 s: what a liveness probe would have waited; after the first answer, one that failed counts with the time it
 * took), the time to "daemon running", and the process's peak RSS then. The figures size the Kubernetes
 * example's probes (docs/kubernetes.md).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_CREDENTIALS } from '../src/sim/sim-server.js';
import { daemonEnv, ROOT } from '../test/e2e/daemon-process.js';
import { writeOldJournal } from '../test/support/old-journal.js';

const SIZES = (process.env.FILLS ?? '0,30000,100000,300000').split(',').map(Number);
const VENUES = (process.env.VENUES ?? 'live,paper')
  .split(',')
  .filter((v): v is 'live' | 'paper' => v === 'live' || v === 'paper');
const OLD_SCHEMA = 4;
const dir = mkdtempSync(join(tmpdir(), 'bench-journal-startup-'));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

interface Start {
  firstHealthzMs: number;
  longestHealthzMs: number;
  runningMs: number;
  rssMB: number;
  progressLines: number;
}

async function start(db: string, venue: 'live' | 'paper', simUrl: string): Promise<Start> {
  const metricsPort = await freePort();
  const config = join(dir, 'config');
  const env = daemonEnv({
    DB_PATH: db,
    CONFIG_DIR: config,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    METRICS_PORT: String(metricsPort),
    LOG_FORMAT: 'json',
    ...(venue === 'live'
      ? {
          MODE: 'live',
          EXCHANGE_BASE_URL: simUrl,
          EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
          EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
        }
      : {}),
  });
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'bin/bot.js'), 'run'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  let runningMs: number | undefined;
  child.stdout.on('data', (c: Buffer) => {
    text += c.toString('utf8');
    if (runningMs === undefined && text.includes('"daemon running"')) runningMs = performance.now() - t0;
  });
  child.stderr.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let exit: number | null | undefined;
  void exited.then((code) => (exit = code));
  let firstHealthzMs: number | undefined;
  let longest = 0;
  while (runningMs === undefined) {
    if (exit !== undefined) throw new Error(`the daemon exited ${exit}: ${text.slice(-2000)}`);
    const asked = performance.now();
    const ok = await fetch(`http://127.0.0.1:${metricsPort}/healthz`, { signal: AbortSignal.timeout(30_000) }).then(
      (r) => r.status === 200,
      () => false,
    );
    const took = performance.now() - asked;
    if (ok) firstHealthzMs ??= performance.now() - t0;
    if (firstHealthzMs !== undefined) longest = Math.max(longest, took);
    await new Promise((r) => setTimeout(r, 100));
  }
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN);
  await stop(child, exited);
  return {
    firstHealthzMs: firstHealthzMs ?? NaN,
    longestHealthzMs: longest,
    runningMs,
    rssMB: hwm / 1024,
    progressLines: text.split('\n').filter((l) => l.includes('"migrating')).length,
  };
}

async function stop(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  child.kill('SIGTERM');
  await exited;
}

async function main(): Promise<void> {
  spawnSync(process.execPath, [join(ROOT, 'bin/build.js')], { cwd: ROOT, stdio: 'inherit' });
  mkdirSync(join(dir, 'config'));
  copyFileSync(join(ROOT, 'config/grid-btcusdt.json'), join(dir, 'config/grid-btcusdt.json'));
  const simPort = await freePort();
  const sim = spawn(
    process.execPath,
    [join(ROOT, 'bin/bot.js'), 'sim', '--port', String(simPort), '--random-walk', '--symbols', 'BTCUSDT'],
    { cwd: ROOT, env: daemonEnv({}), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const simExited = new Promise((resolve) => sim.once('exit', resolve));
  await new Promise<void>((resolve) => sim.stdout.on('data', (c: Buffer) => c.includes('simulated') && resolve()));
  const simUrl = `http://127.0.0.1:${simPort}`;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  console.log(`load average ${load()} (the machine is shared: absolute figures are noisy)`);
  console.log(
    `\n${'venue'.padEnd(6)} ${'fills'.padStart(8)} ${'journal'.padEnd(9)} ${'MB'.padStart(5)} ${'healthz s'.padStart(10)} ${'longest s'.padStart(10)} ${'running s'.padStart(10)} ${'RSS MB'.padStart(7)}`,
  );
  try {
    for (const venue of VENUES)
      for (const fills of SIZES) {
        const current = join(dir, `${venue}-${fills}.db`);
        const old = join(dir, `${venue}-${fills}-v${OLD_SCHEMA}.db`);
        writeOldJournal(old, { fills, schema: OLD_SCHEMA, venue });
        for (const [label, source] of [
          [`schema ${OLD_SCHEMA}`, old],
          ['current', current],
        ] as const) {
          // The current journal is the migrated one, kept from the first start.
          const db = join(dir, 'run.db');
          if (source === old) copyFileSync(old, db);
          const mb = (readFileSync(db).length / 1e6).toFixed(0);
          const s = await start(db, venue, simUrl);
          if (source === old) copyFileSync(db, current);
          console.log(
            `${venue.padEnd(6)} ${String(fills).padStart(8)} ${label.padEnd(9)} ${mb.padStart(5)} ${(s.firstHealthzMs / 1000).toFixed(1).padStart(10)} ${(s.longestHealthzMs / 1000).toFixed(2).padStart(10)} ${(s.runningMs / 1000).toFixed(1).padStart(10)} ${s.rssMB.toFixed(0).padStart(7)}`,
          );
        }
        for (const f of readdirSync(dir)) if (f.endsWith('.db') || f.includes('.db.')) rmSync(join(dir, f));
      }
  } finally {
    sim.kill('SIGTERM');
    await simExited;
  }
  console.log(`\nload average ${load()}; healthz: spawn to the first 200; longest: the slowest 200 while starting`);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
