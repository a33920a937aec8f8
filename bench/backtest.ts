/**
 * Backtester throughput, printed next to its baselines (no assertions):
 * 1. replay once loaded (ticks/s), with the grid strategy (config/grid-btcusdt.json) and with a strategy that
 *    does nothing (the engine + matching + replay loop alone);
 * 2. the cold first pass (read + scan + replay) against merely reading and JSON.parse-ing the same file, and the
 *    warm load from the column cache against the cold one;
 * 3. a sweep of 8 grid combinations on 1 and on 2 worker threads, on the synthetic recording (each combination
 *    replays over a million ticks), three rounds alternating; next to what the machine itself gives a second
 *    thread on a cache-bound and on a memory-bound loop.
 * On the sample recording and on a synthetic one 10x longer (the sample repeated with shifted times and
 * scaled prices, written to a temp dir). `npm run bench:backtest [-- --quick]` (--quick: the sample only,
 * sweep included, where start-up outweighs the work).
 */
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import { createGzip, gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { DEFAULT_JOB_SETTINGS, runJob } from '../src/backtest/job.js';
import { runBacktest } from '../src/backtest/runner.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { runSweep, sweepGrid } from '../src/backtest/sweep.js';
import { loadTicks, type TickData } from '../src/backtest/tick-data.js';
import { StrategyFileSchema } from '../src/config/strategy-file.js';
import { defineStrategy, type StrategyDefinition } from '../src/strategy/api.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const GRID = 'config/grid-btcusdt.json';
const quick = process.argv.includes('--quick');

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await fn();
  return [value, (performance.now() - t0) / 1000];
}

/** The baseline: gunzip the whole file, split the lines, JSON.parse each. */
function bareParse(file: string): number {
  const text = gunzipSync(readFileSync(file)).toString('utf8');
  let n = 0;
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    if (nl > start) {
      JSON.parse(text.slice(start, nl));
      n++;
    }
    start = nl + 1;
  }
  return n;
}

/** The sample `times` times over, each copy later by the sample's span and its prices scaled by 1 + 2 % x k. */
async function synthetic(dir: string, times: number): Promise<string> {
  const lines = gunzipSync(readFileSync(SAMPLE))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
  const [header, ...tickers] = lines;
  const parsed = tickers.map((l) => JSON.parse(l) as Record<string, number>);
  const span = parsed[parsed.length - 1]!.t! - parsed[0]!.t! + 15_000;
  const file = join(dir, `BTCUSDT-synthetic-x${times}.jsonl.gz`);
  const gzip = createGzip();
  const out = gzip.pipe(createWriteStream(file));
  gzip.write(`${header}\n`);
  for (let k = 0; k < times; k++) {
    const scale = 1 + 0.02 * k;
    let chunk = '';
    for (const t of parsed) {
      chunk += `${JSON.stringify({ ...t, t: t.t! + k * span, p: Math.round(t.p! * scale * 100) / 100 })}\n`;
      if (chunk.length > 1 << 20) {
        if (!gzip.write(chunk)) await new Promise((r) => gzip.once('drain', r));
        chunk = '';
      }
    }
    gzip.write(chunk);
  }
  gzip.end();
  await finished(out);
  return file;
}

const idle = defineStrategy({ name: 'idle', params: z.object({}), onTick: () => undefined }) as StrategyDefinition;
const idleInstance = {
  config: StrategyFileSchema.parse({ name: 'idle', strategy: 'idle', symbol: 'BTCUSDT', schedule: '* * * * * *' }),
  definition: idle,
  params: {},
};
const runIdle = (data: TickData, refreshMs?: number) =>
  runBacktest([idleInstance], data, { balances: { USDT: '10000' }, refreshMs });

/** Seconds of `runs` runs after one warm-up (the JIT's first pass is the cold figure, printed apart). */
async function warm(runs: number, fn: () => Promise<unknown>): Promise<{ median: number; best: number }> {
  await fn();
  const seconds: number[] = [];
  for (let i = 0; i < runs; i++) seconds.push((await timed(fn))[1]);
  seconds.sort((a, b) => a - b);
  return { median: seconds[Math.floor(runs / 2)]!, best: seconds[0]! };
}

