/** The matching engine's internal state: exact decimals throughout, turned into wire records only on query. */
import type { OrderType, PairConfig } from '../ports/venue-records.js';
import type { Side } from '../market/pair-rules.js';
import type { Dec } from '../market/decimal.js';
import type { PairRules } from '../market/pair-rules.js';
import type { SimAsset } from './default-market.js';

export interface SimBalance {
  free: Dec;
  locked: Dec;
}

/** A class, not a literal: made once per run and read on every fill (see EngineParts in engine/engine-parts.ts). */
export class SimAccount {
  readonly apiKey: string;
  readonly userId: number;
  /** Keyed by asset id; every asset of the engine has an entry. */
  readonly balances: Map<number, SimBalance>;
  /** Every order, oldest first (add them with addOrder), on an engine without a ledger (ledger.ts). */
  readonly orders: SimOrder[] = [];
  /** Orders still NEW or PARTIALLY_FILLED, by id, oldest first. */
  readonly open = new Map<number, SimOrder>();
  /** Every fill, oldest first (add them with addFill), on an engine without a ledger. */
  readonly fills: SimFill[] = [];
  /**
   * Whether `orders` are in non-decreasing createdAt and `fills` in non-decreasing time, as they are unless the
   * clock went back (a wall clock set back): a history read since a time then stops at the first older item
   * instead of reading every item ever made (history-query.ts). Written by addOrder and addFill alone.
   */
  private ordersTimeOrdered = true;
  private fillsTimeOrdered = true;

  constructor(apiKey: string, userId: number, balances: Map<number, SimBalance>) {
    this.apiKey = apiKey;
    this.userId = userId;
    this.balances = balances;
  }

  get ordersInTimeOrder(): boolean {
    return this.ordersTimeOrdered;
  }

  get fillsInTimeOrder(): boolean {
    return this.fillsTimeOrdered;
  }

  addOrder(o: SimOrder): void {
    const last = this.orders.at(-1);
    if (last !== undefined && o.createdAt < last.createdAt) this.ordersTimeOrdered = false;
    this.orders.push(o);
  }

  addFill(f: SimFill): void {
    const last = this.fills.at(-1);
    if (last !== undefined && f.time < last.time) this.fillsTimeOrdered = false;
    this.fills.push(f);
  }
}

export interface SimPair {
  symbol: string;
  config: PairConfig;
  rules: PairRules;
  base: SimAsset;
  quote: SimAsset;
}

export type SimOrderStatus = 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED';

/** Which OCO leg went on once the other was cancelled (shown as the record's executedType). */
export type OcoLeg = 'LIMIT' | 'STOP_LIMIT';

export interface SimOrder {
  id: number;
  account: SimAccount;
  pair: SimPair;
  side: Side;
  type: OrderType;
  /** Base quantity (for a MARKET order by quote amount: the quantity it bought or sold). */
  quantity: Dec;
  /** As placed; zero where the type has none (as the exchange shows them). */
  price: Dec;
  stopPrice: Dec;
  limitPrice: Dec;
  quoteOrderQty: Dec | undefined;
  useQuoteQty: boolean;
  status: SimOrderStatus;
  /** The armed stop trigger: an untriggered STOP_LIMIT, or an OCO whose stop leg is still live. */
  stop: Dec | undefined;
  /** The limit price in force: LIMIT, a triggered STOP_LIMIT, an OCO's limit leg or its triggered stop leg. */
  limit: Dec | undefined;
  leg: OcoLeg | undefined;
  /** Quote per base unit locked by a BUY (its highest possible price); 1 for a SELL (it locks base). */
  lockPerUnit: Dec;
  /** What this order still holds locked, in the quote asset for a BUY, the base asset for a SELL. */
  locked: Dec;
  executedQty: Dec;
  executedQuoteQty: Dec;
  fee: Dec;
  feeRatio: Dec;
  createdAt: number;
  updatedAt: number;
  /** The order needs attention when the last price is <= downAt or >= upAt (numbers: see MatchingEngine). */
  downAt: number;
  upAt: number;
  /** With latency: the data time at which the order reaches the book; undefined once it has (or without). */
  arrivesAt?: number;
}

/** One fill, exact. The backtester can read these directly (MatchingEngine.fills) for exact metrics. */
export interface SimFill {
  id: number;
  orderId: number;
  symbol: string;
  side: Side;
  price: Dec;
  baseQty: Dec;
  quoteQty: Dec;
  /** Taken from the asset received: base for a BUY, quote for a SELL. */
  fee: Dec;
  feeAsset: SimAsset;
  feeRatio: Dec;
  maker: boolean;
  time: number;
  /**
   * A taker's: the market's price where it filled, which its price is moved from by slippage and by the impact
   * of its size (what the backtest report sums as what takers paid). Not kept by a paper ledger.
   */
  market?: Dec;
}
