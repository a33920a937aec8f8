/**
 * What a backtest is run with, besides the strategy files and the data: fees, the fill model, the schedule, the
 * span; the CLI's flags fill them in, a sweep hands the same to every combination, summary.json records them.
 */
import { DEFAULT_DAEMON_SCHEDULE, type DaemonSchedule } from '../config/env.js';
import { type CandlePath, DEFAULT_CANDLE_PATH } from '../sim/candle-path.js';

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