async function replayRate(data: TickData, label: string): Promise<void> {
  const { sources } = await readConfigs([GRID]);
  const [grid] = await timed(() => runJob(sources, data, DEFAULT_JOB_SETTINGS));
  const gridS = await warm(5, () => runJob(sources, data, DEFAULT_JOB_SETTINGS));
  const idleS = await warm(5, () => runIdle(data));
  const noRefreshS = await warm(5, () => runIdle(data, 1e15));
  const rate = (s: { median: number; best: number }) =>
    `${fmt(data.length / s.median)} ticks/s median, ${fmt(data.length / s.best)} best (${s.median.toFixed(2)} s)`;
  console.log(`  replay once loaded and warm (5 runs after a warm-up), ${label}: ${fmt(data.length)} ticks`);
  console.log(`    grid strategy            ${rate(gridS)}, ${grid.run.fills.length} fills`);
  console.log(`    idle strategy            ${rate(idleS)}`);
  console.log(`    idle, refresh never due  ${rate(noRefreshS)}`);
}

async function coldPass(file: string, label: string): Promise<TickData> {
  // Best of two each, the baseline and the load alternating: the first of anything pays for V8's compiler.
  const [lines, bare1] = await timed(() => Promise.resolve(bareParse(file)));
  const [, load1] = await timed(() => loadTicks([file]));
  const [, bare2] = await timed(() => Promise.resolve(bareParse(file)));
  const [loaded, load2] = await timed(() => loadTicks([file]));
  const bareS = Math.min(bare1, bare2);
  const loadS = Math.min(load1, load2);
  const { sources } = await readConfigs([GRID]);
  const cache = mkdtempSync(join(tmpdir(), 'bench-columns-'));
  try {
    const [, gridS] = await timed(() => runJob(sources, loaded, DEFAULT_JOB_SETTINGS));
    const [again, againS] = await timed(() => loadTicks([file]));
    const [, idleS] = await timed(() => runIdle(again));
    const [, writeS] = await timed(() => loadTicks([file], { cacheDir: cache }));
    const warmS: number[] = [];
    for (let i = 0; i < 3; i++) warmS.push((await timed(() => loadTicks([file], { cacheDir: cache })))[1]);
    const warmBest = Math.min(...warmS);
    const line = (what: string, seconds: number) =>
      console.log(
        `    ${what.padEnd(44)} ${fmt(lines / seconds)} lines/s (${seconds.toFixed(2)} s) = ${(bareS / seconds).toFixed(2)}x the baseline rate`,
      );
    console.log(`  cold first pass, ${label}: ${fmt(lines)} lines`);
    console.log(
      `    ${'baseline: gunzip + split + JSON.parse'.padEnd(44)} ${fmt(lines / bareS)} lines/s (${bareS.toFixed(2)} s, best of 2)`,
    );
    line('load into columns (read + scan + sha256)', loadS);
    console.log(
      `      (runs: baseline ${bare1.toFixed(2)}, ${bare2.toFixed(2)} s; load ${load1.toFixed(2)}, ${load2.toFixed(2)} s)`,
    );
    line('load + replay, grid strategy', loadS + gridS);
    line('load + replay, idle strategy', againS + idleS);
    line('load, writing the column cache', writeS);
    line('warm: from the column cache (best of 3)', warmBest);
    console.log(
      `    ${'warm against cold (the load above)'.padEnd(44)} ${(loadS / warmBest).toFixed(1)}x the cold rate; ` +
        `warm runs ${warmS.map((x) => x.toFixed(3)).join(', ')} s`,
    );
    return loaded;
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

/**
 * The sweep on 1 and on 2 workers, alternately, `rounds` times each: on a shared virtual machine a run can
 * take a quarter longer than the one before, so single timings do not make a ratio. Best and median of each;
 * and, to show where a second worker's time goes, when the first combination finished (each worker starts,
 * loads the code and warms up V8's compiler before its first result) and the process's CPU seconds over all
 * threads (the same combinations on two workers cost more CPU by each worker's own start-up and compilation).
 */
async function sweepSpeedup(data: TickData, label: string, rounds: number): Promise<void> {
  const { sources } = await readConfigs([GRID]);
  // Smaller spacings place more orders: the costlier combinations come first, as the grid hands them out.
  const combos = sweepGrid([
    { key: 'spacingPct', values: ['0.15', '0.2', '0.25', '0.3', '0.35', '0.4', '0.45', '0.5'] },
  ]);
  const job = { sources, data, settings: DEFAULT_JOB_SETTINGS, combos };
  type Round = { seconds: number; first: number; cpu: number };
  const timings: Record<1 | 2, Round[]> = { 1: [], 2: [] };
  for (let r = 0; r < rounds; r++) {
    for (const workers of [1, 2] as const) {
      let first = NaN;
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await runSweep(job, workers, (p) => {
        if (p.runs === 1 && Number.isNaN(first)) first = (performance.now() - t0) / 1000;
      });
      const cpu = process.cpuUsage(cpu0);
      timings[workers].push({ seconds: (performance.now() - t0) / 1000, first, cpu: (cpu.user + cpu.system) / 1e6 });
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const stats = (rs: Round[]) => {
    const seconds = rs.map((x) => x.seconds);
    return {
      best: Math.min(...seconds),
      median: median(seconds),
      first: median(rs.map((x) => x.first)),
      cpu: median(rs.map((x) => x.cpu)),
      runs: seconds.map((x) => x.toFixed(2)).join(', '),
    };
  };
  const one = stats(timings[1]);
  const two = stats(timings[2]);
  const rate = (s: number) => `${fmt((combos.length * data.length) / s)} ticks/s`;
  console.log(
    `  sweep of ${combos.length} grid combinations, ${label}: ${fmt(data.length)} ticks each, ${rounds} rounds`,
  );
  for (const [name, s] of [
    ['1 worker ', one],
    ['2 workers', two],
  ] as const) {
    console.log(
      `    ${name}   best ${s.best.toFixed(2)} s (${rate(s.best)}); runs ${s.runs} s; ` +
        `first result after ${s.first.toFixed(2)} s; ${s.cpu.toFixed(1)} CPU s (median)`,
    );
  }
  console.log(
    `    speed-up    ${(one.best / two.best).toFixed(2)}x (best against best), ${(one.median / two.median).toFixed(2)}x (median against median)`,
  );
}

/**
 * What this machine gives a second thread, for reading the sweep's figure: the same loop on 1 and on 2 worker
 * threads at once, timed inside each thread (its start-up left out): on registers alone (a xorshift chain), on
 * data that stays in cache (a small JSON parsed over and over, which also allocates, as a backtest does) and
 * streaming through memory (32 MB a thread). On a shared virtual machine the last two move with the
 * neighbours' load while the first stays near 2x.
 */
async function machineScaling(): Promise<void> {
  const code = (kind: string) => `
    const { parentPort } = require('node:worker_threads');
    const t0 = performance.now();
    if (${JSON.stringify(kind)} === 'compute') {
      let x = 1;
      for (let i = 0; i < 3e8; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; }
      if (x === 0) console.log(x);
    } else if (${JSON.stringify(kind)} === 'cache') {
      const s = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ a: i, b: 'x' + i, c: [i, i * 1.5] })));
      for (let i = 0; i < 1000; i++) JSON.parse(s);
    } else {
      const a = new Float64Array(1 << 22);
      for (let r = 0; r < 40; r++) for (let i = 0; i < a.length; i++) a[i] = a[i] * 1.0001 + i;
    }
    parentPort.postMessage(performance.now() - t0);`;
  /** The slowest thread's loop time. */
  const loop = async (kind: string, n: number): Promise<number> =>
    Math.max(
      ...(await Promise.all(
        Array.from(
          { length: n },
          () => new Promise<number>((done) => new Worker(code(kind), { eval: true }).once('message', done)),
        ),
      )),
    );
  const line: string[] = [];
  for (const kind of ['compute', 'cache', 'memory']) {
    let one = Infinity;
    let two = Infinity;
    for (let r = 0; r < 3; r++) {
      one = Math.min(one, await loop(kind, 1));
      two = Math.min(two, await loop(kind, 2));
    }
    // Two threads doing one thread's work each: perfect scaling takes the same time as one.
    line.push(`${kind}-bound ${((2 * one) / two).toFixed(2)}x`);
  }
  console.log(`  this machine, 2 threads against 1 on the same loop: ${line.join(', ')}`);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-backtest-'));
try {
  const sample = await coldPass(SAMPLE, 'sample');
  await replayRate(sample, 'sample');
  await machineScaling();
  if (quick) {
    await sweepSpeedup(sample, 'sample', 1);
  } else {
    const [file, genS] = await timed(() => synthetic(dir, 10));
    console.log(`  (synthetic 10x recording written in ${genS.toFixed(1)} s)`);
    const long = await coldPass(file, 'synthetic 10x');
    await replayRate(long, 'synthetic 10x');
    await sweepSpeedup(long, 'synthetic 10x', 3);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
