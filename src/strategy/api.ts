/**
 * The strategy plugin API: the only module strategies/ may import (with zod). A strategy never sees the
 * exchange client, the database, the venue or Date.now(): it gets a context, and returns intents through
 * the context's builders. The engine checks every intent (pair rules, risk, balance) before anything is sent.
 */
import { z } from 'zod';
import { dec, type Dec, type DecimalLike } from '../market/decimal.js';
import type { PairRules, Side } from '../market/pair-rules.js';
import type { Position } from '../market/position.js';
import type { Ticker } from '../ports/venue-records.js';
import type { Candle, CandleNeeds, Timeframe } from '../market/candles.js';
import type { IndicatorSpecs } from './indicators.js';
import type { FillView, StrategyContext } from './context.js';

export type { Candle, CandleNeeds, Dec, DecimalLike, PairRules, Position, Side, Ticker, Timeframe };
export { D, dec, plain } from '../market/decimal.js';
export { TIMEFRAMES, TIMEFRAME_MS } from '../market/candles.js';
export {
  atr,
  bollinger,
  ema,
  informative,
  macd,
  rsi,
  sma,
  stochastic,
  vwap,
  type BandsResult,
  type PriceSource,
  type IndicatorSpec,
  type IndicatorSpecs,
  type IndicatorView,
  type IndicatorViews,
  type MACDResult,
  type StochasticResult,
} from './indicators.js';
export { z } from 'zod';
export type {
  Balance,
  CancelIntent,
  FillView,
  Intent,
  IntentBuilders,
  IntentOptions,
  LimitIntent,
  MarketIntent,
  OcoIntent,
  OrderIntent,
  OrderView,
  StopLimitIntent,
  StrategyContext,
  StrategyLogger,
} from './context.js';

/**
 * A params field holding a positive exact decimal, given as a JSON number or as text ("0.05"); parses to Dec.
 * Text is read exactly, a number at the 15 significant digits a double round-trips (see dec()).
 */
export const decimalParam = z.union([z.number(), z.string()]).transform((v, ctx): Dec => {
  try {
    const d = dec(typeof v === 'string' ? v.trim() : v);
    if (d.isFinite() && d.gt(0)) return d;
  } catch {
    // reported below
  }
  ctx.addIssue({ code: 'custom', message: `expected a positive decimal, found ${JSON.stringify(v)}` });
  return z.NEVER;
});

/** A params refinement: exactly one of the keys `a` and `b` is given (e.g. quantity or quote amount). */
export function exactlyOne(p: Record<string, unknown>, a: string, b: string, ctx: z.RefinementCtx): void {
  const given = [a, b].filter((k) => p[k] !== undefined);
  if (given.length !== 1) {
    ctx.addIssue({
      code: 'custom',
      message: `expected exactly one of ${a} and ${b}, found ${given.length === 0 ? 'neither' : 'both'}`,
    });
  }
}

/** A params refinement: each of the given percentages is below 100 (a stop or a band cannot pass zero). */
export function belowHundred(p: Record<string, unknown>, keys: readonly string[], ctx: z.RefinementCtx): void {
  for (const key of keys) {
    const v = p[key] as Dec | undefined;
    if (v?.gte(100)) ctx.addIssue({ code: 'custom', path: [key], message: `expected below 100, found ${v.toFixed()}` });
  }
}

/**
 * Exits the engine applies to the instance's position whatever the strategy does, checked on every tick from
 * the position's average entry: a MARKET SELL of the position less dust, tagged `exit:<reason>`.
 */
