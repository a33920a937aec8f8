/**
 * The fill model a backtest ran with, stated once for summary.json (`fillModel`) and the report's "Fill model"
 * section, so that a result never comes without the assumptions that produced it. The model itself lives in
 * the simulated exchange (sim/matching-engine.ts), which paper on recordings shares.
 */
import type { JobSettings } from './job.js';
import type { RecordingFile } from './tick-data.js';

export interface FillModel {
  /** Data-time delay before an order reaches the book, and the data's step it defaults to (ms). */
  latencyMs: number;
  dataStepMs: number;
  /** Taker slippage, basis points. */
  slippageBps: string;
  makerFee: string;
  takerFee: string;
  /** Ticks a resting limit must be traded through to fill. */
  fillThroughTicks: number;
  /** How the price moves inside a candle, when the data come from candles (null otherwise). */
  candlePath: string | null;
  /** Fills capped by traded volume: not modelled yet (every fill is in full). */
  participation: null;
  /** The same assumptions in plain words, as the report shows them. */
  statements: string[];
}

/** The path the candle importer walks (record/candles.ts walkCandle), as recorded in its provenance. */
export const CANDLE_PATH =
  'open, then the extreme nearer the open, then the other extreme, then close, at +0/15/30/45 s of the minute';

export function fillModelOf(
  settings: Pick<JobSettings, 'makerFee' | 'takerFee' | 'fillThroughTicks' | 'slippageBps'>,
  run: { latencyMs: number; dataStepMs: number },
  data: readonly RecordingFile[],
): FillModel {
  const candles = data.some((d) => d.source === 'candles');
  const { makerFee, takerFee, fillThroughTicks, slippageBps } = settings;
  const latency =
    run.latencyMs === run.dataStepMs
      ? `one step of the data (${run.latencyMs} ms)`
      : `${run.latencyMs} ms (the data's step is ${run.dataStepMs} ms)`;
  const statements = [
    `Orders reach the simulated book ${latency} of data time after the price they were decided on: a MARKET ` +
      'order fills at the first price at or after that, never at the price the strategy saw; a marketable ' +
      'LIMIT fills there as a taker, anything else rests.',
    `Takers pay ${slippageBps} bps of slippage; fees: maker ${makerFee}, taker ${takerFee} (a pair whose ` +
      'rules carry fees pays its own).',
    `A resting limit fills at its own price once the price trades ${fillThroughTicks} tick(s) through it.`,
    'Fills are not capped by traded volume: every fill is in full.',
  ];
  if (candles)
    statements.push(
      `The data come from one-minute candles: moves inside a candle are modelled, not seen. Each candle walks ${CANDLE_PATH}.`,
    );
  const partial = data.filter((d) => d.partial);
  for (const d of partial)
    statements.push(
      `${d.path} was read only up to line ${(d.partial?.lines ?? 0) + 1} (${d.partial?.reason}; --allow-partial).`,
    );
  return {
    latencyMs: run.latencyMs,
    dataStepMs: run.dataStepMs,
    slippageBps,
    makerFee,
    takerFee,
    fillThroughTicks,
    candlePath: candles ? CANDLE_PATH : null,
    participation: null,
    statements,
  };
}
