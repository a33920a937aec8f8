/**
 * The venue's vocabulary: the records every venue hands the engine (orders, trades, pair configurations,
 * balances, tickers), whatever it speaks on its own wire. The HTTP adapter parses the exchange's JSON into
 * these (wire/schemas.ts); the in-process matching engine builds them directly. Tolerant reader
 * (design.md invariant 5): a record may carry keys the bot does not name, and ids are always text.
 */
import type { Side } from '../market/pair-rules.js';

export type OrderType = 'LIMIT' | 'MARKET' | 'STOP_LIMIT' | 'OCO';

/** Status values seen: NEW, PARTIALLY_FILLED, FILLED, CANCELED; others (rejections…) are kept as they come. */
export type OrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | (string & {});

export interface OrderFeeMetadata {
  feeMode?: number;
  originBaseQty?: number;
  assetId?: number;
  asset?: string | null;
  value?: number;
  feeRatio?: number;
  executed?: unknown;
  [key: string]: unknown;
}

/** An order as the venue reports it (create, cancel, open orders, order history). */
export interface OrderRecord {
  _id?: string | null;
  /** The venue's id for the order. */
  displayingId: string;
  symbol: string;
  side: Side;
  /** LIMIT, MARKET, STOP_LIMIT, OCO, or whatever the venue calls it. */
  type: string;
  status: OrderStatus;
  price?: number;
  stopPrice?: number;
  limitPrice?: number;
  executedPrice?: number;
  quantity: number;
  executedQty?: number;
  quoteQty?: number;
  executedQuoteQty?: number;
  useQuoteQty?: boolean | null;
  ocoOrderId?: string | null;
  limitOrderId?: string | null;
  stopLimitOrderId?: string | null;
  /** ISO 8601. */
  createdAt?: string | null;
  updatedAt?: string | null;
  feeMetadata?: OrderFeeMetadata | null;
  [key: string]: unknown;
}

export interface TradeFeeMetadata {
  feeValue?: number;
  feeAssetId?: number;
  feeAsset?: string | null;
  feeRatio?: number;
  quoteQty?: number;
  [key: string]: unknown;
}

/** One execution of an order (trade history). */
export interface TradeRecord {
  _id: string;
  symbol: string;
  side: Side;
  /** The trade's own id, where the venue gives one. */
  displayingId?: string | null;
  /** The order's displayingId. */
  orderId: string;
  price: number;
  baseQty: number;
  quoteQty?: number;
  flag?: string | null;
  /** ISO 8601. */
  createdAt: string;
  baseAssetId?: number;
  quoteAssetId?: number;
  feeMetadata?: TradeFeeMetadata | null;
  [key: string]: unknown;
}

export interface PairFilter {
  filterType: string;
  [key: string]: unknown;
}

/** A pair's trading rules as the venue publishes them (market/pair-rules.ts reads them into exact decimals). */
export interface PairConfig {
  symbol: string;
  status: string;
  baseAsset: string;
  baseAssetPrecision: number;
  quoteAsset: string;
  quotePrecision: number;
  baseCommissionPrecision?: number | null;
  quoteCommissionPrecision?: number | null;
  orderTypes: string[];
  ocoAllowed?: boolean | null;
  isSpotTradingAllowed?: boolean | null;
  filters: PairFilter[];
  permissions?: string[] | null;
  baseAssetId?: number | null;
  quoteAssetId?: number | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  [key: string]: unknown;
}

export interface BalanceEntry {
  value: number;
  locked_value: number;
  type?: number | null;
  [key: string]: unknown;
}

/** Balances keyed by currency id (as text). */
export type Balances = Record<string, BalanceEntry>;

/**
 * The 24-hour ticker of one pair, with names (the exchange's one-letter keys stay in its adapter and in
 * recordings). Only symbol, last and time are certain; the rest is undefined where the venue gave nothing.
 */
export interface Ticker {
  symbol: string;
  /** Last traded price. */
  last: number;
  /** Epoch milliseconds. */
  time: number;
  /** 24-hour high and low. */
  high: number | undefined;
  low: number | undefined;
  /** 24-hour volume in the base and in the quote asset. */
  baseVolume: number | undefined;
  quoteVolume: number | undefined;
  baseAsset: string | undefined;
  quoteAsset: string | undefined;
  /** The venue's currency ids of the two assets (balances are keyed by them). */
  baseAssetId: number | undefined;
  quoteAssetId: number | undefined;
  /**
   * On a market replayed from one-minute candles (the simulated exchange's extension), the candle this price
   * closes: its open, high and low (its close is `last`). A strategy sees a candle's range when it closes, never
   * the modelled path inside it (sim/candle-path.ts). Undefined elsewhere (live, market-watch recordings).
   */
  candle?: CandleRange;
}

/** A one-minute candle's open, high and low, told with its close (Ticker.candle). */
export interface CandleRange {
  open: number;
  high: number;
  low: number;
}
