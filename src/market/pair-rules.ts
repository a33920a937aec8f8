import { D, dec, type Dec, type DecimalLike, fromWire } from './decimal.js';

export type Side = 'BUY' | 'SELL';

/**
 * What the rules are read from: the fields of a venue's pair configuration that matter here (the port's
 * PairConfig has them all; this ring imports nothing, so it names them itself).
 */
export interface PairConfigFields {
  symbol: string;
  status: string;
  baseAsset: string;
  quoteAsset: string;
  baseAssetPrecision: number;
  quotePrecision: number;
  baseAssetId?: number | null;
  quoteAssetId?: number | null;
  orderTypes: readonly string[];
  ocoAllowed?: boolean | null;
  filters: readonly { filterType: string; [key: string]: unknown }[];
}

/** The trading rules of one pair, in exact decimals, read once from the exchange's pair configuration. */
export interface PairRules {
  symbol: string;
  baseAsset: string;
  quoteAsset: string;
  baseAssetId: number | undefined;
  quoteAssetId: number | undefined;
  status: string;
  /** Price step; derived from quotePrecision when the exchange publishes none (or 0). */
  tickSize: Dec;
  minPrice: Dec;
  /** Upper price bound; undefined when the exchange publishes none (or 0). */
  maxPrice: Dec | undefined;
  /** Quantity step: LOT_SIZE stepSize when published, else 10^-baseAssetPrecision. */
  stepSize: Dec;
  minQty: Dec;
  maxQty: Dec | undefined;
  /** Minimum order value in the quote asset (MIN_NOTIONAL / NOTIONAL filter), zero when absent. */
  minNotional: Dec;
  baseAssetPrecision: number;
  quotePrecision: number;
  orderTypes: ReadonlySet<string>;
  ocoAllowed: boolean;
}

function filter(config: PairConfigFields, type: string): Record<string, unknown> | undefined {
  return config.filters.find((f) => f.filterType === type);
}

const NUMERIC = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A filter's figure: absent or zero means "no such bound"; anything else must be a finite, non-negative
 * number, or the pair's rules cannot be known and the configuration is refused with a clear error.
 */
function optDec(symbol: string, field: string, v: unknown): Dec | undefined {
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return undefined;
  const ok = (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && NUMERIC.test(v.trim()));
  const d = ok ? fromWire(typeof v === 'string' ? v.trim() : v) : undefined;
  // A RangeError: this ring has no error classes; the engine reports it as an unusable venue answer.
  if (d === undefined || d.isNeg() || !d.isFinite())
    throw new RangeError(`pair configuration of ${symbol}: ${field} is not a usable number (${JSON.stringify(v)})`);
  return d.isZero() ? undefined : d;
}

export function pairRulesFrom(config: PairConfigFields): PairRules {
  const price = filter(config, 'PRICE_FILTER');
  const lot = filter(config, 'LOT_SIZE');
  const notional = filter(config, 'MIN_NOTIONAL') ?? filter(config, 'NOTIONAL');
  const s = config.symbol;
  const quoteStep = new D(1).div(new D(10).pow(config.quotePrecision));
  const baseStep = new D(1).div(new D(10).pow(config.baseAssetPrecision));
  return {
    symbol: config.symbol,
    baseAsset: config.baseAsset,
    quoteAsset: config.quoteAsset,
    baseAssetId: config.baseAssetId ?? undefined,
    quoteAssetId: config.quoteAssetId ?? undefined,
    status: config.status,
    tickSize: optDec(s, 'PRICE_FILTER.tickSize', price?.tickSize) ?? quoteStep,
    minPrice: optDec(s, 'PRICE_FILTER.minPrice', price?.minPrice) ?? new D(0),
    maxPrice: optDec(s, 'PRICE_FILTER.maxPrice', price?.maxPrice),
    stepSize: optDec(s, 'LOT_SIZE.stepSize', lot?.stepSize) ?? baseStep,
    minQty: optDec(s, 'LOT_SIZE.minQty', lot?.minQty) ?? new D(0),
    maxQty: optDec(s, 'LOT_SIZE.maxQty', lot?.maxQty),
    minNotional: optDec(s, 'MIN_NOTIONAL.minNotional', notional?.minNotional ?? notional?.minNotionalValue) ?? new D(0),
    baseAssetPrecision: config.baseAssetPrecision,
    quotePrecision: config.quotePrecision,
    orderTypes: new Set(config.orderTypes),
    ocoAllowed: config.ocoAllowed ?? config.orderTypes.includes('OCO'),
  };
}

