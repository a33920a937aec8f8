/**
 * One backtest from its inputs to its summary: the single path the CLI, a sweep's worker threads and tests
 * all take, so a sweep combination gives exactly what the same run alone gives.
 */
import type { InstanceSpec } from '../engine/instance-runner.js';
import { backtestMarket, type BacktestRun, type RunOptions, runBacktest } from './runner.js';
import { type ConfigSource, configInput, instancesOf } from './strategy-configs.js';
import { type BacktestSummary, summarize } from './summary.js';
import type { JobSettings } from './job-settings.js';
import type { TickData } from './tick-data.js';

export { warmUpMs } from '../strategy/candle-needs.js';

export const DEFAULT_QUOTE_BALANCE = '10000';

/** 10000 of each quote asset of the strategies' pairs (as the data carry them). */
export function defaultBalances(instances: readonly InstanceSpec[], data: TickData): Record<string, string> {
  const symbols = [...new Set(instances.map((i) => i.config.symbol))];
  const out: Record<string, string> = {};
  for (const p of backtestMarket(symbols, data).pairs)
    if (symbols.includes(p.symbol)) out[p.quoteAsset] = DEFAULT_QUOTE_BALANCE;
  return out;
}

export interface JobResult {
  run: BacktestRun;
  summary: BacktestSummary;
}

export async function runJob(
  sources: readonly ConfigSource[],
  data: TickData,
  settings: JobSettings,
  overrides: Readonly<Record<string, unknown>> = {},
  options: RunOptions = {},
): Promise<JobResult> {
  const bySource: InstanceSpec[][] = [];
  const universe = data.symbols.map((s) => s.symbol);
  for (const source of sources) bySource.push(await instancesOf(source, overrides, universe));
  const instances = bySource.flat();
  const balances = settings.balances ?? defaultBalances(instances, data);
  // Data before --from (loaded for the candles' warm-up, see warmUpMs) builds candles and is not traded.
  const start = settings.from === undefined ? undefined : Date.parse(settings.from);
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
