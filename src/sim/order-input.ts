/**
 * Checks an order request against its type and the pair's rules, before the engine looks at the market or
 * the balance. Which fields each type takes follows the exchange's own examples (exchange-notes.md):
 *
 * | type       | required                                  | refused                                  |
 * |------------|-------------------------------------------|------------------------------------------|
 * | LIMIT      | quantity, price                           | stopPrice, limitPrice, useQuoteQty=true  |
 * | MARKET     | quantity, or quoteOrderQty + useQuoteQty  | price, stopPrice, limitPrice (and quantity when useQuoteQty) |
 * | STOP_LIMIT | quantity, price, stopPrice                | limitPrice, useQuoteQty=true             |
 * | OCO        | quantity, price, stopPrice, limitPrice    | useQuoteQty=true                         |
 *
 * `quoteOrderQty` with `useQuoteQty` false (or absent) is accepted and ignored, as the exchange's LIMIT
 * examples send it. A null field counts as absent (JSON bodies carry nulls).
 */
import type { OrderType } from '../ports/venue-records.js';
import type { Side } from '../market/pair-rules.js';
import { type Dec, fromWire } from '../market/decimal.js';
import type { PairRules } from '../market/pair-rules.js';
import { SimRejectError } from './error-codes.js';

type NumberField = 'quantity' | 'price' | 'stopPrice' | 'limitPrice' | 'quoteOrderQty';
type WireValue = string | number | null | undefined;

/** An order as a client sends it: numbers as JSON numbers or plain decimal text. */
export interface SimOrderInput {
  symbol: string;
  side: string;
  type: string;
  quantity?: WireValue;
  price?: WireValue;
  stopPrice?: WireValue;
  limitPrice?: WireValue;
  quoteOrderQty?: WireValue;
  useQuoteQty?: boolean | null;
}

export interface ParsedOrder {
  side: Side;
  type: OrderType;
  /** Undefined only for a MARKET order by quote amount (the engine derives it from the fill price). */
  quantity: Dec | undefined;
  price: Dec | undefined;
  stopPrice: Dec | undefined;
  limitPrice: Dec | undefined;
  /** Set only when useQuoteQty is true. */
  quoteOrderQty: Dec | undefined;
  useQuoteQty: boolean;
}

const FIELDS: Record<Exclude<OrderType, 'MARKET'>, { required: NumberField[]; refused: NumberField[] }> = {
  LIMIT: { required: ['quantity', 'price'], refused: ['stopPrice', 'limitPrice'] },
  STOP_LIMIT: { required: ['quantity', 'price', 'stopPrice'], refused: ['limitPrice'] },
  OCO: { required: ['quantity', 'price', 'stopPrice', 'limitPrice'], refused: [] },
};
const PRICE_FIELDS: readonly NumberField[] = ['price', 'stopPrice', 'limitPrice'];
const PLAIN_POSITIVE_TEXT = /^\d+(\.\d+)?$/;

function fieldsFor(type: OrderType, useQuoteQty: boolean): { required: NumberField[]; refused: NumberField[] } {
  if (type !== 'MARKET') return FIELDS[type];
  return useQuoteQty
    ? { required: ['quoteOrderQty'], refused: ['quantity', 'price', 'stopPrice', 'limitPrice'] }
    : { required: ['quantity'], refused: ['price', 'stopPrice', 'limitPrice'] };
}

function present(v: WireValue): v is string | number {
  return v !== undefined && v !== null;
}

function positive(field: NumberField, v: string | number, symbol: string): Dec {
  const ok = typeof v === 'number' ? Number.isFinite(v) && v > 0 : PLAIN_POSITIVE_TEXT.test(v);
  const d = ok ? fromWire(v) : undefined;
  if (!d || d.lte(0))
    throw new SimRejectError('INVALID_NUMBER', `${field} must be a positive plain decimal, got ${JSON.stringify(v)}`, {
      symbol,
      field,
    });
  return d;
}

