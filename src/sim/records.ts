/**
 * The simulated exchange's records, in the wire shapes of spot-api.md and exchange-notes.md: what the HTTP
 * server serialises and what the in-process venue parses with the same schemas as the HTTP client. Numbers
 * are JS numbers made from the exact decimals (Number(dec.toFixed())), so they carry no float noise.
 *
 * Choices where the spec is silent:
 * - An OCO is ONE order record of type OCO with price (limit leg), stopPrice and limitPrice (stop leg), so its
 *   fills all reference one displayingId; `executedType` names the leg that went on (LIMIT or STOP_LIMIT)
 *   once the other was cancelled, null while both are live.
 * - `limitPrice` is the price of a LIMIT or STOP_LIMIT order too, and 0 for MARKET (as the exchange shows);
 *   `stopPrice` is 0 for non-stop orders; `price` is 0 for MARKET.
 * - `quantity` of a MARKET order by quote amount is the base quantity it bought or sold.
 * - Placing returns the record as it stands after matching: a marketable order comes back FILLED at once.
 * - `quoteQty` is the order's quote value: price × quantity, quoteOrderQty for a MARKET by quote amount,
 *   the executed quote amount for a MARKET by quantity.
 * - `priceToCalLockAndFee` is the price a BUY's quote lock is computed at (null for a SELL).
 * - A trade's `feeMetadata.quoteQty` is the fee valued in the quote asset at the fill price.
 */
import type { OrderType } from '../ports/venue-records.js';
import type { Side } from '../market/pair-rules.js';
import type { Dec } from '../market/decimal.js';
import type { SimFill, SimOrder, SimOrderStatus } from './state.js';

export interface SimOrderRecord {
  _id: string;
  displayingId: number;
  userId: number;
  symbol: string;
  baseAsset: string;
  baseAssetId: number;
  quoteAsset: string;
  quoteAssetId: number;
  side: Side;
  type: OrderType;
  status: SimOrderStatus;
  price: number;
  stopPrice: number;
  limitPrice: number;
  executedPrice: number;
  quantity: number;
  executedQty: number;
  quoteQty: number;
  executedQuoteQty: number;
  useQuoteQty: boolean;
  executedType: string | null;
  priceToCalLockAndFee: number | null;
  limitOrderId: null;
  stopLimitOrderId: null;
  ocoOrderId: null;
  liquidityStatus: number;
  liquiditySymbol: null;
  liquidityUsdtPrice: number;
  liquidityTransferPrice: number;
  liquidityTransferFee: number;
  liquidityOrderId: null;
  internalError: boolean;
  createdAt: string;
  updatedAt: string;
  feeMetadata: {
    feeMode: number;
    originBaseQty: number;
    assetId: number;
    asset: string;
    value: number;
    feeRatio: number;
    executed: boolean;
  };
  metadata: Record<string, never>;
}

export interface SimTradeRecord {
  _id: string;
  symbol: string;
  side: Side;
  displayingId: string;
  orderId: number;
  price: number;
  baseQty: number;
  quoteQty: number;
  flag: string;
  createdAt: string;
  baseAssetId: number;
  quoteAssetId: number;
  feeMetadata: { feeValue: number; feeAssetId: number; feeAsset: string; feeRatio: number; quoteQty: number };
}

/** Freezes a record and the objects and arrays in it: shared records cannot be changed by one reader. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export function num(d: Dec): number {
  return Number(d.toFixed());
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function quoteValue(o: SimOrder): Dec {
  if (o.type !== 'MARKET') return o.price.mul(o.quantity);
  return o.quoteOrderQty ?? o.executedQuoteQty;
}

/**
 * An order's fields that its record shows and that can change once it is placed (the others, id, account,
 * pair, side, type, useQuoteQty and createdAt, never do), as its record was built from them. Decimals are
 * immutable: a change assigns a new one.
 */
function shownOf(o: SimOrder) {
  return {
    status: o.status,
    quantity: o.quantity,
    price: o.price,
    stopPrice: o.stopPrice,
    limitPrice: o.limitPrice,
    quoteOrderQty: o.quoteOrderQty,
    leg: o.leg,
    lockPerUnit: o.lockPerUnit,
    executedQty: o.executedQty,
    executedQuoteQty: o.executedQuoteQty,
    fee: o.fee,
    feeRatio: o.feeRatio,
    updatedAt: o.updatedAt,
  };
}

type Shown = ReturnType<typeof shownOf>;

