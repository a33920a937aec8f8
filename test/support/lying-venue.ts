/**
 * A venue that lies (design.md invariant 12): the real matching engine's answers, rewritten by the test within
 * what the wire's schema lets through. `order` rewrites each order record it hands out (open orders, history,
 * the create and cancel answers), `trades` each trade-history answer, and `failing` makes reads fail as a 503
 * does, or a body trickling past the client's deadline once the client gave up on it (a temporary failure).
 * It offers no revision: what it says changes without the venue changing, so the engine polls it every time.
 */
import { VenueError } from '../../src/ports/venue-errors.js';
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../../src/ports/venue-records.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../../src/ports/venue.js';

/** Where an order record was handed out. */
export type RecordSource = 'open-orders' | 'history' | 'create' | 'cancel';

/** The reads `failing` can fail. */
export type LyingRead = 'open-orders' | 'history' | 'trades';

export class LyingVenue implements Venue {
  /** Rewrites each order record handed out. */
  order: ((record: OrderRecord, source: RecordSource) => OrderRecord) | undefined;
  /** Rewrites each trade-history answer (the trades the venue really has for the query). */
  trades: ((trades: TradeRecord[], query: HistoryQuery | undefined) => TradeRecord[]) | undefined;
  /** Reads that fail now, as a temporary failure (a 503, or an answer trickling past the client's deadline). */
  readonly failing = new Set<LyingRead>();
  /** Reads answered so far, by kind (a test waits for the engine to have asked). */
  readonly reads = new Map<LyingRead, number>();
  readonly cancelOrder: ((symbol: string, displayingId: string) => Promise<OrderRecord>) | undefined;

  constructor(readonly inner: Venue) {
    const cancel = inner.cancelOrder?.bind(inner);
    this.cancelOrder =
      cancel === undefined
        ? undefined
        : async (symbol, displayingId) => this.said(await cancel(symbol, displayingId), 'cancel');
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
  async openOrders(pair?: string): Promise<OrderRecord[]> {
    this.read('open-orders');
    return (await this.inner.openOrders(pair)).map((r) => this.said(r, 'open-orders'));
  }
  async orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    this.read('history');
    return (await this.inner.orderHistory(query)).map((r) => this.said(r, 'history'));
  }
  async tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    this.read('trades');
    const trades = await this.inner.tradeHistory(query);
    return this.trades ? this.trades(trades, query) : trades;
  }
  async createOrder(request: OrderRequest): Promise<OrderRecord> {
    return this.said(await this.inner.createOrder(request), 'create');
  }

  private read(kind: LyingRead): void {
    this.reads.set(kind, (this.reads.get(kind) ?? 0) + 1);
    if (this.failing.has(kind))
      throw new VenueError('E_TIMEOUT', 'temporary', `${kind}: the answer never came in whole (lying venue)`);
  }

  private said(record: OrderRecord, source: RecordSource): OrderRecord {
    return this.order ? this.order(record, source) : record;
  }
}
