/**
 * A Venue that passes every call to another: the base of decorators that change one thing (record prices,
 * hide cancel…). Cancel is offered exactly when the inner venue offers it, and the revision is the inner one.
 */
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../ports/venue-records.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';

export class ForwardingVenue implements Venue {
  readonly cancelOrder?: (symbol: string, displayingId: string) => Promise<OrderRecord>;

  constructor(protected readonly inner: Venue) {
    if (inner.cancelOrder) this.cancelOrder = inner.cancelOrder.bind(inner);
  }

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
