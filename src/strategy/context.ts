/**
 * What a strategy's hook is given (the context: its market, orders, position, state, log and clock) and what it
 * gives back (intents, through the context's builders). The strategy API (api.ts) hands these on.
 */
import type { Dec, DecimalLike } from '../market/decimal.js';
import type { PairRules, Side } from '../market/pair-rules.js';
import type { Position } from '../market/position.js';
import type { Ticker } from '../ports/venue-records.js';
import type { Candle, Timeframe } from '../market/candles.js';
import type { IndicatorSpecs, IndicatorViews } from './indicators.js';

/** An order of this instance as the engine knows it (from its journal). */
export interface OrderView {
  /** The engine's own id for the order (stable across restarts). */
  localId: string;
  /** The exchange's displayingId, once known. */
  exchangeId: string | undefined;
  symbol: string;
  side: Side;
  type: 'LIMIT' | 'MARKET' | 'STOP_LIMIT' | 'OCO';
  /** PENDING, OPEN, PARTIALLY_FILLED, FILLED, CANCELED, REJECTED, UNKNOWN (outcome not yet reconciled). */
  status: string;
  price: Dec | undefined;
  stopPrice: Dec | undefined;
  limitPrice: Dec | undefined;
  quantity: Dec;
  filledQuantity: Dec;
  /** The free-form tag the strategy gave the intent (e.g. "grid:3:buy"), to recognise its own orders. */
  tag: string | undefined;
  createdAt: number;
}

export interface FillView {
  /** The exchange's trade id (or a derived key where the venue gives none). */
  fillId: string;
  order: OrderView;
  side: Side;
  price: Dec;
  quantity: Dec;
  /** Fee paid, in feeAsset. */
  fee: Dec;
  feeAsset: string | undefined;
  time: number;
}

export interface Balance {
  asset: string;
  free: Dec;
  locked: Dec;
}

export interface StrategyLogger {
  debug(msg: string, data?: Record<string, unknown>): void;
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
}

/** Common options of every order intent. */
export interface IntentOptions {
  /** A label the strategy can find the order by later (OrderView.tag). */
  tag?: string;
  /**
   * The tag of the entry this order closes (a grid slot's sell names the slot's buy): closed trades pair it with
   * that entry's open lots first, oldest first, and only then with any other (first in, first out).
   */
  closes?: string;
}

export interface LimitIntent extends IntentOptions {
  kind: 'LIMIT';
  side: Side;
  price: Dec;
  quantity: Dec;
}
export interface MarketIntent extends IntentOptions {
  kind: 'MARKET';
  side: Side;
  /** Base quantity, or quote amount when quoteAmount is set. */
  quantity?: Dec;
  quoteAmount?: Dec;
}
export interface StopLimitIntent extends IntentOptions {
  kind: 'STOP_LIMIT';
  side: Side;
  stopPrice: Dec;
  price: Dec;
  quantity: Dec;
}
/** Two legs that cancel each other: a plain limit at `price`, and a stop at `stopPrice` resting at `limitPrice`. */
export interface OcoIntent extends IntentOptions {
  kind: 'OCO';
  side: Side;
  price: Dec;
  stopPrice: Dec;
  limitPrice: Dec;
  quantity: Dec;
}
export interface CancelIntent {
  kind: 'CANCEL';
  localId: string;
}
export type OrderIntent = LimitIntent | MarketIntent | StopLimitIntent | OcoIntent;
export type Intent = OrderIntent | CancelIntent;

/**
 * Builders for intents. Prices are rounded onto the pair's tick grid never worse for the side (BUY down,
 * SELL up) and quantities down onto the pair's step; the engine re-checks everything anyway.
 * Each builder queues its intent for the engine and returns it.
 */
export interface IntentBuilders {
  limit(side: Side, price: DecimalLike, quantity: DecimalLike, options?: IntentOptions): LimitIntent;
  market(
    side: Side,
    amount: { quantity: DecimalLike } | { quoteAmount: DecimalLike },
    options?: IntentOptions,
  ): MarketIntent;
  stopLimit(
    side: Side,
    stopPrice: DecimalLike,
    price: DecimalLike,
    quantity: DecimalLike,
    options?: IntentOptions,
  ): StopLimitIntent;
  oco(
    side: Side,
    legs: { price: DecimalLike; stopPrice: DecimalLike; limitPrice: DecimalLike },
    quantity: DecimalLike,
    options?: IntentOptions,
  ): OcoIntent;
  cancel(order: OrderView | string): CancelIntent;
}

/** What every hook receives. Read-only views, recomputed by the engine for each call. */
export interface StrategyContext<
  P = unknown,
  S extends object = Record<string, unknown>,
  I extends IndicatorSpecs = IndicatorSpecs,
> extends IntentBuilders {
  /** Instance name from the strategy file. */
  readonly instance: string;
  readonly symbol: string;
  readonly params: P;
  readonly rules: PairRules;
  /** The latest ticker for the symbol (undefined only before the first one arrives, e.g. in onStart). */
  readonly ticker: Ticker | undefined;
  /** Last price, exact. */
  readonly price: Dec | undefined;
  /**
   * This instance's orders that are not final (PENDING, OPEN, PARTIALLY_FILLED, UNKNOWN), and final ones whose
   * fills onFill has not seen yet: an order never vanishes from here before onFill says why.
   */
  readonly openOrders: readonly OrderView[];
  readonly position: Position;
  /** Account balances by asset code (base and quote of the pair at least). */
  readonly balances: ReadonlyMap<string, Balance>;
  /** Whether the venue supports cancel (exchange-notes.md: optional capability). */
  readonly canCancel: boolean;
  /** Persisted per-instance state: mutate it freely; the engine saves it after each hook. JSON values only. */
  readonly state: S;
  readonly log: StrategyLogger;
  /** Epoch ms from the engine's clock (virtual in backtests). */
  now(): number;
  /**
   * Up to `count` closed candles of the symbol at `timeframe`, oldest first (at most what the definition's
   * `candles` declares for it; none for a timeframe it does not declare). With `{ forming: true }` the candle
   * still forming comes last; with `{ symbol }`, an informative pair's (at most what `informative` declares). The
   * same array is returned until a candle closes: do not change it.
   */
  candles(timeframe: Timeframe, count: number, options?: { forming?: boolean; symbol?: string }): readonly Candle[];
  /**
   * The latest ticker of an informative pair the definition declares (`informative`), or of the instance's own
   * symbol; undefined before one arrives (or for a pair not declared).
   */
  tickerOf(symbol: string): Ticker | undefined;
  /** The indicators the definition declares, updated by the engine on every closed candle of their timeframe. */
  readonly indicators: IndicatorViews<I>;
  /**
   * From onTick of a strategy that declares idempotentTick, when this call queues nothing and changes nothing: any
   * last price strictly between `low` and `high` would give the same outcome, whatever the ticker's other figures,
   * while the rest of the context is as this call saw it. The engine then does not call onTick on a new ticker
   * whose price lies in that band (docs/strategies.md, "Quiet price bands"). Ignored from another hook, from a
   * call that queued an intent, assigned a key of ctx.state or read ctx.now(), from a strategy that reads candles,
   * indicators or informative pairs, and when the band does not hold the price this call saw.
   */
  quietBetween(low: number, high: number): void;
}
