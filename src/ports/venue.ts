/**
 * The Venue port: everything the engine may ask of an exchange. The HTTP client (live, and paper against
 * the simulated exchange's server) and the in-process matching engine (backtest) both implement it, and the
 * contract suite runs the same cases against each. Records are the port's own (venue-records.ts); failures carry
 * the port's meanings (venue-errors.ts).
 */
import type { Side } from '../market/pair-rules.js';
import type { Balances, OrderRecord, OrderType, PairConfig, Ticker, TradeRecord } from './venue-records.js';

/**
 * What the bot sends to create an order. Prices and quantities are plain decimal text, already checked
 * against the pair's rules (strict writer): the client puts them on the wire exactly as given.
 */
export interface OrderRequest {
  symbol: string;
  side: Side;
  type: OrderType;
  quantity?: string;
  price?: string;
  stopPrice?: string;
  limitPrice?: string;
  quoteOrderQty?: string;
  useQuoteQty?: boolean;
}

/** Filters of the order-history and trade-history endpoints. Times are ISO 8601. */
export interface HistoryQuery {
  symbol?: string;
  side?: Side;
  hideCanceled?: boolean;
  page?: number;
  pageSize?: number;
  timeFrom?: string;
  timeTo?: string;
}

export interface BalanceQuery {
  /** Wallet type: spot = 0 (default), future = 2. */
  type?: number;
  currency?: number;
}

export interface Venue {
  /**
   * Optional change counter: bumped by one for each change of an order or trade on the venue (place, fill,
   * trigger, cancel). An in-process venue offers it so a backtest can skip order polls that would find nothing
   * new (nothing changed, or only orders placed whose answers said all there was); the results are the same as
   * polling every time.
   */
  readonly revision?: number;
  marketWatch(symbol?: string): Promise<Ticker[]>;
  pairConfig(symbol?: string): Promise<PairConfig[]>;
  balance(query?: BalanceQuery): Promise<Balances>;
  openOrders(pair?: string): Promise<OrderRecord[]>;
  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]>;
  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]>;
  createOrder(request: OrderRequest): Promise<OrderRecord>;
  /** Optional capability (exchange-notes.md): absent where the venue cannot cancel. */
  cancelOrder?(symbol: string, displayingId: string): Promise<OrderRecord>;
}
