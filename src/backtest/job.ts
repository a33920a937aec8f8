/**
 * One backtest from its inputs to its summary: the single path the CLI, a sweep's worker threads and tests
 * all take, so a sweep combination gives exactly what the same run alone gives.
 */
import type { InstanceSpec } from '../engine/instance-runner.js';
import { MatchingEngine } from '../sim/matching-engine.js';
import { type BacktestRun, type RunOptions, runBacktest } from './runner.js';
import { type ConfigSource, configInput, instanceOf } from './strategy-configs.js';
import { type BacktestSummary, summarize } from './summary.js';
import type { TickData } from './tick-data.js';

export interface JobSettings {
  /** Starting balances; default 10000 of each quote asset of the strategies' pairs. */
  balances?: Record<string, string>;
  fee: string;
  fillThroughTicks: number;
  seed: number;
  cancel: boolean;
  refreshMs: number;
  sampleMs: number;
  /** As given on the command line (the data were loaded within them). */
  from: string | undefined;
  to: string | undefined;
}

export const DEFAULT_JOB_SETTINGS: JobSettings = {
  fee: '0.001',
  fillThroughTicks: 1,
  seed: 1,
  cancel: true,
  refreshMs: 60_000,
  sampleMs: 3_600_000,
  from: undefined,
  to: undefined,
};

export const DEFAULT_QUOTE_BALANCE = '10000';

export function defaultBalances(instances: readonly InstanceSpec[]): Record<string, string> {
  const sim = new MatchingEngine();
  const out: Record<string, string> = {};
  for (const i of instances) {
    const quote = sim.pairConfigs(i.config.symbol)[0]?.quoteAsset;
    if (quote !== undefined) out[quote] = DEFAULT_QUOTE_BALANCE;
  }
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
  const instances: InstanceSpec[] = [];
  for (const source of sources) instances.push(await instanceOf(source, overrides));
  const balances = settings.balances ?? defaultBalances(instances);
  const run = await runBacktest(instances, data, { ...settings, balances }, options);
  const summary = summarize(run, {
    ...settings,
    balances,
    configs: sources.map((s, i) => configInput(s, instances[i] as InstanceSpec, overrides)),
    data: data.files,
    overrides: { ...overrides },
  });
  return { run, summary };
}
