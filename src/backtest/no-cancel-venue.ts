import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../exchange/schemas.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';

/** A venue without the optional cancel capability (`--no-cancel`), as some live accounts are. */
export class NoCancelVenue implements Venue {
  constructor(private readonly inner: Venue) {}

  get revision(): number | undefined {
    return this.inner.revision;
  }
  marketWatch(symbol?: string): Promise<Ticker[]> {
    return this.inner.marketWatch(symbol);
  }
  pairConfig(symbol?: string): Promise<PairConfig[]> {
    return this.inner.pairConfig(symbol);
  }
  balance(query?: BalanceQuery): Promise<Balances> {
    return this.inner.balance(query);
  }
  openOrders(pair?: string): Promise<OrderRecord[]> {
    return this.inner.openOrders(pair);
  }
  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    return this.inner.orderHistory(query);
  }
  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    return this.inner.tradeHistory(query);
  }
  createOrder(request: OrderRequest): Promise<OrderRecord> {
    return this.inner.createOrder(request);
  }
}
