/**
 * The strict writer (invariant 5): an order intent becomes a wire request only if it satisfies the pair's
 * rules and makes sense against the last price. Anything else is refused here, before the network.
 */
import { D, type Dec, plain } from '../market/decimal.js';
import { type PairRules, priceProblem, quantityProblem } from '../market/pair-rules.js';
import type { OrderRequest } from '../ports/venue.js';
import type { OrderIntent } from '../strategy/api.js';

export interface CheckedOrder {
  request: OrderRequest;
  /** Base quantity (estimated at the last price for a MARKET order by quote amount). */
  baseQuantity: Dec;
  /** Quote value at the order's worst price (estimated at the last price for MARKET). */
  notional: Dec;
}

export type CheckResult = { ok: true; order: CheckedOrder } | { ok: false; reason: string };

function refuse(reason: string): CheckResult {
  return { ok: false, reason };
}

function needsLast(last: Dec | undefined, what: string): string | undefined {
  return last === undefined ? `no last price for the pair yet: cannot check ${what}` : undefined;
}

function shapeProblem(intent: OrderIntent, last: Dec): string | undefined {
  const lastText = last.toFixed();
  if (intent.kind === 'STOP_LIMIT') {
    const stop = intent.stopPrice.toFixed();
    if (intent.side === 'BUY' && intent.stopPrice.lte(last))
      return `STOP_LIMIT BUY stopPrice ${stop} is at or below the last price ${lastText}: it would trigger at once`;
    if (intent.side === 'SELL' && intent.stopPrice.gte(last))
      return `STOP_LIMIT SELL stopPrice ${stop} is at or above the last price ${lastText}: it would trigger at once`;
  }
  if (intent.kind === 'OCO') {
    const legs = `price ${intent.price.toFixed()}, stopPrice ${intent.stopPrice.toFixed()}, last ${lastText}`;
    if (intent.side === 'SELL' && !(intent.price.gt(last) && intent.stopPrice.lt(last)))
      return `OCO SELL legs on the wrong side (${legs}): price must be above the last price and stopPrice below it`;
    if (intent.side === 'BUY' && !(intent.price.lt(last) && intent.stopPrice.gt(last)))
      return `OCO BUY legs on the wrong side (${legs}): price must be below the last price and stopPrice above it`;
  }
  return undefined;
}

function quoteStep(rules: PairRules): Dec {
  return new D(1).div(new D(10).pow(rules.quotePrecision));
}

export function checkOrder(intent: OrderIntent, rules: PairRules, last: Dec | undefined): CheckResult {
  if (rules.status !== 'TRADING') return refuse(`${rules.symbol} is not trading (status ${rules.status})`);
  if (!rules.orderTypes.has(intent.kind)) return refuse(`${intent.kind} orders are not allowed on ${rules.symbol}`);
  if (intent.kind === 'OCO' && !rules.ocoAllowed) return refuse(`OCO orders are not allowed on ${rules.symbol}`);
  const request: OrderRequest = { symbol: rules.symbol, side: intent.side, type: intent.kind };

  if (intent.kind === 'MARKET') {
    const missing = needsLast(last, 'a MARKET order');
    if (missing || last === undefined) return refuse(missing ?? '');
    if ((intent.quantity === undefined) === (intent.quoteAmount === undefined))
      return refuse('a MARKET order needs exactly one of quantity and quoteAmount');
    if (intent.quoteAmount !== undefined) {
      const q = intent.quoteAmount;
      if (!q.isFinite() || q.lte(0)) return refuse(`quoteAmount ${q.toFixed()} is not positive`);
      if (!q.mod(quoteStep(rules)).isZero())
        return refuse(`quoteAmount ${q.toFixed()} has more than ${rules.quotePrecision} decimals`);
      if (q.lt(rules.minNotional))
        return refuse(`quoteAmount ${q.toFixed()} is below minNotional ${rules.minNotional.toFixed()}`);
      request.quoteOrderQty = plain(q);
      request.useQuoteQty = true;
      return { ok: true, order: { request, baseQuantity: q.div(last), notional: q } };
    }
    const qty = intent.quantity as Dec;
    const problem = quantityProblem(rules, qty);
    if (problem) return refuse(problem);
    const notional = qty.mul(last);
    if (notional.lt(rules.minNotional))
      return refuse(`order value ${notional.toFixed()} is below minNotional ${rules.minNotional.toFixed()}`);
    request.quantity = plain(qty);
    return { ok: true, order: { request, baseQuantity: qty, notional } };
  }

  const problem =
    priceProblem(rules, intent.price) ??
    (intent.kind !== 'LIMIT' ? priceProblem(rules, intent.stopPrice, 'stopPrice') : undefined) ??
    (intent.kind === 'OCO' ? priceProblem(rules, intent.limitPrice, 'limitPrice') : undefined) ??
    quantityProblem(rules, intent.quantity);
  if (problem) return refuse(problem);
  if (intent.kind !== 'LIMIT') {
    const missing = needsLast(last, `where a ${intent.kind} stop lies`);
    if (missing || last === undefined) return refuse(missing ?? '');
    const shape = shapeProblem(intent, last);
    if (shape) return refuse(shape);
  }
  // The highest price the order can execute at decides its value (an OCO BUY's stop leg can rest higher).
  const worstPrice = intent.kind === 'OCO' && intent.limitPrice.gt(intent.price) ? intent.limitPrice : intent.price;
  const notional = worstPrice.mul(intent.quantity);
  if (intent.price.mul(intent.quantity).lt(rules.minNotional))
    return refuse(
      `order value ${intent.price.mul(intent.quantity).toFixed()} is below minNotional ${rules.minNotional.toFixed()}`,
    );
  request.quantity = plain(intent.quantity);
  request.price = plain(intent.price);
  if (intent.kind !== 'LIMIT') request.stopPrice = plain(intent.stopPrice);
  if (intent.kind === 'OCO') request.limitPrice = plain(intent.limitPrice);
  return { ok: true, order: { request, baseQuantity: intent.quantity, notional } };
}