/** Each field of Shown, named: this runs for every order of every history read (a loop over keys is slower). */
function unchanged(s: Shown, o: SimOrder): boolean {
  return (
    s.status === o.status &&
    s.quantity === o.quantity &&
    s.price === o.price &&
    s.stopPrice === o.stopPrice &&
    s.limitPrice === o.limitPrice &&
    s.quoteOrderQty === o.quoteOrderQty &&
    s.leg === o.leg &&
    s.lockPerUnit === o.lockPerUnit &&
    s.executedQty === o.executedQty &&
    s.executedQuoteQty === o.executedQuoteQty &&
    s.fee === o.fee &&
    s.feeRatio === o.feeRatio &&
    s.updatedAt === o.updatedAt
  );
}

const orderRecords = new WeakMap<SimOrder, { shown: Shown; record: SimOrderRecord }>();
const tradeRecords = new WeakMap<SimFill, SimTradeRecord>();

/**
 * The order's record as it stands. Records are frozen and shared: one is built again only when a field it
 * shows changed, so a history read of many unchanged orders (every poll of a long backtest) builds none.
 */
export function orderRecord(o: SimOrder): SimOrderRecord {
  const known = orderRecords.get(o);
  if (known !== undefined && unchanged(known.shown, o)) return known.record;
  // createdAt never changes: its text is the last record's.
  const record = buildOrderRecord(o, known?.record.createdAt ?? iso(o.createdAt));
  // Its two nested objects and itself, named (deepFreeze would walk its forty fields to find them).
  Object.freeze(record.feeMetadata);
  Object.freeze(record.metadata);
  Object.freeze(record);
  orderRecords.set(o, { shown: shownOf(o), record });
  return record;
}

function buildOrderRecord(o: SimOrder, createdAt: string): SimOrderRecord {
  const { pair } = o;
  const feeAsset = o.side === 'BUY' ? pair.base : pair.quote;
  const executed = !o.executedQty.isZero();
  return {
    _id: `sim-order-${o.id}`,
    displayingId: o.id,
    userId: o.account.userId,
    symbol: pair.symbol,
    baseAsset: pair.base.code,
    baseAssetId: pair.base.id,
    quoteAsset: pair.quote.code,
    quoteAssetId: pair.quote.id,
    side: o.side,
    type: o.type,
    status: o.status,
    price: num(o.price),
    stopPrice: num(o.stopPrice),
    limitPrice: num(o.limitPrice),
    executedPrice: executed ? num(o.executedQuoteQty.div(o.executedQty)) : 0,
    quantity: num(o.quantity),
    executedQty: num(o.executedQty),
    quoteQty: num(quoteValue(o)),
    executedQuoteQty: num(o.executedQuoteQty),
    useQuoteQty: o.useQuoteQty,
    executedType: o.leg ?? null,
    priceToCalLockAndFee: o.side === 'BUY' ? num(o.lockPerUnit) : null,
    limitOrderId: null,
    stopLimitOrderId: null,
    ocoOrderId: null,
    liquidityStatus: 0,
    liquiditySymbol: null,
    liquidityUsdtPrice: 0,
    liquidityTransferPrice: 0,
    liquidityTransferFee: 0,
    liquidityOrderId: null,
    internalError: false,
    createdAt,
    updatedAt: iso(o.updatedAt),
    feeMetadata: {
      feeMode: 0,
      originBaseQty: num(o.quantity),
      assetId: feeAsset.id,
      asset: feeAsset.code,
      value: num(o.fee),
      feeRatio: num(o.feeRatio),
      executed,
    },
    metadata: {},
  };
}

/** A fill's trade record (frozen, built once: fills never change). */
export function tradeRecord(f: SimFill, baseAssetId: number, quoteAssetId: number): SimTradeRecord {
  let record = tradeRecords.get(f);
  if (record === undefined) {
    record = buildTradeRecord(f, baseAssetId, quoteAssetId);
    Object.freeze(record.feeMetadata);
    Object.freeze(record);
    tradeRecords.set(f, record);
  }
  return record;
}

function buildTradeRecord(f: SimFill, baseAssetId: number, quoteAssetId: number): SimTradeRecord {
  return {
    _id: `sim-trade-${f.id}`,
    symbol: f.symbol,
    side: f.side,
    displayingId: String(f.id),
    orderId: f.orderId,
    price: num(f.price),
    baseQty: num(f.baseQty),
    quoteQty: num(f.quoteQty),
    flag: `${f.side}_ORDER_FILL`,
    createdAt: iso(f.time),
    baseAssetId,
    quoteAssetId,
    feeMetadata: {
      feeValue: num(f.fee),
      feeAssetId: f.feeAsset.id,
      feeAsset: f.feeAsset.code,
      feeRatio: num(f.feeRatio),
      quoteQty: num(f.side === 'BUY' ? f.fee.mul(f.price) : f.fee),
    },
  };
}
