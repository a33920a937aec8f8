/**
 * The Venue port over the matching engine, in process, for one account (backtests). Records go through the
 * same zod schemas the HTTP client parses the server's answers with, so a strategy sees identical shapes on
 * either venue. Methods are async only to fit the port: no timers, no I/O, the engine is already synchronous.
 */
import {
  BalancesSchema,
  OrderRecordSchema,
  PairConfigSchema,
  TickerSchema,
  TradeRecordSchema,
  type Balances,
  type OrderRecord,
  type PairConfig,
  type Ticker,
  type TradeRecord,
} from '../exchange/schemas.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';
import type { MatchingEngine } from './matching-engine.js';

const orderList = OrderRecordSchema.array();

export class InProcessVenue implements Venue {
  constructor(
    readonly engine: MatchingEngine,
    private readonly apiKey: string,
  ) {}

  get revision(): number {
    return this.engine.revision;
  }

  marketWatch(symbol?: string): Promise<Ticker[]> {
    return this.call(() => TickerSchema.array().parse(this.engine.tickers(symbol)));
  }

  pairConfig(symbol?: string): Promise<PairConfig[]> {
    return this.call(() => PairConfigSchema.array().parse(this.engine.pairConfigs(symbol)));
  }

  balance(query?: BalanceQuery): Promise<Balances> {
    return this.call(() => BalancesSchema.parse(this.engine.balances(this.apiKey, query)));
  }

  openOrders(pair?: string): Promise<OrderRecord[]> {
    return this.call(() => orderList.parse(this.engine.openOrders(this.apiKey, pair)));
  }

  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    return this.call(() => orderList.parse(this.engine.orderHistory(this.apiKey, query)));
  }

  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    return this.call(() => TradeRecordSchema.array().parse(this.engine.tradeHistory(this.apiKey, query)));
  }

  createOrder(request: OrderRequest): Promise<OrderRecord> {
    return this.call(() => OrderRecordSchema.parse(this.engine.placeOrder(this.apiKey, request)));
  }

  cancelOrder(symbol: string, displayingId: string): Promise<OrderRecord> {
    return this.call(() => OrderRecordSchema.parse(this.engine.cancelOrder(this.apiKey, symbol, displayingId)));
  }

  /** Engine rejections become rejected promises (the executor's throw rejects), as the HTTP client's do. */
  private call<T>(fn: () => T): Promise<T> {
    return new Promise((resolve) => resolve(fn()));
  }
}
