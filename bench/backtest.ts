/**
 * Backtester throughput, printed next to its baselines (no assertions):
 * 1. replay once loaded (ticks/s), with the grid strategy (config/grid-btcusdt.json) and with a strategy that
 *    does nothing (the engine + matching + replay loop alone), next to a plain loop over the same columns (what
 *    the engine adds per tick is the difference);
 * 2. the cold first pass (read + scan + replay) against merely reading and JSON.parse-ing the same file, and the
 *    warm load from the column cache against the cold one;
 * 3. a sweep of 8 grid combinations on 1 and on 2 worker threads, on the synthetic recording (each combination
 *    replays over a million ticks), three rounds alternating, each round next to what the machine itself gives
 *    a second thread on an allocating loop; wall and CPU seconds, the CPU ratio and the speed-up as a share of
 *    the machine's (and, once, the machine on a compute-bound and a memory-bound loop); then the same
 *    combinations again on a warm pool of 2 workers (started and compiled by a first pass), what each of a
 *    long sweep's combinations costs, projected to 1,000 combinations over a year as the cold figure is.
 * 4. the peak RSS of `bot backtest` (the grid) over the synthetic recording, cold and warm, next to a bare node
 *    process and one that only loads the same columns (bench/peak-rss.ts).
 * On the sample recording and on a synthetic one 10x longer (1.2M ticks: the sample repeated with shifted
 * times and scaled prices, generated once into data/cache/bench/ and kept there). `npm run bench:backtest [-- --quick]` (--quick: the sample only,
 * sweep included, where start-up outweighs the work). `npm run bench:sweep [-- --quick --rounds N --combos N]`:
 * part 3 alone; `npm run bench:backtest -- --rss-only [--rounds N] [--against DIR]`: part 4
 * alone (--against: another checkout's build in the same rounds, for a before and after). The sweep's workers run from the compiled build, as `bot backtest` runs them (--tsx: the sources).
 */
import { spawnSync } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import { createGzip, gunzipSync } from 'node:zlib';
import { z } from 'zod';
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../src/backtest/job-settings.js';
import { runBacktest } from '../src/backtest/runner.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import * as sweepSources from '../src/backtest/sweep.js';
import { sweepGrid } from '../src/backtest/sweep.js';
import { loadTicks, type TickData } from '../src/backtest/tick-data.js';
import { onePairInstance } from '../src/config/strategy-file.js';
import { defineStrategy, type StrategyDefinition } from '../src/strategy/api.js';
import { againstBacktrader } from './against-backtrader.js';
import { peakRssRuns } from './peak-rss.js';
import { projectToYear, YEAR_TICKS } from './sweep-projection.js';
import { valueAt } from '../src/backtest/number-column.js';
import { tierUpLater } from '../src/ops/v8-tiering.js';

