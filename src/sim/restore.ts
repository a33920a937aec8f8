/** Engine objects rebuilt from their persisted state (ledger.ts): the inverse of orderState and fillState. */
import { dec } from '../market/decimal.js';
import type { SimAsset } from './default-market.js';
import type { LedgerFill, LedgerOrder } from '../ports/ledger-records.js';
import type { SimAccount, SimFill, SimOrder, SimPair } from './state.js';

const optional = (text: string | undefined) => (text === undefined ? undefined : dec(text));

/** The order with its thresholds unset: the engine recomputes them per book. */
export function restoredOrder(s: LedgerOrder, account: SimAccount, pair: SimPair): SimOrder {
  return {
    id: s.id,
    account,
    pair,
    side: s.side,
    type: s.type,
    quantity: dec(s.quantity),
    price: dec(s.price),
    stopPrice: dec(s.stopPrice),
    limitPrice: dec(s.limitPrice),
    quoteOrderQty: optional(s.quoteOrderQty),
    useQuoteQty: s.useQuoteQty,
    status: s.status,
    stop: optional(s.stop),
    limit: optional(s.limit),
    leg: s.leg,
    lockPerUnit: dec(s.lockPerUnit),
    locked: dec(s.locked),
    executedQty: dec(s.executedQty),
    executedQuoteQty: dec(s.executedQuoteQty),
    fee: dec(s.fee),
    feeRatio: dec(s.feeRatio),
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    downAt: -Infinity,
    upAt: Infinity,
  };
}

export function restoredFill(s: LedgerFill, feeAsset: SimAsset): SimFill {
  return {
    id: s.id,
    orderId: s.orderId,
    symbol: s.symbol,
    side: s.side,
    price: dec(s.price),
    baseQty: dec(s.baseQty),
    quoteQty: dec(s.quoteQty),
    fee: dec(s.fee),
    feeAsset,
    feeRatio: dec(s.feeRatio),
    maker: s.maker,
    time: s.time,
  };
}