function checkPrice(rules: PairRules, field: NumberField, p: Dec): void {
  const context = { symbol: rules.symbol, field, value: p.toFixed() };
  if (!p.mod(rules.tickSize).isZero())
    throw new SimRejectError(
      'PRICE_OFF_TICK',
      `${field} ${p.toFixed()} is not a multiple of tickSize ${rules.tickSize.toFixed()} on ${rules.symbol}`,
      context,
    );
  if (p.lt(rules.minPrice))
    throw new SimRejectError(
      'PRICE_BELOW_MIN',
      `${field} ${p.toFixed()} is below minPrice ${rules.minPrice.toFixed()} on ${rules.symbol}`,
      context,
    );
  if (rules.maxPrice && p.gt(rules.maxPrice))
    throw new SimRejectError(
      'PRICE_ABOVE_MAX',
      `${field} ${p.toFixed()} is above maxPrice ${rules.maxPrice.toFixed()} on ${rules.symbol}`,
      context,
    );
}

/** Throws a QUANTITY_* rejection unless the base quantity is on the step and within LOT_SIZE bounds. */
export function checkQuantity(rules: PairRules, q: Dec): void {
  const context = { symbol: rules.symbol, field: 'quantity', value: q.toFixed() };
  if (!q.mod(rules.stepSize).isZero())
    throw new SimRejectError(
      'QUANTITY_PRECISION',
      `quantity ${q.toFixed()} is finer than the step ${rules.stepSize.toFixed()} of ${rules.symbol}`,
      context,
    );
  if (q.lt(rules.minQty) || q.lte(0) || (rules.maxQty && q.gt(rules.maxQty)))
    throw new SimRejectError(
      'QUANTITY_OUT_OF_BOUNDS',
      `quantity ${q.toFixed()} is outside [${rules.minQty.toFixed()}, ${rules.maxQty?.toFixed() ?? 'unbounded'}] on ${rules.symbol}`,
      context,
    );
}

/** Validate the request's shape and numbers against the pair's rules; market and balance checks come later. */
export function parseOrderInput(rules: PairRules, input: SimOrderInput): ParsedOrder {
  const symbol = rules.symbol;
  const type = input.type as OrderType;
  if (
    !rules.orderTypes.has(input.type) ||
    (type === 'OCO' && !rules.ocoAllowed) ||
    !(Object.hasOwn(FIELDS, type) || type === 'MARKET')
  )
    throw new SimRejectError(
      'ORDER_TYPE_NOT_ALLOWED',
      `order type ${JSON.stringify(input.type)} is not allowed on ${symbol}`,
      {
        symbol,
        type: input.type,
      },
    );
  if (input.side !== 'BUY' && input.side !== 'SELL')
    throw new SimRejectError('INVALID_SIDE', `side must be BUY or SELL, got ${JSON.stringify(input.side)}`, { symbol });
  const useQuoteQty = input.useQuoteQty === true;
  if (useQuoteQty && type !== 'MARKET')
    throw new SimRejectError('UNEXPECTED_FIELD', `useQuoteQty=true is only for MARKET orders, not ${type}`, {
      symbol,
      field: 'useQuoteQty',
    });

  const { required, refused } = fieldsFor(type, useQuoteQty);
  for (const field of required)
    if (!present(input[field]))
      throw new SimRejectError('MISSING_FIELD', `${type} order needs ${field}`, { symbol, field });
  for (const field of refused)
    if (present(input[field]))
      throw new SimRejectError('UNEXPECTED_FIELD', `${type} order does not take ${field}`, { symbol, field });

  const values: Partial<Record<NumberField, Dec>> = {};
  for (const field of required) values[field] = positive(field, input[field] as string | number, symbol);
  for (const field of PRICE_FIELDS) {
    const p = values[field];
    if (p) checkPrice(rules, field, p);
  }
  if (values.quantity) checkQuantity(rules, values.quantity);
  const quote = values.quoteOrderQty;
  if (quote && quote.decimalPlaces() > rules.quotePrecision)
    throw new SimRejectError(
      'QUANTITY_PRECISION',
      `quoteOrderQty ${quote.toFixed()} has more than ${rules.quotePrecision} decimals on ${symbol}`,
      { symbol, field: 'quoteOrderQty' },
    );

  return {
    side: input.side,
    type,
    quantity: values.quantity,
    price: values.price,
    stopPrice: values.stopPrice,
    limitPrice: values.limitPrice,
    quoteOrderQty: quote,
    useQuoteQty,
  };
}

/** Quantity bought or sold for a quote amount at a price: rounded down onto the pair's quantity step. */
export function quantityForQuote(rules: PairRules, quote: Dec, price: Dec): Dec {
  return quote.div(price).div(rules.stepSize).floor().mul(rules.stepSize);
}
