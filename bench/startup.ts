/**
 * `npm run bench:startup`: what running the compiled build (`node bin/bot.js`, which checks dist/ against the
 * sources first) saves over running the TypeScript through tsx (`node --import tsx src/cli.ts`, what `npm start`
 * and `bot` did before), in the same run with the two alternated round by round. For each command, the wall
 * time from spawning to exit (to "daemon running" for the daemon) and the process's peak RSS (`/usr/bin/time`;
 * the daemon's VmHWM when it runs), the median of ROUNDS rounds (default 5), and the ratios.
 * Commands: --version, check-config on the shipped config, a backtest of one day of the sample (the column
 * cache warm), a sweep of 4 combinations on 2 workers, and the daemon on paper until it runs ("daemon running":
 * its jobs scheduled, the replay started; printed against issue 39's goal of 5 s on a quiet machine).
 * `--against DIR` adds a third way, another checkout's build (its bin/bot.js, e.g. one of the commit before a
 * change of the build: `git worktree add` or `git archive` it, with a node_modules), alternated with the two, and
 * prints this build's CPU seconds against it (the CPU a process costs, what a sweep's workers and every
 * `bot status` pay). ROUNDS=n sets the rounds.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { daemonEnv, ROOT } from '../test/e2e/daemon-process.js';

const ROUNDS = Number(process.env.ROUNDS ?? '5');
const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');

const againstAt = process.argv.indexOf('--against');
const against = againstAt < 0 ? undefined : process.argv[againstAt + 1];
if (againstAt >= 0 && (against === undefined || !existsSync(join(against, 'bin/bot.js'))))
  throw new Error('--against DIR: expected a checkout with bin/bot.js (and its node_modules)');

const ways = {
  tsx: ['--import', 'tsx', join(ROOT, 'src/cli.ts')],
  compiled: [join(ROOT, 'bin/bot.js')],
  against: against === undefined ? [] : [resolve(against, 'bin/bot.js')],
};
type Way = keyof typeof ways;
const WAYS: Way[] = against === undefined ? ['tsx', 'compiled'] : ['tsx', 'compiled', 'against'];

const DAY = ['--from', '2023-03-08', '--to', '2023-03-09'];

/** The grid over one day of the sample, into `out`. */
const gridDay = (out: string) => [
  'backtest',
  ...['--config', join(ROOT, 'config/grid-btcusdt.json'), '--data', SAMPLE, ...DAY],
  ...['--out', out, '--force'],
];

const commands: Record<string, (out: string) => string[]> = {
  '--version': () => ['--version'],
  'check-config': () => ['check-config', join(ROOT, 'config')],
  backtest: gridDay,
  'sweep, 2 workers': (out) => [...gridDay(out), '--sweep', 'spacingPct=0.2,0.3,0.4,0.5', '--workers', '2'],
};

interface Sample {
  ms: number;
  rssMB: number;
  /** CPU seconds, user and system, start to exit (the daemon's: all its threads, from its start to "daemon running"). */
  cpu: number;
}