// V8's tier-up budget as `bot` sets it (src/cli.ts): the sweeps and runs here run as the command runs them.
tierUpLater();

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const GRID = 'config/grid-btcusdt.json';
/** Where the synthetic recording is kept (data/cache/ is not committed). */
const SYNTHETIC_DIR = 'data/cache/bench';
const quick = process.argv.includes('--quick');
const sweepOnly = process.argv.includes('--sweep');
const rssOnly = process.argv.includes('--rss-only');
const goalsOnly = process.argv.includes('--goals');
const numberArg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i < 0 ? fallback : Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name}: expected a whole number >= 1`);
  return value;
};
const ROUNDS = numberArg('rounds', 3);
/** The sweep as `bot backtest` runs it: its workers from the compiled build (bin/build.js), unless --tsx. */
const fromBuild = !process.argv.includes('--tsx');
const COMBOS = numberArg('combos', 8);

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

/**
 * The sample `times` times over, each copy later by the sample's span and its prices scaled by 1 + 2 % x k;
 * written once into `dir` and kept (data/cache/ is not committed).
 */
async function synthetic(dir: string, times: number): Promise<string> {
  const file = join(dir, `BTCUSDT-synthetic-x${times}.jsonl.gz`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const lines = gunzipSync(readFileSync(SAMPLE))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
  const [header, ...tickers] = lines;
  const parsed = tickers.map((l) => JSON.parse(l) as Record<string, number>);
  const span = parsed[parsed.length - 1]!.t! - parsed[0]!.t! + 15_000;
  const temp = `${file}.${process.pid}.tmp`;
  const gzip = createGzip();
  const out = gzip.pipe(createWriteStream(temp));
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
  renameSync(temp, file);
  return file;
}

/**
 * The recording's ticks in `n` files of about equal length, each with its header, in time order (as a recorder's
 * day files come), made once beside it in a folder of their own.
 */
async function splitRecording(file: string, n: number): Promise<string[]> {
  const folder = file.replace(/\.jsonl\.gz$/, `-in-${n}`);
  const parts = Array.from({ length: n }, (_, k) =>
    join(folder, `BTCUSDT-part-${String(k).padStart(2, '0')}.jsonl.gz`),
  );
  if (parts.every((p) => existsSync(p))) return parts;
  mkdirSync(folder, { recursive: true });
  const [header, ...tickers] = gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n');
  for (const [k, part] of parts.entries()) {
    const lines = tickers.slice(Math.floor((k * tickers.length) / n), Math.floor(((k + 1) * tickers.length) / n));
    const gzip = createGzip();
    const out = gzip.pipe(createWriteStream(`${part}.${process.pid}.tmp`));
    gzip.end(`${[header, ...lines].join('\n')}\n`);
    await finished(out);
    renameSync(`${part}.${process.pid}.tmp`, part);
  }
  return parts;
}

const idle = defineStrategy({ name: 'idle', params: z.object({}), onTick: () => undefined }) as StrategyDefinition;
const idleInstance = {
  config: onePairInstance({ name: 'idle', strategy: 'idle', symbol: 'BTCUSDT', schedule: '* * * * * *' }),
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

/**
 * The baseline of the replay: a plain loop over the same columns, reading every column of each tick of the
 * symbol and keeping a running figure from them (so that nothing is left out), as a replay that did nothing
 * else would.
 */
function plainLoop(data: TickData): number {
  const { sym, time, price, high, low, vb, vq } = data.columns;
  let acc = 0;
  let last = 0;
  for (let i = 0; i < data.length; i++) {
    if (sym[i] !== 0) continue;
    const p = valueAt(price, i);
    acc += valueAt(time, i) - last + p * 1e-9 + (valueAt(high, i) - valueAt(low, i)) * 1e-9;
    acc += (valueAt(vb, i) + valueAt(vq, i)) * 1e-12;
    last = valueAt(time, i);
  }
  return acc;
}

/**
 * The grid of config/grid-btcusdt.json in a plain loop over the same columns: the physical limit of replaying it
 * from columns, reading each tick's columns as the replay does. The ladder around the first price (5 levels each side, 0.3 % apart); a slot buys at its level
 * while the price is above it, its buy fills when a tick's price reaches it, then it sells one level up and its
 * sell fills when a price reaches that. Returns the fills (the engine's grid trades about as often).
 */
function plainGrid(data: TickData): number {
  const { sym, time, price, high, low, vb, vq } = data.columns;
  const levels = 5;
  const buyAt = new Float64Array(2 * levels);
  const sellAt = new Float64Array(2 * levels);
  // Per slot: 0 idle, 1 buy resting, 2 sell resting.
  const slot = new Uint8Array(2 * levels);
  let fills = 0;
  let ready = false;
  // What a ticker holds besides its price, read as the replay reads it (kept in a running figure).
  let seen = 0;
  for (let i = 0; i < data.length; i++) {
    if (sym[i] !== 0) continue;
    const p = valueAt(price, i);
    seen += valueAt(time, i) * 1e-12 + (valueAt(high, i) - valueAt(low, i) + valueAt(vb, i) + valueAt(vq, i)) * 1e-9;
    if (!ready) {
      const step = (p * 0.3) / 100;
      for (let j = -levels; j < levels; j++) {
        buyAt[j + levels] = Math.floor((p + step * j) * 100) / 100;
        sellAt[j + levels] = Math.ceil((p + step * (j + 1)) * 100) / 100;
      }
      ready = true;
    }
    for (let k = 0; k < levels; k++) {
      const s = slot[k];
      if (s === 0) {
        if (buyAt[k]! < p) slot[k] = 1;
      } else if (s === 1 ? p <= buyAt[k]! : p >= sellAt[k]!) {
        slot[k] = s === 1 ? 2 : 0;
        fills++;
      }
    }
  }
  return seen > -1 ? fills : -1;
}

/** The CPU seconds `fn` takes (this thread's process: the replay runs on it alone). */
async function cpuOf(fn: () => unknown): Promise<number> {
  const cpu0 = process.cpuUsage();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1e6;
}

/**
 * The grid's replay against the grid in a plain loop over the same columns, per CPU second (issue 39's goal: at
 * least 1/5 of it), alternating five rounds after a warm-up of each.
 */
async function againstPlainGrid(data: TickData, label: string): Promise<void> {
  const { sources } = await readConfigs([GRID]);
  const replay = () => runJob(sources, data, DEFAULT_JOB_SETTINGS);
  const fills = (await replay()).run.fills.length;
  const plainFills = plainGrid(data);
  const ours: number[] = [];
  const plain: number[] = [];
  for (let r = 0; r < 5; r++) {
    ours.push(await cpuOf(replay));
    plain.push(await cpuOf(() => plainGrid(data)));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const [o, p] = [median(ours), median(plain)];
  const ns = (s: number) => `${((s * 1e9) / data.length).toFixed(1)} ns a tick`;
  console.log(
    `  the grid's replay against a plain-JS grid loop over the same columns, ${label}, CPU, 5 rounds alternating:`,
  );
  console.log(`    replay (runJob, warm)     ${o.toFixed(3)} CPU s median (${ns(o)}), ${fills} fills`);
  console.log(`    plain grid loop           ${p.toFixed(3)} CPU s median (${ns(p)}), ${plainFills} fills`);
  console.log(
    `    replay per CPU second     1/${(o / p).toFixed(1)} of the plain loop's (goal >= 1/5: ${o / p <= 5 ? 'met' : 'not met'})`,
  );
}

