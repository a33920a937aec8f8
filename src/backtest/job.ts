/**
 * One backtest from its inputs to its summary: the single path the CLI, a sweep's worker threads and tests
 * all take, so a sweep combination gives exactly what the same run alone gives.
 */
import type { InstanceSpec } from '../engine/instance-runner.js';
import { backtestMarket, type BacktestRun, type RunOptions, runBacktest } from './runner.js';
import { type ConfigSource, configInput, instancesOf } from './strategy-configs.js';
import { type BacktestSummary, summarize } from './summary.js';
import type { JobSettings } from './job-settings.js';
import { sliceTicks, type TickData } from './tick-data.js';
import { warmUpMs } from '../strategy/candle-needs.js';
import { ConfigError } from '../errors.js';

export { warmUpMs };

export const DEFAULT_QUOTE_BALANCE = '10000';

/** 10000 of each quote asset of the strategies' pairs (as the data carry them). */
export function defaultBalances(instances: readonly InstanceSpec[], data: TickData): Record<string, string> {
  const symbols = [...new Set(instances.map((i) => i.config.symbol))];
  const out: Record<string, string> = {};
  for (const p of backtestMarket(symbols, data).pairs)
    if (symbols.includes(p.symbol)) out[p.quoteAsset] = DEFAULT_QUOTE_BALANCE;
  return out;
}

/**
 * The longest warm-up (warmUpMs) of the strategy files over these combinations of overrides (their periods). A
 * combination the files refuse is passed over: it runs nothing, so it needs no data.
 */
export async function longestWarmUpMs(
  sources: readonly ConfigSource[],
  combos: readonly Readonly<Record<string, unknown>>[],
): Promise<number> {
  let longest = 0;
  for (const combo of combos) {
    let instances: InstanceSpec[];
    try {
      instances = (await Promise.all(sources.map((s) => instancesOf(s, combo)))).flat();
    } catch (err) {
      if (err instanceof ConfigError) continue;
      throw err;
    }
    longest = Math.max(longest, warmUpMs(instances));
  }
  return longest;
}

export interface JobResult {
  run: BacktestRun;
  summary: BacktestSummary;
}

/**
 * One backtest of `sources` on `data`, from --from (settings.from) or, given a `window` (a holdout's part, a
 * walk-forward window's train or test part), over [window.from, window.to). Either way the data before the
 * start, as much of it as the strategies' warm-up asks for (warmUpMs, with these overrides' params) and no more,
 * builds their candles and indicators and is not traded: a part starts warmed up as a run from --from does.
 */
export async function runJob(
  sources: readonly ConfigSource[],
  all: TickData,
  settings: JobSettings,
  overrides: Readonly<Record<string, unknown>> = {},
  options: RunOptions = {},
  window?: { from: number; to: number },
): Promise<JobResult> {
  const bySource: InstanceSpec[][] = [];
  const universe = all.symbols.map((s) => s.symbol);
  for (const source of sources) bySource.push(await instancesOf(source, overrides, universe));
  const instances = bySource.flat();
  const start = window ? window.from : settings.from === undefined ? undefined : Date.parse(settings.from);
  // Exactly this combination's warm-up before the start, however much more was loaded for longer ones (a sweep's,
  // a search space's): its result is the one it gives run alone.
  const data = start === undefined ? all : sliceTicks(all, start - warmUpMs(instances), window?.to ?? Infinity);
  const balances = settings.balances ?? defaultBalances(instances, data);
  const run = await runBacktest(
    instances,
    data,
    { ...settings, balances, start },
    { moduleFiles: sources.map((s) => s.module.file), ...options },
  );
  const summary = summarize(run, {
    ...settings,
    balances,
    configs: sources.map((s, i) => configInput(s, bySource[i] as InstanceSpec[], overrides)),
    data: data.files,
    overrides: { ...overrides },
  });
  return { run, summary };
}
