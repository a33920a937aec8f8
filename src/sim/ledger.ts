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
 * what a ledger stores and what `MatchingEngine.restore` takes back.
 */
import type { LedgerAccount, LedgerFill, LedgerMarket, LedgerOrder } from '../ports/ledger-records.js';
import { type Dec, plain } from '../market/decimal.js';
import type { SimFill, SimOrder } from './state.js';

export interface SimLedger {
  /** An order was placed or changed (filled, triggered, cancelled); read it at commit, not now. */
  orderChanged(order: SimOrder): void;
  /** A fill was added to `order`'s account. */
  filled(fill: SimFill, order: SimOrder): void;
  /** The end of one engine operation: everything reported since the last commit must be durable on return. */
  commit(): void;
}

export interface SimState {
  accounts: LedgerAccount[];
  /** Every order, any order (restore sorts by id). */
  orders: LedgerOrder[];
  fills: LedgerFill[];
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
