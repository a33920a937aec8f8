/**
 * The fill model a backtest ran with, stated once for summary.json (`fillModel`) and the report's "Fill model"
 * section, so that a result never comes without the assumptions that produced it. The model itself lives in
 * the simulated exchange (sim/matching-engine.ts), which paper on recordings shares.
 */
import { type Dec, dec, ZERO } from '../market/decimal.js';
import { CANDLE_PATH_WORDS, type CandlePath } from '../sim/candle-path.js';
import type { JobSettings } from './job-settings.js';
import type { BacktestRun } from './runner.js';
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
  /** The model of the path inside a candle (sim/candle-path.ts), when the data come from candles (null otherwise). */
  candlePath: CandlePath | null;
  /** Share of each tick's traded base volume resting fills may take (a ratio), null when fills are not capped. */
  participation: string | null;
  /**
   * What takers paid beyond the market's price where they filled (slippage and the impact of their size), in
   * the quote asset, over how many taker fills, and in basis points of what those fills traded.
   */
  takerCost: { quote: string; fills: number; bps: string };
  /** The same assumptions in plain words, as the report shows them. */
  statements: string[];
}

export function fillModelOf(
  settings: Pick<JobSettings, 'makerFee' | 'takerFee' | 'fillThroughTicks' | 'slippageBps' | 'participation'>,
  run: Pick<
    BacktestRun,
    'latencyMs' | 'dataStepMs' | 'candlePath' | 'candles' | 'participation' | 'fills' | 'quoteAsset' | 'quotePrecision'
  >,
  data: readonly RecordingFile[],
): FillModel {
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
    participationWords(settings.participation, run.participation),
  ];
  const takerCost = takerCostOf(run.fills);
  if (takerCost.fills > 0)
    statements.push(
      `Takers paid ${takerCost.quote.toFixed(run.quotePrecision)} ${run.quoteAsset} over the market's price where ` +
        `they filled (${takerCost.fills} fills, ${takerCost.bps.toFixed(2)} bp of what they traded): slippage` +
        (settings.participation === null ? '.' : ' and the impact of their size.'),
    );
  if (run.candlePath !== null)
    statements.push(
      `The data come from one-minute candles (${run.candles} found): moves inside a candle are modelled, not ` +
        'seen. A candle happens at its close: a strategy sees its open from the minute’s start, then its close ' +
        'with its high and low (at +45 s, the import’s closing tick), never a price or a fill of the path between; ' +
        `at that instant the market walks the '${run.candlePath}' path (--candle-path): ` +
        `${CANDLE_PATH_WORDS[run.candlePath]}, and resting orders, and orders decided inside the candle, meet it ` +
        'from its first extreme. Nothing decided on what is seen then meets the path it came from.',
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
    candlePath: run.candlePath,
    participation: run.participation,
    takerCost: {
      quote: takerCost.quote.toFixed(),
      fills: takerCost.fills,
      bps: takerCost.bps.toDecimalPlaces(4).toFixed(),
    },
    statements,
  };
}

/** What taker fills paid beyond the market's price where they filled: in the quote, and per traded quote. */
function takerCostOf(fills: BacktestRun['fills']): { quote: Dec; fills: number; bps: Dec } {
  let quote = ZERO;
  let traded = ZERO;
  let n = 0;
  for (const f of fills) {
    if (f.market === undefined) continue;
    quote = quote.plus(f.price.minus(f.market).abs().mul(f.baseQty));
    traded = traded.plus(f.market.mul(f.baseQty));
    n++;
  }
  return { quote, fills: n, bps: traded.isZero() ? ZERO : quote.div(traded).mul(10_000) };
}

/** Size costs: what the square-root impact reads, in words. */
const IMPACT_WORDS =
  'Takers pay for their size: the price moves against them by σ·√(Q/V) (the square-root law: Q what the fill ' +
  'takes, V the 24-hour base volume, σ the day’s volatility from the 24-hour high and low, Parkinson’s estimate).';

function participationWords(asked: string | null, applied: string | null): string {
  if (applied !== null)
    return (
      `Fills take at most ${percent(applied)} of the base volume traded on each tick (a candle’s volume shared ` +
      'equally by its four ticks; --participation), takers first, then resting limits and triggered stops, so ' +
      'an order can fill in parts over several ticks: a MARKET order takes the rest on the following ticks, a ' +
      `marketable limit rests for it. ${IMPACT_WORDS}`
    );
  if (asked === null)
    return (
      'Fills are not capped by traded volume (--participation off): every fill is in full, and takers pay nothing ' +
      'for their size.'
    );
  return `Fills are not capped by traded volume (the data carry no volume per tick). ${IMPACT_WORDS}`;
}

/** A ratio as a percentage, exact (0.1 -> 10%). */
function percent(ratio: string): string {
  return `${dec(ratio).mul(100).toFixed()}%`;
}
