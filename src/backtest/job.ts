/**
 * One backtest from its inputs to its summary: the single path the CLI, a sweep's worker threads and tests
 * all take, so a sweep combination gives exactly what the same run alone gives.
 */
import type { InstanceSpec } from '../engine/instance-runner.js';
import { backtestMarket, type BacktestRun, type RunOptions, runBacktest } from './runner.js';
import { DEFAULT_DAEMON_SCHEDULE, type DaemonSchedule } from '../config/env.js';
import { type ConfigSource, configInput, instanceOf } from './strategy-configs.js';
import { type BacktestSummary, summarize } from './summary.js';
import type { TickData } from './tick-data.js';
import { type CandlePath, DEFAULT_CANDLE_PATH } from '../sim/candle-path.js';

export { warmUpMs } from '../strategy/candle-needs.js';

export interface JobSettings {
  /** Starting balances; default 10000 of each quote asset of the strategies' pairs. */
  balances?: Record<string, string>;
  makerFee: string;
  takerFee: string;
  fillThroughTicks: number;
  /** Data-time delay before an order reaches the book; undefined: one step of the data (fill-model.ts). */
  latencyMs: number | undefined;
  /** Taker slippage in basis points. */
  slippageBps: string;
  /** The path inside a candle on data imported from candles (sim/candle-path.ts). */
  candlePath: CandlePath;
  /** Share of a tick's traded volume resting fills may take on data that carry it (a ratio), null: no cap. */
  participation: string | null;
  cancel: boolean;
  /** Every instance sees every tick (the loop before schedules applied); default false. */
  everyTick: boolean;
  /** The daemon's orders poll and refresh schedules the replay applies (the daemon's defaults by default). */
  jobs: DaemonSchedule;
  refreshMs: number;
  sampleMs: number;
  /** Longer stretches without a tick are gaps in the data (`--max-gap`); undefined: 4 data steps, at least 60 s. */
  maxGapMs: number | undefined;
  /** As given on the command line (the data were loaded within them). */
  from: string | undefined;
  to: string | undefined;
  /** Truncated or corrupt recordings were read up to where they break (`--allow-partial`). */
  allowPartial: boolean;
}

/**
 * Resting fills on candle data take at most 10% of the volume traded: a common ceiling for an order that should
 * not move the market (execution algorithms commonly participate at 5-20% of volume).
 */
export const DEFAULT_PARTICIPATION = '0.1';

export const DEFAULT_JOB_SETTINGS: JobSettings = {
  makerFee: '0.001',
  takerFee: '0.001',
  fillThroughTicks: 1,
  latencyMs: undefined,
  slippageBps: '0',
  candlePath: DEFAULT_CANDLE_PATH,
  participation: DEFAULT_PARTICIPATION,
  cancel: true,
  everyTick: false,
  jobs: { ...DEFAULT_DAEMON_SCHEDULE },
  refreshMs: 60_000,
  sampleMs: 3_600_000,
  maxGapMs: undefined,
  from: undefined,
  to: undefined,
  allowPartial: false,
};

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
  const instances: InstanceSpec[] = [];
  for (const source of sources) instances.push(await instanceOf(source, overrides));
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
    configs: sources.map((s, i) => configInput(s, instances[i] as InstanceSpec, overrides)),
    data: data.files,
    overrides: { ...overrides },
  });
  return { run, summary };
}
