/**
 * What a strategy on candles and indicators costs against the grid, on the sample recording (no assertions):
 * 1. per tick: a backtest of config/ema-trend-btcusdt.json (EMA trend, RSI filter, ATR stop) against one of
 *    config/grid-btcusdt.json; the target is at most twice the grid's;
 * 2. a sweep of 18 ema-trend combinations (fast x slow x rsiMax) against the grid's 9 (levels x spacingPct) on
 *    the default workers; the target is at most three times the grid's time.
 * Measured in CPU seconds of the process (a shared machine's load does not count), the two timed alternately,
 * several rounds, with the best and the median of each; the load average is printed with them. `npm run bench:strategies`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { DEFAULT_JOB_SETTINGS, runJob } from '../src/backtest/job.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { defaultWorkers, runSweep, sweepGrid } from '../src/backtest/sweep.js';
import { loadTicks } from '../src/backtest/tick-data.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';

/**
 * CPU seconds of the process (every thread: a sweep's workers too). On a machine shared with other work the
 * wall clock measures the neighbours as much as the code; the CPU time this process spent does not.
 */
async function seconds(fn: () => Promise<unknown>): Promise<number> {
  const t0 = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / 1e6;
}

/** Alternate runs of `a` and `b` (after one warm-up each): best and median seconds of each. */
async function alternate(rounds: number, a: () => Promise<unknown>, b: () => Promise<unknown>) {
  await a();
  await b();
  const xs: number[] = [];
  const ys: number[] = [];
  for (let i = 0; i < rounds; i++) {
    xs.push(await seconds(a));
    ys.push(await seconds(b));
  }
  const stats = (v: number[]) => {
    const sorted = [...v].sort((p, q) => p - q);
    return { best: sorted[0]!, median: sorted[Math.floor(v.length / 2)]! };
  };
  return [stats(xs), stats(ys)] as const;
}

const data = await loadTicks([SAMPLE]);
const grid = await readConfigs(['config/grid-btcusdt.json']);
const trend = await readConfigs(['config/ema-trend-btcusdt.json']);

const ns = (s: number) => ((s / data.length) * 1e9).toFixed(0);
const [gridS, trendS] = await alternate(
  7,
  () => runJob(grid.sources, data, DEFAULT_JOB_SETTINGS),
  () => runJob(trend.sources, data, DEFAULT_JOB_SETTINGS),
);
const trades = (await runJob(trend.sources, data, DEFAULT_JOB_SETTINGS)).run.fills.length;
// The same on 15-minute candles: six times the orders, and an order costs a backtest far more than a tick.
const quarter = { timeframe: '15m' };
const [gridAgain, quarterS] = await alternate(
  5,
  () => runJob(grid.sources, data, DEFAULT_JOB_SETTINGS),
  () => runJob(trend.sources, data, DEFAULT_JOB_SETTINGS, quarter),
);
const quarterTrades = (await runJob(trend.sources, data, DEFAULT_JOB_SETTINGS, quarter)).run.fills.length;
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores`,
);
console.log(
  `per tick, CPU time, ${data.length.toLocaleString('en-US')} ticks of ${SAMPLE}, 7 warm runs each, alternated:`,
);
console.log(`  grid        best ${ns(gridS.best)} ns/tick, median ${ns(gridS.median)} ns/tick`);
console.log(`  ema-trend   best ${ns(trendS.best)} ns/tick, median ${ns(trendS.median)} ns/tick, ${trades} fills`);
console.log(
  `  ratio       ${(trendS.best / gridS.best).toFixed(2)}x the grid's best, ${(trendS.median / gridS.median).toFixed(2)}x its median (target: at most 2x)`,
);
console.log(
  `  ema-trend on 15m candles: best ${ns(quarterS.best)} ns/tick, ${quarterTrades} fills: ` +
    `${(quarterS.best / gridAgain.best).toFixed(2)}x the grid's best, ${(quarterS.median / gridAgain.median).toFixed(2)}x its median`,
);

const workers = defaultWorkers();
const gridCombos = sweepGrid([
  { key: 'levels', values: [3, 4, 5] },
  { key: 'spacingPct', values: ['0.3', '0.4', '0.5'] },
]);
const trendCombos = sweepGrid([
  { key: 'fast', values: [8, 12, 16] },
  { key: 'slow', values: [26, 34, 42] },
  { key: 'rsiMax', values: [65, 75] },
]);
const sweep = (sources: typeof grid.sources, combos: Record<string, unknown>[]) => () =>
  runSweep({ sources, data, settings: DEFAULT_JOB_SETTINGS, combos }, workers);
const [gridSweep, trendSweep] = await alternate(2, sweep(grid.sources, gridCombos), sweep(trend.sources, trendCombos));
console.log(`sweeps on ${workers} workers, CPU time of all threads, 2 rounds each after a warm-up, alternated:`);
console.log(`  grid, ${gridCombos.length} combinations        best ${gridSweep.best.toFixed(2)} CPU s`);
console.log(`  ema-trend, ${trendCombos.length} combinations  best ${trendSweep.best.toFixed(2)} CPU s`);
console.log(
  `  ratio                          ${(trendSweep.best / gridSweep.best).toFixed(2)}x the grid's (target: at most 3x)`,
);
