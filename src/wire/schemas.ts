/**
 * The exchange's wire: zod schemas that parse its JSON into the venue records of the port
 * (ports/venue-records.ts); each schema is checked at compile time to produce exactly that record.
 * Tolerant reader (design.md invariant 5): unknown fields pass through, documented nulls are accepted,
 * ids arrive as numbers or strings and leave as strings, numbers may arrive as numeric text.
 * The 24-hour ticker keeps its one-letter keys here and in recordings; `tickerFromWire` names them.
 */
import { z } from 'zod';
import type { Balances, OrderRecord, OrderType, PairConfig, Ticker, TradeRecord } from '../ports/venue-records.js';
import type { Side } from '../market/pair-rules.js';

/** A number the exchange may send as a JSON number or as numeric text. */
export const wireNumber = z.union([
  z.number(),
  z
    .string()
    .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'expected a number or numeric text')
    .transform(Number),
]);
const optNumber = wireNumber.nullish().transform((v) => v ?? undefined);

/** Ids come as integers in order records and as strings in trade records: normalised to strings. */
export const wireId = z.union([z.string(), z.number().int()]).transform(String);

export const SideSchema = z.enum(['BUY', 'SELL']) satisfies z.ZodType<Side>;
export const OrderTypeSchema = z.enum(['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO']) satisfies z.ZodType<OrderType>;

export const FeeMetadataSchema = z.looseObject({
  feeMode: optNumber,
  originBaseQty: optNumber,
  assetId: optNumber,
  asset: z.string().nullish(),
  value: optNumber,
  feeRatio: optNumber,
  executed: z.unknown().optional(),
});

export const OrderRecordSchema = z.looseObject({
  _id: z.string().nullish(),
  displayingId: wireId,
  symbol: z.string(),
  side: SideSchema,
  type: z.string(),
  status: z.string(),
  price: optNumber,
  stopPrice: optNumber,
  limitPrice: optNumber,
  executedPrice: optNumber,
  quantity: wireNumber,
  executedQty: optNumber,
  quoteQty: optNumber,
  executedQuoteQty: optNumber,
  useQuoteQty: z.boolean().nullish(),
  ocoOrderId: wireId.nullish(),
  limitOrderId: wireId.nullish(),
  stopLimitOrderId: wireId.nullish(),
  createdAt: z.string().nullish(),
  updatedAt: z.string().nullish(),
  feeMetadata: FeeMetadataSchema.nullish(),
}) satisfies z.ZodType<OrderRecord>;

export const TradeRecordSchema = z.looseObject({
  _id: wireId,
  symbol: z.string(),
  side: SideSchema,
  /** The trade's own id (a string on the wire). */
  displayingId: wireId.nullish(),
  /** The order's displayingId. */
  orderId: wireId,
  price: wireNumber,
  baseQty: wireNumber,
  quoteQty: optNumber,
  flag: z.string().nullish(),
  createdAt: z.string(),
  baseAssetId: optNumber,
  quoteAssetId: optNumber,
  feeMetadata: z
    .looseObject({
      feeValue: optNumber,
      feeAssetId: optNumber,
      feeAsset: z.string().nullish(),
      feeRatio: optNumber,
      quoteQty: optNumber,
    })
    .nullish(),
}) satisfies z.ZodType<TradeRecord>;

export const FilterSchema = z.looseObject({ filterType: z.string() });

export const PairConfigSchema = z.looseObject({
  symbol: z.string(),
  status: z.string(),
  baseAsset: z.string(),
  baseAssetPrecision: z.number().int().nonnegative(),
  quoteAsset: z.string(),
  quotePrecision: z.number().int().nonnegative(),
  baseCommissionPrecision: z.number().int().nonnegative().nullish(),
  quoteCommissionPrecision: z.number().int().nonnegative().nullish(),
  orderTypes: z.array(z.string()).default([]),
  ocoAllowed: z.boolean().nullish(),
  isSpotTradingAllowed: z.boolean().nullish(),
  filters: z.array(FilterSchema).default([]),
  permissions: z.array(z.string()).nullish(),
  baseAssetId: z.number().int().nullish(),
  quoteAssetId: z.number().int().nullish(),
  createdAt: z.string().nullish(),
  updatedAt: z.string().nullish(),
}) satisfies z.ZodType<PairConfig>;

/**
 * 24-hour ticker entry as the exchange sends it and recordings keep it. Only s (symbol), p (last price) and
 * t (time, epoch ms) are certain; every other key is kept as it came (recordings store them all).
 */
export const TickerSchema = z.looseObject({
  s: z.string(),
  p: wireNumber,
  t: z.number().int(),
  h: optNumber,
  l: optNumber,
  vb: optNumber,
  vq: optNumber,
  b: z.string().nullish(),
  q: z.string().nullish(),
  bi: optNumber,
  qi: optNumber,
  /** The simulated exchange's extension on candle data: the candle this price closes, [open, high, low]. */
  c: z.tuple([wireNumber, wireNumber, wireNumber]).optional(),
});
export type WireTicker = z.infer<typeof TickerSchema>;

/** The named ticker of the port, from a wire (or recorded) entry: the one place the one-letter keys are read. */
export function tickerFromWire(w: WireTicker): Ticker {
  return {
    symbol: w.s,
    last: w.p,
    time: w.t,
    high: w.h,
    low: w.l,
    baseVolume: w.vb,
    quoteVolume: w.vq,
    baseAsset: w.b ?? undefined,
    quoteAsset: w.q ?? undefined,
    baseAssetId: w.bi,
    quoteAssetId: w.qi,
    candle: w.c === undefined ? undefined : { open: w.c[0], high: w.c[1], low: w.c[2] },
  };
}

export const BalanceEntrySchema = z.looseObject({
  value: wireNumber,
  locked_value: wireNumber.nullish().transform((v) => v ?? 0),
  type: z.number().int().nullish(),
});
/** Balances keyed by currency id (as text). */
export const BalancesSchema = z.record(z.string(), BalanceEntrySchema) satisfies z.ZodType<Balances>;

/** Open orders come as {orders: [...]} from the live exchange; a plain array is accepted too. */
export const OpenOrdersSchema = z.union([
  z.array(OrderRecordSchema),
  z.looseObject({ orders: z.array(OrderRecordSchema) }).transform((o) => o.orders),
]);

/** Private endpoints' error: {status: "BROKER_ERROR", code, data: {requestId}, message}. */
export const BrokerErrorSchema = z.looseObject({
  status: z.string(),
  code: z.union([z.number(), z.string()]).nullish(),
  data: z.looseObject({ requestId: z.string().nullish() }).nullish(),
  message: z.string().nullish(),
});

/** Public endpoints' and authentication errors: {statusCode, message, error}. */
export const HttpErrorBodySchema = z.looseObject({
  statusCode: z.number(),
  message: z.union([z.string(), z.array(z.string())]).nullish(),
  error: z.string().nullish(),
});

/** Whatever serves the market watch's entries as sent (the HTTP client): what the recorder and the proxy feed read. */
export interface WireTickerSource {
  marketWatchEntries(symbol?: string): Promise<WireTicker[]>;
}
