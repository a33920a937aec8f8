/**
 * The paper exchange's persisted records: the embedded simulated exchange's state as plain data (decimals as
 * exact plain text), which it writes through its ledger (sim/ledger.ts) and the store keeps in its paper_*
 * tables (store/paper-exchange.ts). Here, between the two, so that neither depends on the other.
 */
import type { Side } from '../market/pair-rules.js';
import type { OrderType } from './venue-records.js';

export interface LedgerBalance {
  free: string;
  locked: string;
}

export interface LedgerAccount {
  apiKey: string;
  userId: number;
  /** By asset code. */
  balances: Record<string, LedgerBalance>;
}

export interface LedgerOrder {
  id: number;
  userId: number;
  symbol: string;
  side: Side;
  type: OrderType;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED';
  quantity: string;
  price: string;
  stopPrice: string;
  limitPrice: string;
  quoteOrderQty: string | undefined;
  useQuoteQty: boolean;
  /** The armed stop trigger, if any (a STOP_LIMIT's, or an OCO's stop leg). */
  stop: string | undefined;
  /** The limit in force, if any (a LIMIT's, a triggered stop's, an OCO leg's). */
  limit: string | undefined;
  /** The OCO leg that went on. */
  leg: 'LIMIT' | 'STOP_LIMIT' | undefined;
  lockPerUnit: string;
  locked: string;
  executedQty: string;
  executedQuoteQty: string;
  fee: string;
  feeRatio: string;
  createdAt: number;
  updatedAt: number;
}

export interface LedgerFill {
  id: number;
  orderId: number;
  userId: number;
  symbol: string;
  side: Side;
  price: string;
  baseQty: string;
  quoteQty: string;
  fee: string;
  /** Asset code. */
  feeAsset: string;
  feeRatio: string;
  maker: boolean;
  time: number;
}

/** A pair's last price, its time, and the whole ticker the market watch serves back (when one was fed). */
export interface LedgerMarket {
  symbol: string;
  price: number;
  time: number;
  ticker: Record<string, unknown> | undefined;
}

/**
 * One page of an account's order or trade history as the simulated exchange selects it (sim/history-query.ts
 * reads the request into it): the records matching every filter given, newest (highest id) first, `skip` of
 * them passed over, at most `size` returned. Times are epoch ms, inclusive, compared with an order's creation
 * time or a fill's time; `hideCanceled` drops CANCELED orders (fills are never canceled).
 */
export interface LedgerPage {
  symbol: string | undefined;
  side: Side | undefined;
  from: number;
  to: number;
  hideCanceled: boolean;
  skip: number;
  size: number;
}
