/**
 * Building blocks that several strategies need, exported through the strategy API (strategies may import
 * nothing else): step rounding, percentage moves, pair-acceptable quantities, one-off notices and the
 * exit bracket. All exact decimals.
 */
import { D, dec, type Dec } from '../market/decimal.js';
import { type PairRules, tradableQuantity } from '../market/pair-rules.js';
import type { OrderView, StrategyContext } from './context.js';

/** What can really be traded (sold) under a pair's rules: market/pair-rules.ts, the engine's rule too. */
export { tradableQuantity };

export const floorTo = (value: Dec, step: Dec): Dec => value.div(step).floor().mul(step);
export const ceilTo = (value: Dec, step: Dec): Dec => value.div(step).ceil().mul(step);

/** `value` moved by `percent` percent: pctMove(100, 1) = 101, pctMove(100, -1) = 99. */
export const pctMove = (value: Dec, percent: Dec): Dec => value.mul(percent.div(100).plus(1));

/** Quantity still to fill across orders. */
export function remainingQuantity(orders: readonly OrderView[]): Dec {
  return orders.reduce((sum, o) => sum.plus(o.quantity.minus(o.filledQuantity)), dec(0));
}

/** State a strategy keeps so that a notice is logged once, not on every tick. */
export interface NoticeState {
  noticed?: string[];
}

/** Logs `message` the first time `key` comes up for this instance (remembered in its state). */
export function noticeOnce(
  ctx: StrategyContext<unknown, NoticeState>,
  key: string,
  message: string,
  data?: Record<string, unknown>,
  level: 'info' | 'warn' = 'warn',
): void {
  const noticed = (ctx.state.noticed ??= []);
  if (noticed.includes(key)) return;
  noticed.push(key);
  ctx.log[level](message, data);
}

/**
 * Whether an entry BUY of `quantity` at `price` can go out now: not dust (see tradableQuantity), and the free
 * quote covers it. Each refusal is logged once, not on every tick.
 */
export function canBuy(ctx: StrategyContext<unknown, NoticeState>, quantity: Dec, price: Dec): boolean {
  if (quantity.isZero()) {
    noticeOnce(ctx, 'small', 'entry below the pair minimums: not placed', { price: price.toFixed() });
    return false;
  }
  const cost = price.mul(quantity);
  const free = ctx.balances.get(ctx.rules.quoteAsset)?.free;
  if (free !== undefined && free.lt(cost)) {
    noticeOnce(ctx, 'quote', 'not enough free quote for the entry: waiting', { cost: cost.toFixed() });
    return false;
  }
  return true;
}

export interface ExitLevels {
  /** Take-profit price (the plain limit leg). */
  takeProfit: Dec;
  /** Stop-loss trigger. */
  stop: Dec;
  /** Where the stop leg rests once triggered. */
  limit: Dec;
}

/**
 * Exit levels for a long position entered at `entry`: take profit `takeProfitPct` above it (or at the given
 * price), stop `stopLossPct` below it, both on the tick grid, and the stop leg resting `stopLimitPct` under the stop.
 */
export function exitLevels(
  rules: PairRules,
  entry: Dec,
  p: { takeProfit?: Dec; takeProfitPct?: Dec; stopLossPct: Dec; stopLimitPct: Dec },
): ExitLevels {
  const tick = rules.tickSize;
  const stop = ceilTo(pctMove(entry, p.stopLossPct.neg()), tick);
  const takeProfit = ceilTo(p.takeProfit ?? pctMove(entry, p.takeProfitPct ?? dec(0)), tick);
  return { takeProfit, stop, limit: pctMove(stop, p.stopLimitPct.neg()) };
}

/**
 * Sells `quantity` through an OCO exit bracket. When the price is already past a leg, the OCO would be refused
 * (its stop would trigger at once), so it sells with a LIMIT instead: at the take profit, or at the stop's
 * limit (the last price when already under it).
 */
export function sellWithBracket(
  ctx: StrategyContext<unknown, object>,
  quantity: Dec,
  levels: ExitLevels,
  tag: string,
  data: Record<string, unknown> = {},
): void {
  const price = ctx.price;
  const { takeProfit, stop, limit } = levels;
  const info = { ...data, quantity: quantity.toFixed(), takeProfit: takeProfit.toFixed(), stop: stop.toFixed() };
  if (price !== undefined && price.gte(takeProfit)) {
    ctx.log.info('exit: price already at the take profit, selling at it', info);
    ctx.limit('SELL', takeProfit, quantity, { tag });
  } else if (price !== undefined && price.lte(stop)) {
    ctx.log.info('exit: price already at or below the stop, selling at once', info);
    ctx.limit('SELL', D.min(limit, price), quantity, { tag });
  } else {
    ctx.log.info('exit bracket placed', info);
    ctx.oco('SELL', { price: takeProfit, stopPrice: stop, limitPrice: limit }, quantity, { tag });
  }
}

/**
 * Brackets the base this instance holds that its open exits (tagged `tag`) do not cover yet. Returns true
 * while a position is open (base held or an exit open), so the caller starts no new entry.
 */
export function protectPosition(
  ctx: StrategyContext<unknown, NoticeState>,
  tag: string,
  levelsFor: (entry: Dec) => ExitLevels,
): boolean {
  const price = ctx.price;
  if (price === undefined) return false;
  const exits = ctx.openOrders.filter((o) => o.tag === tag);
  const { quantity: held, averagePrice: entry } = ctx.position;
  const levels = levelsFor(entry);
  const qty = tradableQuantity(ctx.rules, held.minus(remainingQuantity(exits)), levels.stop);
  if (qty.isZero()) return exits.length > 0 || tradableQuantity(ctx.rules, held, price).gt(0);
  const free = ctx.balances.get(ctx.rules.baseAsset)?.free;
  if (free !== undefined && free.lt(qty)) {
    noticeOnce(ctx, 'base', 'not enough free base to bracket the position: waiting', { quantity: qty.toFixed() });
    return true;
  }
  sellWithBracket(ctx, qty, levels, tag, { entry: entry.toFixed(), price: price.toFixed() });
  return true;
}