/** Round to a multiple of step, towards zero or away from it. */
function toStep(value: Dec, step: Dec, up: boolean): Dec {
  const n = value.div(step);
  return (up ? n.ceil() : n.floor()).mul(step);
}

/**
 * Round a price onto the tick grid, never worse for the side than asked: a BUY rounds down (pays no more),
 * a SELL rounds up (receives no less).
 */
export function roundPrice(rules: PairRules, price: DecimalLike, side: Side): Dec {
  return toStep(dec(price), rules.tickSize, side === 'SELL');
}

/** Round a quantity down onto the quantity step: never trade more than asked. */
export function roundQuantity(rules: PairRules, quantity: DecimalLike): Dec {
  return toStep(dec(quantity), rules.stepSize, false);
}

/** Too small to place: nothing, under the pair's minQty, or (where the price is known) under its minNotional. */
export function belowMinimum(rules: PairRules, quantity: Dec, price: Dec | undefined): boolean {
  return (
    quantity.isZero() || quantity.lt(rules.minQty) || (price !== undefined && quantity.mul(price).lt(rules.minNotional))
  );
}

/**
 * The quantity that can really be traded: `quantity` floored to the pair's step, zero when that is below the
 * pair's minimum quantity or (given a price) its minimum order value. Of a position,
 * `tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price)` is what can really be sold: the position
 * less its fee dust (a buy's base fee leaves a residue below the step that no order can sell, so
 * `position.quantity.gt(0)` stays true after the last sell; this is zero then). The strategies' toolkit
 * exports it; the engine sizes its own SELLs with it (the operator's and the declared exits', the held stop).
 */
export function tradableQuantity(rules: PairRules, quantity: Dec, price?: Dec): Dec {
  const qty = roundQuantity(rules, quantity);
  return qty.isNeg() || belowMinimum(rules, qty, price) ? dec(0) : qty;
}

export function isOnTick(rules: PairRules, price: Dec): boolean {
  return price.mod(rules.tickSize).isZero();
}

export function isOnStep(rules: PairRules, quantity: Dec): boolean {
  return quantity.mod(rules.stepSize).isZero();
}

/** Why a price breaks PRICE_FILTER, or undefined when it is fine. */
export function priceProblem(rules: PairRules, price: Dec, field = 'price'): string | undefined {
  if (!price.isFinite() || price.lte(0)) return `${field} ${price.toFixed()} is not positive`;
  if (!isOnTick(rules, price))
    return `${field} ${price.toFixed()} is not a multiple of tickSize ${rules.tickSize.toFixed()}`;
  if (price.lt(rules.minPrice)) return `${field} ${price.toFixed()} is below minPrice ${rules.minPrice.toFixed()}`;
  if (rules.maxPrice && price.gt(rules.maxPrice))
    return `${field} ${price.toFixed()} is above maxPrice ${rules.maxPrice.toFixed()}`;
  return undefined;
}

/** Why a quantity breaks the pair's precision or lot bounds, or undefined when it is fine. */
export function quantityProblem(rules: PairRules, quantity: Dec): string | undefined {
  if (!quantity.isFinite() || quantity.lte(0)) return `quantity ${quantity.toFixed()} is not positive`;
  if (!isOnStep(rules, quantity))
    return `quantity ${quantity.toFixed()} has more precision than step ${rules.stepSize.toFixed()}`;
  if (quantity.lt(rules.minQty)) return `quantity ${quantity.toFixed()} is below minQty ${rules.minQty.toFixed()}`;
  if (rules.maxQty && quantity.gt(rules.maxQty))
    return `quantity ${quantity.toFixed()} is above maxQty ${rules.maxQty.toFixed()}`;
  return undefined;
}