export interface ExitRulesDecl {
  /**
   * Sell when the price is this many percent under the average entry. Where the pair allows STOP_LIMIT (and
   * the venue can cancel), the engine holds it on the exchange once the entry fills (an OCO with the `roi`
   * table's "0" target as its take-profit where declared and allowed), so it stands while the daemon is down.
   */
  stopLossPct?: number;
  /** How far under its stop the held stop's limit rests, in percent of the stop (default 0.5). */
  stopLimitPct?: number;
  /** Sell when the price falls this many percent from its highest since the entry… */
  trailingStopPct?: number;
  /** …once that high was this many percent above the entry (default 0: at once). */
  trailingActivationPct?: number;
  /** Minutes held -> minimum profit % (`{ "0": 4, "60": 2, "240": 0 }`): sell once the profit reaches it. */
  roi?: Readonly<Record<string, number>>;
}

/**
 * Protections the engine enforces: each one, once tripped, refuses the instance's new BUY orders (exits, its
 * own SELLs and the declared exits still go) until it lifts, recorded as `protection-tripped` and
 * `protection-lifted` events (status, API, notifications) and kept across restarts.
 */
export interface ProtectionsDecl {
  /** After a stop-loss or trailing-stop exit, no new BUY of the instance for this many minutes. */
  cooldownMinutes?: number;
  /** `count` closed trades at a loss within the last `windowMinutes`: no new entries for `pauseMinutes`. */
  losingTrades?: { count: number; windowMinutes: number; pauseMinutes: number };
  /**
   * The closed trades' compounded return (each trade's PnL over its entry cost) fell `pct` percent from its
   * best, over the trades closed within `windowMinutes` (default: all): no new entries for `pauseMinutes`.
   */
  maxDrawdown?: { pct: number; windowMinutes?: number; pauseMinutes: number };
}

const percent = z.number().positive().lt(100, 'a percentage below 100');
const minutes = z.number().positive();

/** What `exits` may hold, in a strategy's definition or its strategy file (unknown keys are errors). */
export const ExitRulesSchema: z.ZodType<ExitRulesDecl> = z.strictObject({
  stopLossPct: percent.optional(),
  stopLimitPct: percent.optional(),
  trailingStopPct: percent.optional(),
  trailingActivationPct: z.number().positive().optional(),
  roi: z
    .record(z.string(), z.number().finite())
    .superRefine((table, ctx) => {
      for (const key of Object.keys(table))
        if (!/^\d+$/.test(key))
          ctx.addIssue({
            code: 'custom',
            message: `expected minutes held (whole numbers) -> minimum profit % ({ "0": 4, "60": 2 }), found the key ${JSON.stringify(key)}`,
          });
    })
    .optional(),
});

/** What `protections` may hold, in a strategy's definition or its strategy file (unknown keys are errors). */
export const ProtectionsSchema: z.ZodType<ProtectionsDecl> = z.strictObject({
  cooldownMinutes: minutes.optional(),
  losingTrades: z
    .strictObject({ count: z.number().int().positive(), windowMinutes: minutes, pauseMinutes: minutes })
    .optional(),
  maxDrawdown: z.strictObject({ pct: percent, windowMinutes: minutes.optional(), pauseMinutes: minutes }).optional(),
});

/** A pair a strategy reads besides its own (never trades): its symbol, and the candles of it to keep. */
export interface InformativePair {
  symbol: string;
  timeframe: Timeframe;
  /** Closed candles to keep (default 100). */
  count?: number;
}

export interface StrategyDefinition<
  Schema extends z.ZodType = z.ZodType,
  S extends object = Record<string, unknown>,
  I extends IndicatorSpecs = IndicatorSpecs,