function once(way: Way, args: string[]): Sample {
  const times = join(dir, 'time.txt');
  const t = performance.now();
  const run = spawnSync('/usr/bin/time', ['-o', times, '-f', '%M %U %S', process.execPath, ...ways[way], ...args], {
    cwd: ROOT,
    env: daemonEnv({}),
    encoding: 'utf8',
  });
  const ms = performance.now() - t;
  if (run.status !== 0) throw new Error(`${way} ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  const [kb, user, sys] = readFileSync(times, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { ms, rssMB: kb! / 1024, cpu: user! + sys! };
}

/** The daemon on paper (the shipped config, the samples, lockstep) from spawn to "daemon running", and its VmHWM then. */
async function daemon(way: Way, round: number): Promise<Sample> {
  const db = join(dir, `${way}-${round}.db`);
  const env = daemonEnv({ DB_PATH: db, PAPER_LOCKSTEP: 'true', KILL_SWITCH_FILE: join(dir, 'KILL') });
  const t = performance.now();
  const child = spawn(process.execPath, [...ways[way], 'run'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const ms = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString('utf8');
      if (text.includes('"daemon running"')) resolve(performance.now() - t);
    });
    child.once('exit', (code) => reject(new Error(`the daemon (${way}) exited ${code}: ${text.slice(-500)}`)));
  });
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  // utime and stime (fields 14 and 15, after the command's name in parentheses), in clock ticks: 100 a second.
  const line = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
  const stat = line.slice(line.lastIndexOf(')') + 2).split(' ');
  const cpu = (Number(stat[11]) + Number(stat[12])) / 100;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  rmSync(db, { force: true });
  rmSync(`${db}.lock`, { force: true });
  return { ms, rssMB: hwm / 1024, cpu };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  // The builds brought up to date first: the rounds time the check, not a first compile (about half a second).
  spawnSync(process.execPath, [join(ROOT, 'bin/build.js')], { cwd: ROOT, stdio: 'inherit' });
  if (against !== undefined) spawnSync(process.execPath, [join(against, 'bin/build.js')], { stdio: 'inherit' });
  const samples = new Map<string, Record<Way, Sample[]>>();
  const names = [...Object.keys(commands), 'daemon to running'];
  for (const name of names) samples.set(name, { tsx: [], compiled: [], against: [] });
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (the machine is shared: absolute figures are noisy)`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    process.stdout.write(`round ${round + 1}/${ROUNDS}…\n`);
    // Alternated: in order on even rounds, in reverse on odd ones.
    const order: Way[] = round % 2 === 0 ? WAYS : [...WAYS].reverse();
    for (const [name, args] of Object.entries(commands))
      for (const way of order)
        samples.get(name)![way].push(once(way, args(join(dir, `${way}-${name.replace(/\W+/g, '')}`))));
    for (const way of order) samples.get('daemon to running')![way].push(await daemon(way, round));
  }
  console.log(
    `\n${'command'.padEnd(20)} ${'tsx ms'.padStart(8)} ${'built ms'.padStart(9)} ${'tsx/built'.padStart(10)}   ${'tsx MB'.padStart(7)} ${'built MB'.padStart(9)} ${'saved MB'.padStart(9)}`,
  );
  for (const name of names) {
    const s = samples.get(name)!;
    const [tMs, cMs] = [median(s.tsx.map((x) => x.ms)), median(s.compiled.map((x) => x.ms))];
    const [tMb, cMb] = [median(s.tsx.map((x) => x.rssMB)), median(s.compiled.map((x) => x.rssMB))];
    console.log(
      `${name.padEnd(20)} ${tMs.toFixed(0).padStart(8)} ${cMs.toFixed(0).padStart(9)} ${(tMs / cMs).toFixed(2).padStart(10)}   ${tMb.toFixed(0).padStart(7)} ${cMb.toFixed(0).padStart(9)} ${(tMb - cMb).toFixed(0).padStart(9)}`,
    );
  }
  console.log(`\nmedians of ${ROUNDS} rounds; peak RSS per process (a sweep's includes its worker threads)`);
  if (against !== undefined) {
    console.log(`\nCPU seconds (user + system), this build against ${against}'s, medians of ${ROUNDS} rounds:`);
    console.log(
      `${'command'.padEnd(20)} ${'against'.padStart(8)} ${'this'.padStart(8)} ${'this/against'.padStart(13)}`,
    );
    for (const name of names) {
      const s = samples.get(name)!;
      const [a, c] = [median(s.against.map((x) => x.cpu)), median(s.compiled.map((x) => x.cpu))];
      console.log(
        `${name.padEnd(20)} ${a.toFixed(3).padStart(8)} ${c.toFixed(3).padStart(8)} ${(c / a).toFixed(2).padStart(13)}`,
      );
    }
  }
  const built = samples.get('daemon to running')!.compiled;
  const ready = median(built.map((x) => x.ms)) / 1000;
  const cpu = median(built.map((x) => x.cpu));
  console.log(
    `paper daemon (the shipped configs on the samples, from the build) ready after ${ready.toFixed(2)} s: ` +
      `goal <= 5 s on a quiet machine (${ready <= 5 ? 'met' : 'not met'} here, load average ${loadavg()[0]!.toFixed(1)}); ` +
      `${cpu.toFixed(2)} CPU s to get there, what the wall time comes down to on a quiet machine, but for its waits`,
  );
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