async function replayRate(data: TickData, label: string): Promise<void> {
  const { sources } = await readConfigs([GRID]);
  const [grid] = await timed(() => runJob(sources, data, DEFAULT_JOB_SETTINGS));
  const gridS = await warm(5, () => runJob(sources, data, DEFAULT_JOB_SETTINGS));
  // The idle replay and the plain loop alternate, five rounds after a warm-up of each.
  await runIdle(data);
  plainLoop(data);
  const idleRuns: number[] = [];
  const plainRuns: number[] = [];
  for (let r = 0; r < 5; r++) {
    idleRuns.push((await timed(() => runIdle(data)))[1]);
    plainRuns.push((await timed(() => Promise.resolve(plainLoop(data))))[1]);
  }
  const stats = (runs: number[]) => {
    const sorted = [...runs].sort((a, b) => a - b);
    return { median: sorted[Math.floor(runs.length / 2)]!, best: sorted[0]! };
  };
  const idleS = stats(idleRuns);
  const plainS = stats(plainRuns);
  const noRefreshS = await warm(5, () => runIdle(data, 1e15));
  const rate = (s: { median: number; best: number }) =>
    `${fmt(data.length / s.median)} ticks/s median, ${fmt(data.length / s.best)} best (${s.median.toFixed(2)} s)`;
  const ns = (seconds: number) => `${((seconds * 1e9) / data.length).toFixed(1)} ns`;
  console.log(`  replay once loaded and warm (5 runs after a warm-up), ${label}: ${fmt(data.length)} ticks`);
  console.log(`    grid strategy            ${rate(gridS)}, ${grid.run.fills.length} fills`);
  console.log(`    idle strategy            ${rate(idleS)} (its schedule every second: 15 market jobs a tick)`);
  console.log(`    baseline: plain loop     ${rate(plainS)} over the same columns`);
  console.log(
    `    engine overhead a tick   ${ns(idleS.median - plainS.median)} median (${ns(idleS.best - plainS.best)} best): ` +
      `the idle replay is ${(idleS.median / plainS.median).toFixed(0)}x the plain loop (median against median)`,
  );
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
 * runSweep from the compiled build, made or brought up to date first, as `bot backtest` runs it (its worker
 * threads then load the build's sweep-worker.js, not the sources through tsx); with --tsx, from the sources.
 */
async function sweepModule(): Promise<typeof sweepSources> {
  if (!fromBuild) return sweepSources;
  const root = new URL('../', import.meta.url);
  const made = spawnSync(process.execPath, [new URL('bin/build.js', root).pathname], { stdio: 'inherit' });
  if (made.status !== 0) throw new Error('bin/build.js failed: run with --tsx to bench the sources');
  return (await import(new URL('dist/src/backtest/sweep.js', root).href)) as typeof sweepSources;
}

/** The loops machineScaling times on each thread; 'alloc' is the allocating one the sweep is read against. */
const LOOPS = {
  compute:
    'let x = 1; for (let i = 0; i < 3e8; i++) { x ^= x << 13; x ^= x >>> 17; x ^= x << 5; } if (x === 0) console.log(x);',
  alloc:
    "const s = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ a: i, b: 'x' + i, c: [i, i * 1.5] }))); " +
    'for (let i = 0; i < 1000; i++) JSON.parse(s);',
  memory:
    'const a = new Float64Array(1 << 22); for (let r = 0; r < 40; r++) for (let i = 0; i < a.length; i++) a[i] = a[i] * 1.0001 + i;',
} as const;

/**
 * One loop on each of n worker threads at once, timed inside each thread (its start-up left out): the slowest;
 * and the process's CPU seconds over the whole (every thread's, their short start-up included).
 */
async function loopOn(kind: keyof typeof LOOPS, n: number): Promise<{ seconds: number; cpu: number }> {
  const code = `const { parentPort } = require('node:worker_threads'); const t0 = performance.now(); ${LOOPS[kind]}
    parentPort.postMessage(performance.now() - t0);`;
  const cpu0 = process.cpuUsage();
  const times = await Promise.all(
    Array.from(
      { length: n },
      () => new Promise<number>((done) => new Worker(code, { eval: true }).once('message', done)),
    ),
  );
  const cpu = process.cpuUsage(cpu0);
  return { seconds: Math.max(...times) / 1000, cpu: (cpu.user + cpu.system) / 1e6 };
}

/** Two threads doing one thread's work each, against one: perfect scaling is 2x. */
const twoThreadFactor = (one: number, two: number) => (2 * one) / two;

/**
 * The sweep on 1 and on 2 workers, alternately, `rounds` times each, and in each round next to it the machine's
 * own 2-thread factor on an allocating loop (JSON.parse over and over: it allocates as a backtest does): on a
 * shared virtual machine a run can take a quarter longer than the one before, so only figures of the same round
 * make a ratio. Each run starts its pool (the threads' start-up, loading the code and warming up V8's compiler
 * are in both), and the CPU seconds are the process's over all its threads. Printed: each round; then the
 * medians of the 2-thread factor, of the wall and CPU seconds, of the CPU ratio (2 workers over 1; aim at most
 * 1.15) beside the allocating loop's own (the same work on 2 threads over 1: what two threads at once cost this
 * machine in CPU, with nothing of the pool's in it), and of the speed-up as a share of the machine's factor of
 * the same round (aim at least 0.9).
 */
async function sweepSpeedup(data: TickData, label: string, rounds: number, spacings: number): Promise<void> {
  const { sources } = await readConfigs([GRID]);
  // Smaller spacings place more orders: the costlier combinations come first, as the grid hands them out.
  const combos = sweepGrid([
    { key: 'spacingPct', values: Array.from({ length: spacings }, (_, i) => (0.15 + 0.05 * i).toFixed(2)) },
  ]);
  const job = { sources, data, settings: DEFAULT_JOB_SETTINGS, combos };
  const sweeps = await sweepModule();
  const { runSweep } = sweeps;
  type Run = { seconds: number; first: number; cpu: number; helpers: number };
  const sweep = async (workers: number): Promise<Run> => {
    let first = NaN;
    const helpers0 = helperThreadTimes();
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    await runSweep(job, workers, (p) => {
      if (p.runs === 1 && Number.isNaN(first)) first = (performance.now() - t0) / 1000;
    });
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    return { seconds, first, cpu: (cpu.user + cpu.system) / 1e6, helpers: helperThreadsCpu(helpers0) };
  };
  console.log(
    `  sweep of ${combos.length} grid combinations, ${label}: ${fmt(data.length)} ticks each, ${rounds} rounds ` +
      `alternating, workers run ${fromBuild ? 'from the compiled build' : 'the sources through tsx'} ` +
      '(a shared 2-core machine: wall figures move with the neighbours, compare within a round)',
  );
  /** machine: the allocating loop's 2-thread factor; machineCpu: its CPU on 2 threads over twice 1 thread's. */
  type Round = { machine: number; machineCpu: number; one: Run; two: Run };
  const done: Round[] = [];
  for (let r = 0; r < rounds; r++) {
    const alloc1 = await loopOn('alloc', 1);
    const alloc2 = await loopOn('alloc', 2);
    const one = await sweep(1);
    const two = await sweep(2);
    const round = {
      machine: twoThreadFactor(alloc1.seconds, alloc2.seconds),
      machineCpu: alloc2.cpu / (2 * alloc1.cpu),
      one,
      two,
    };
    done.push(round);
    const speedUp = one.seconds / two.seconds;
    console.log(
      `    round ${r + 1}: allocating loop ${alloc1.seconds.toFixed(2)} s on 1 thread, ${alloc2.seconds.toFixed(2)} s ` +
        `on 2 (${round.machine.toFixed(2)}x, CPU ${round.machineCpu.toFixed(2)}); sweep 1 worker ${one.seconds.toFixed(2)} s (${one.cpu.toFixed(1)} CPU s, ` +
        `first result ${one.first.toFixed(2)} s), 2 workers ${two.seconds.toFixed(2)} s (${two.cpu.toFixed(1)} CPU s, ` +
        `first result ${two.first.toFixed(2)} s): ${speedUp.toFixed(2)}x = ${(speedUp / round.machine).toFixed(2)} ` +
        `of the machine's; CPU ${(two.cpu / one.cpu).toFixed(2)}; V8's helper threads ${one.helpers.toFixed(2)} ` +
        `CPU s on 1 worker, ${two.helpers.toFixed(2)} on 2`,
    );
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const of = (pick: (r: Round) => number) => median(done.map(pick));
  const rate = (s: number) => `${fmt((combos.length * data.length) / s)} ticks/s`;
  const [wall1, wall2] = [of((r) => r.one.seconds), of((r) => r.two.seconds)];
  const [cpu1, cpu2] = [of((r) => r.one.cpu), of((r) => r.two.cpu)];
  console.log(`    medians over the rounds:`);
  console.log(`      machine, 2 threads of an allocating loop  ${of((r) => r.machine).toFixed(2)}x`);
  console.log(
    `      sweep on 1 worker                        ${wall1.toFixed(2)} s (${rate(wall1)}), ${cpu1.toFixed(1)} CPU s`,
  );
  console.log(
    `      sweep on 2 workers                       ${wall2.toFixed(2)} s (${rate(wall2)}), ${cpu2.toFixed(1)} CPU s`,
  );
  console.log(
    `      wall speed-up on 2 workers               ${of((r) => r.one.seconds / r.two.seconds).toFixed(2)}x = ` +
      `${of((r) => r.one.seconds / r.two.seconds / r.machine).toFixed(2)} of the machine's factor in the same round (aim >= 0.90)`,
  );
  console.log(
    `      CPU seconds, 2 workers over 1            ${of((r) => r.two.cpu / r.one.cpu).toFixed(2)} (aim <= 1.15); ` +
      `the allocating loop's own, the same work on 2 threads over 1: ${of((r) => r.machineCpu).toFixed(2)}`,
  );
  const minutes = projectToYear(wall2 / combos.length, data.length, 1000);
  // The same from CPU seconds, both cores busy: what the machine gives when nothing else runs on it.
  const quiet = projectToYear(cpu2 / combos.length / 2, data.length, 1000);
  console.log(
    `      projected: 1,000 combinations over a year of one-minute candles of one pair (${fmt(YEAR_TICKS)} ticks) ` +
      `on 2 workers: ${minutes.toFixed(1)} min (goal <= 10: ${minutes <= 10 ? 'met' : 'not met'}; each combination's ` +
      `wall seconds here scaled by the ticks); from the CPU seconds on 2 workers over 2 cores (a quiet machine) ` +
      `${quiet.toFixed(1)} min (${quiet <= 10 ? 'met' : 'not met'})`,
  );
  const [helpers1, helpers2] = [of((r) => r.one.helpers), of((r) => r.two.helpers)];
  console.log(
    `      V8's helper threads (compiler, collector) ${helpers1.toFixed(2)} CPU s on 1 worker (${(helpers1 / wall1).toFixed(2)} ` +
      `of a core beside it), ${helpers2.toFixed(2)} on 2 (sharing the workers' cores)`,
  );
  await warmPool(sweeps.SweepPool, job, rounds);
}

/**
 * The same combinations on a pool of 2 workers that ran them once already: what each of a long sweep's
 * combinations costs once its workers have started and compiled their code (a 1,000-combination sweep pays that
 * once, the sweep of a few above on every one of them), projected to 1,000 combinations over a year.
 */
async function warmPool(
  SweepPool: typeof sweepSources.SweepPool,
  job: Parameters<typeof sweepSources.runSweep>[0],
  rounds: number,
): Promise<void> {
  const pool = new SweepPool(2, job.sources, job.settings);
  try {
    pool.setData(job.data);
    await pool.run(job);
    const runs: { seconds: number; cpu: number }[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      await pool.run(job);
      const cpu = process.cpuUsage(cpu0);
      runs.push({ seconds: (performance.now() - t0) / 1000, cpu: (cpu.user + cpu.system) / 1e6 });
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const [wall, cpu] = [median(runs.map((r) => r.seconds)), median(runs.map((r) => r.cpu))];
    const n = job.combos.length;
    const fromWall = projectToYear(wall / n, job.data.length, 1000);
    const fromCpu = projectToYear(cpu / n / 2, job.data.length, 1000);
    console.log(
      `      the same ${n} again on a warm pool of 2 workers (started, compiled; ${rounds} runs after one): ` +
        `${wall.toFixed(2)} s, ${cpu.toFixed(1)} CPU s; 1,000 combinations over a year projected to ` +
        `${fromWall.toFixed(1)} min from the wall time (goal <= 10: ${fromWall <= 10 ? 'met' : 'not met'}), ` +
        `${fromCpu.toFixed(1)} min from the CPU seconds over 2 cores (${fromCpu <= 10 ? 'met' : 'not met'})`,
    );
  } finally {
    await pool.close();
  }
}

/**
 * CPU seconds of each thread of the process but the main one (Linux: /proc/self/task; empty elsewhere). After a
 * sweep the pool's workers are gone, and the threads left are V8's platform threads (the background jobs of its
 * optimising compiler and garbage collector, for every isolate) and libuv's.
 */
function helperThreadTimes(): Map<string, number> {
  const times = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      if (tid === String(process.pid)) continue;
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      // utime and stime: fields 14 and 15, counted after the command name's closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      times.set(tid, (Number(fields[11]) + Number(fields[12])) / 100);
    }
  } catch {
    // No /proc: no figure.
  }
  return times;
}

/** CPU seconds the threads alive now (but the main one) took since `before` (helperThreadTimes); NaN without /proc. */
function helperThreadsCpu(before: Map<string, number>): number {
  const now = helperThreadTimes();
  if (now.size === 0) return NaN;
  let sum = 0;
  for (const [tid, cpu] of now) sum += cpu - (before.get(tid) ?? 0);
  return sum;
}

/**
 * What this machine gives a second thread, for reading the sweep's figure: the same loop on 1 and on 2 worker
 * threads at once, timed inside each thread (its start-up left out): on registers alone (a xorshift chain), on
 * data that stays in cache (a small JSON parsed over and over, which also allocates, as a backtest does) and
 * streaming through memory (32 MB a thread). On a shared virtual machine the last two move with the
 * neighbours' load while the first stays near 2x.
 */
async function machineScaling(): Promise<void> {
  const line: string[] = [];
  for (const kind of ['compute', 'alloc', 'memory'] as const) {
    let one = Infinity;
    let two = Infinity;
    for (let r = 0; r < 3; r++) {
      one = Math.min(one, (await loopOn(kind, 1)).seconds);
      two = Math.min(two, (await loopOn(kind, 2)).seconds);
    }
    line.push(
      `${kind === 'alloc' ? 'allocating (cache-bound)' : `${kind}-bound`} ${twoThreadFactor(one, two).toFixed(2)}x`,
    );
  }
  console.log(`  this machine, 2 threads against 1 on the same loop: ${line.join(', ')}`);
}

/** --backtrader DIR (a folder holding its package) or --backtrader-cpu SECONDS (its figure as an input). */
function backtraderFlags(): { backtrader?: string; backtraderCpu?: number } {
  const at = (name: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const folder = at('backtrader');
  const cpu = at('backtrader-cpu');
  if (cpu !== undefined && !(Number(cpu) > 0)) throw new Error('--backtrader-cpu: expected CPU seconds, a number > 0');
  return { backtrader: folder, backtraderCpu: cpu === undefined ? undefined : Number(cpu) };
}

const printLoad = () =>
  console.log(
    `  load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')} (2 cores, shared with other work)`,
  );

const dir = mkdtempSync(join(tmpdir(), 'bench-backtest-'));
try {
  printLoad();
  if (goalsOnly) {
    // Issue 39's goals on the synthetic recording: against backtrader, against the plain grid loop, peak RSS.
    const file = await synthetic(SYNTHETIC_DIR, 10);
    const data = await loadTicks([file]);
    const label = `synthetic 10x (${fmt(data.length)} ticks)`;
    againstBacktrader({ data, recording: file, config: GRID, dir, label, rounds: ROUNDS, ...backtraderFlags() });
    await againstPlainGrid(data, label);
    peakRssRuns({
      file,
      parts: await splitRecording(file, 10),
      config: GRID,
      dir,
      label,
      rounds: ROUNDS,
      ticks: data.length,
    });
    printLoad();
  } else if (rssOnly) {
    // Part 4 alone (npm run bench:backtest -- --rss-only [--rounds N] [--against DIR]): children do the work.
    const file = await synthetic(SYNTHETIC_DIR, 10);
    const ticks = (await loadTicks([file])).length;
    const at = process.argv.indexOf('--against');
    const against = at < 0 ? undefined : process.argv[at + 1];
    const label = `synthetic 10x (${fmt(ticks)} ticks)`;
    const parts = await splitRecording(file, 10);
    peakRssRuns({ file, parts, config: GRID, dir, label, rounds: ROUNDS, ticks, against });
  } else if (sweepOnly) {
    // The sweep alone (npm run bench:sweep): on the synthetic recording, or the sample with --quick.
    const data = quick ? await loadTicks([SAMPLE]) : await loadTicks([await synthetic(SYNTHETIC_DIR, 10)]);
    await sweepSpeedup(data, quick ? 'sample' : 'synthetic 10x', ROUNDS, COMBOS);
  } else {
    const sample = await coldPass(SAMPLE, 'sample');
    await replayRate(sample, 'sample');
    await machineScaling();
    if (quick) {
      await sweepSpeedup(sample, 'sample', 1, COMBOS);
    } else {
      const [file, genS] = await timed(() => synthetic(SYNTHETIC_DIR, 10));
      console.log(`  (synthetic 10x recording ${file}, ready in ${genS.toFixed(1)} s)`);
      const long = await coldPass(file, 'synthetic 10x');
      await replayRate(long, 'synthetic 10x');
      await againstPlainGrid(long, 'synthetic 10x');
      const label10 = `synthetic 10x (${fmt(long.length)} ticks)`;
      againstBacktrader({
        data: long,
        recording: file,
        config: GRID,
        dir,
        label: label10,
        rounds: ROUNDS,
        ...backtraderFlags(),
      });
      const parts = await splitRecording(file, 10);
      const label = `synthetic 10x (${fmt(long.length)} ticks)`;
      peakRssRuns({ file, parts, config: GRID, dir, label, ticks: long.length });
      await sweepSpeedup(long, 'synthetic 10x', ROUNDS, COMBOS);
    }
  }
  printLoad();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