> {
  name: string;
  description?: string;
  params: Schema;
  /**
   * Closed candles to keep per timeframe (e.g. `{ '5m': 200, '1h': 50 }`): the engine keeps only these, warms
   * them up before the first tick (from the data before a backtest's start, from its saved candles live), and
   * `ctx.candles` reads them. A function gets the params (a lookback that depends on a period).
   */
  candles?: CandleNeeds | ((params: z.infer<Schema>) => CandleNeeds);
  /**
   * Other pairs this strategy reads (Freqtrade's informative pairs): `[{ symbol: 'BTCUSDT', timeframe: '1h',
   * count: 50 }]` (count default 100). The engine watches their tickers and keeps and warms their candles as it
   * does its own; `ctx.candles(tf, n, { symbol })`, `ctx.tickerOf(symbol)` and indicators declared on them with
   * `informative(symbol, ema('1h', 50))` read them. A function gets the params.
   */
  informative?: readonly InformativePair[] | ((params: z.infer<Schema>) => readonly InformativePair[]);
  /** Exits the engine enforces on the instance's position (see ExitRulesDecl). */
  exits?: ExitRulesDecl;
  /** Protections the engine enforces (see ProtectionsDecl). */
  protections?: ProtectionsDecl;
  /** Indicators by name, from the params (e.g. `(p) => ({ fast: ema('5m', p.fast) })`): `ctx.indicators`. */
  indicators?: (params: z.infer<Schema>) => I;
  /** Order types this strategy may send; checked against the pair at start. */
  orderTypes?: ReadonlyArray<'LIMIT' | 'MARKET' | 'STOP_LIMIT' | 'OCO'>;
  /** Set when the strategy cannot work without cancel; the engine refuses to start it on a venue without. */
  requiresCancel?: boolean;
  /**
   * Set when onTick decides from its context alone: called again on the same context (the same ticker, open
   * orders, balances, position, pair rules, params, candles, indicators and state, and the same ctx.now() when
   * it read it), after a call that queued no intent and assigned no key of ctx.state, it would queue nothing
   * and change nothing. It keeps nothing between calls outside ctx.state but caches derived from its context,
   * and reads no clock but ctx.now(). The engine then does not call onTick on a firing of the schedule that
   * finds the market as the last such call saw it (a schedule firing every 2 s over 15-second tickers: 6 calls
   * of 7 saved), live, on paper and in a backtest alike. docs/strategies.md, "Firings on an unchanged market".
   */
  idempotentTick?: boolean;
  onStart?(ctx: StrategyContext<z.infer<Schema>, S, I>): void | Promise<void>;
  onTick(ctx: StrategyContext<z.infer<Schema>, S, I>): void | Promise<void>;
  onFill?(ctx: StrategyContext<z.infer<Schema>, S, I>, fill: FillView): void | Promise<void>;
  onStop?(ctx: StrategyContext<z.infer<Schema>, S, I>): void | Promise<void>;
  /**
   * `bot hyperopt --loss strategy`: the loss of one trial (a backtest with the values tried), lower is better;
   * a value that is not finite ranks the trial last. Called once per trial, outside any hook.
   */
  hyperoptLoss?(trial: TrialResult): number;
}

/** One hyperopt trial's figures, as a strategy's hyperoptLoss sees them (null: undefined for this trial). */
export interface TrialResult {
  totalReturnPct: number;
  maxDrawdownPct: number;
  sharpe: number | null;
  sortino: number | null;
  calmar: number | null;
  profitFactor: number | null;
  winRatePct: number | null;
  /** Mean PnL per closed trade, in the quote asset. */
  expectancy: number | null;
  roundTrips: number;
  fills: number;
  exposurePct: number;
  feesQuote: number;
  /** The account's value at each equity sample (hourly, and at the end), in the quote asset. */
  equity: readonly number[];
}

/** Declare a strategy: the default export of a module in strategies/. */
export function defineStrategy<
  Schema extends z.ZodType,
  S extends object = Record<string, unknown>,
  I extends IndicatorSpecs = IndicatorSpecs,
>(definition: StrategyDefinition<Schema, S, I>): StrategyDefinition<Schema, S, I> {
  return definition;
}

export {
  canBuy,
  ceilTo,
  exitLevels,
  floorTo,
  noticeOnce,
  pctMove,
  protectPosition,
  remainingQuantity,
  sellWithBracket,
  tradableQuantity,
  type ExitLevels,
  type NoticeState,
} from './toolkit.js';
