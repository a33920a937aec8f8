/**
 * The seam through which the simulated exchange's state can outlive its process (paper trading), at no cost
 * where it must not (backtests, which pass no ledger: every call site is `ledger?.…`).
 *
 * The matching engine reports each change as it makes it (an order placed, filled, triggered or cancelled; a
 * fill added) and calls `commit` once at the end of the operation that made them (a place, a cancel, a tick
 * that matched), before that operation returns: the HTTP server answers only after the commit, so what the
 * bot is told is already durable, as on a real exchange. Between two commits nothing is observable.
 *
 * The state is plain data (ports/ledger-records.ts: decimals as plain text, exactly as the engine holds them):
 * what a ledger stores and what `MatchingEngine.restore` takes back. An engine with a ledger keeps in memory only
 * what matching needs (balances, open orders, the last prices, the next ids); the history (closed orders, fills)
 * stays in the ledger and is read from it on demand, so neither the restore nor memory grows with the account's
 * history.
 */
import type { LedgerAccount, LedgerFill, LedgerMarket, LedgerOrder, LedgerPage } from '../ports/ledger-records.js';
import { type Dec, plain } from '../market/decimal.js';
import type { SimFill, SimOrder } from './state.js';

export interface SimLedger {
  /** An order was placed or changed (filled, triggered, cancelled); read it at commit, not now. */
  orderChanged(order: SimOrder): void;
  /** A fill was added to `order`'s account. */
  filled(fill: SimFill, order: SimOrder): void;
  /** The end of one engine operation: everything reported since the last commit must be durable on return. */
  commit(): void;
  /** The order of this id as last committed, if any. */
  order(id: number): LedgerOrder | undefined;
  /** One page of a user's orders as last committed (history-query.ts reads the request into `page`). */
  orderPage(userId: number, page: LedgerPage): LedgerOrder[];
  /** One page of a user's fills as last committed. */
  fillPage(userId: number, page: LedgerPage): LedgerFill[];
}

/** What an engine with a ledger restores (the rest of its history it reads from the ledger). */
export interface SimState {
  accounts: LedgerAccount[];
  /** The orders still NEW or PARTIALLY_FILLED (restore sorts them by id). */
  open: LedgerOrder[];
  /** The highest order and fill ids given so far (0 when none): the next ones follow. */
  lastOrderId: number;
  lastFillId: number;
  /** Every pair the account's orders are on: each must still be listed, or its history could not be read. */
  symbols: string[];
  market: LedgerMarket[];
}

const text = (d: Dec | undefined): string | undefined => (d === undefined ? undefined : plain(d));

export function orderState(o: SimOrder): LedgerOrder {
  return {
    id: o.id,
    userId: o.account.userId,
    symbol: o.pair.symbol,
    side: o.side,
    type: o.type,
    status: o.status,
    quantity: plain(o.quantity),
    price: plain(o.price),
    stopPrice: plain(o.stopPrice),
    limitPrice: plain(o.limitPrice),
    quoteOrderQty: text(o.quoteOrderQty),
    useQuoteQty: o.useQuoteQty,
    stop: text(o.stop),
    limit: text(o.limit),
    leg: o.leg,
    lockPerUnit: plain(o.lockPerUnit),
    locked: plain(o.locked),
    executedQty: plain(o.executedQty),
    executedQuoteQty: plain(o.executedQuoteQty),
    fee: plain(o.fee),
    feeRatio: plain(o.feeRatio),
    createdAt: o.createdAt,
    updatedAt: o.updatedAt,
  };
}

export function fillState(f: SimFill, userId: number): LedgerFill {
  return {
    id: f.id,
    orderId: f.orderId,
    userId,
    symbol: f.symbol,
    side: f.side,
    price: plain(f.price),
    baseQty: plain(f.baseQty),
    quoteQty: plain(f.quoteQty),
    fee: plain(f.fee),
    feeAsset: f.feeAsset.code,
    feeRatio: plain(f.feeRatio),
    maker: f.maker,
    time: f.time,
  };
}
