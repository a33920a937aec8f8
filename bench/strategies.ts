/**
 * What a strategy on candles and indicators costs, on the sample recording (no assertions), each figure printed
 * beside its baseline measured in the same run:
 * 1. per tick: backtests of config/ema-trend-btcusdt.json (EMA trend, RSI filter, ATR stop; on its hourly candles
 *    and on 15-minute ones) against bench/configs/idle-btcusdt.json (a strategy that decides nothing: the engine's
 *    own cost per tick) and against config/grid-btcusdt.json; the target is at most twice the baseline;
 * 2. per order: bench/configs/churn-btcusdt.json (a MARKET order every 30 minutes, nothing else) against the idle
 *    strategy: what it costs more, divided by its orders (the target is about 2 ms);
 * 3. a sweep of 18 ema-trend combinations (fast x slow x rsiMax) against the grid's 9 (levels x spacingPct) on
 *    the default workers; the target is at most three times the grid's time.
 * Measured in CPU seconds of the process (a shared machine's load does not count), the runs alternated, several
 * rounds, with the best and the median of each; the load average is printed with them (on a loaded machine the
 * absolute figures are noisy; the ratios, measured side by side, less so). `npm run bench:strategies`.
 */
import { availableParallelism, loadavg } from 'node:os';
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../src/backtest/job-settings.js';
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

/** Rounds of every run in turn (after one warm-up each): the best and the median seconds of each. */
async function alternate(rounds: number, ...runs: (() => Promise<unknown>)[]) {
  for (const run of runs) await run();
  const times = runs.map((): number[] => []);
  for (let i = 0; i < rounds; i++) for (const [k, run] of runs.entries()) times[k]!.push(await seconds(run));
  return times.map((v) => {
    const sorted = [...v].sort((p, q) => p - q);
    return { best: sorted[0]!, median: sorted[Math.floor(v.length / 2)]! };
  });
}

const data = await loadTicks([SAMPLE]);
const idle = await readConfigs(['bench/configs/idle-btcusdt.json'], 'bench/strategies');
const churn = await readConfigs(['bench/configs/churn-btcusdt.json'], 'bench/strategies');
const grid = await readConfigs(['config/grid-btcusdt.json']);
const trend = await readConfigs(['config/ema-trend-btcusdt.json']);
const quarter = { timeframe: '15m' };
/** The same on 15-minute candles with an RSI bar no candle passes: its candles, indicators and decisions, no order. */
const quarterIdle = { timeframe: '15m', rsiMax: 0.001 };

const job = (sources: typeof grid.sources, set?: Record<string, unknown>) => () =>
  runJob(sources, data, DEFAULT_JOB_SETTINGS, set);
const orders = async (sources: typeof grid.sources, set?: Record<string, unknown>) =>
  (await job(sources, set)()).run.orders.length;
const [idleS, trendS, quarterS, quarterIdleS, gridS, churnS] = await alternate(
  7,
  job(idle.sources),
  job(trend.sources),
  job(trend.sources, quarter),
  job(trend.sources, quarterIdle),
  job(grid.sources),
  job(churn.sources),
);
const [trendOrders, quarterOrders, quarterIdleOrders, gridOrders, churnOrders] = [
  await orders(trend.sources),
  await orders(trend.sources, quarter),
  await orders(trend.sources, quarterIdle),
  await orders(grid.sources),
  await orders(churn.sources),
];
const ns = (s: number) => `${((s / data.length) * 1e9).toFixed(0).padStart(5)} ns/tick`;
const ratio = (a: { best: number; median: number }, b: { best: number; median: number }) =>
  `${(a.best / b.best).toFixed(2)}x best, ${(a.median / b.median).toFixed(2)}x median`;
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${availableParallelism()} cores`,
);
console.log(
  `per tick, CPU time, ${data.length.toLocaleString('en-US')} ticks of ${SAMPLE}, 7 warm rounds, the runs alternated:`,
);
const line = (name: string, s: { best: number; median: number }, n: number | undefined, against: string) =>
  console.log(
    `  ${name.padEnd(20)} best ${ns(s.best)}, median ${ns(s.median)}${n === undefined ? '' : `, ${String(n).padStart(4)} orders`}${against}`,
  );
line('idle (baseline)', idleS!, undefined, '');
line('ema-trend, 1h', trendS!, trendOrders, `: ${ratio(trendS!, idleS!)} the idle's (target: at most 2x)`);
line('ema-trend, 15m', quarterS!, quarterOrders, `: ${ratio(quarterS!, idleS!)} the idle's (target: at most 2x)`);
line('  the same, no order', quarterIdleS!, quarterIdleOrders, `: ${ratio(quarterIdleS!, idleS!)} the idle's`);
line('grid', gridS!, gridOrders, `: ${ratio(gridS!, idleS!)} the idle's`);
console.log(
  `  ema-trend against the grid: 1h ${ratio(trendS!, gridS!)}, 15m ${ratio(quarterS!, gridS!)} (target: at most 2x)`,
);
const perOrder = (s: number) => (((s - idleS!.median) / churnOrders) * 1e3).toFixed(2);
console.log(
  `per order: churn, ${churnOrders} MARKET orders, median ${perOrder(churnS!.median)} ms an order over the idle's median ` +
    `(best ${(((churnS!.best - idleS!.best) / churnOrders) * 1e3).toFixed(2)} ms over its best; target: about 2 ms)`,
);

// `npm run bench:strategies -- --no-sweep`: the per-tick and per-order figures only.
if (process.argv.includes('--no-sweep')) process.exit(0);
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
console.log(`  grid, ${gridCombos.length} combinations        best ${gridSweep!.best.toFixed(2)} CPU s`);
console.log(`  ema-trend, ${trendCombos.length} combinations  best ${trendSweep!.best.toFixed(2)} CPU s`);
console.log(
  `  ratio                          ${(trendSweep!.best / gridSweep!.best).toFixed(2)}x the grid's (target: at most 3x)`,
);
