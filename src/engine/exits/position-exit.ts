/**
 * Getting out of an instance's position by hand: pause the instance, cancel its open orders (an exit order
 * already working stays; a stop the exchange holds for the engine is cancelled), read what that left, and sell
 * the position less dust through the order manager's one path (brakes, rules, risk, balance, journal before
 * send). Exactly once: the quantity sent is the position
 * less what working exit orders still sell, so asking again (or finishing after a restart) never sells twice.
 */
import { D, type Dec, plain, ZERO } from '../../market/decimal.js';
import { roundPrice, tradableQuantity } from '../../market/pair-rules.js';
import { crashPoint } from '../../ops/crash-points.js';
import type { OrderIntent } from '../../strategy/api.js';
import { isActive, isUnresolved, type OrderRow, remainingBase } from '../../store/order-journal.js';
import type { EngineParts } from '../engine-parts.js';
import { EXIT_TAG, isExitOrder, isHeldExit } from './exit-orders.js';
import type { InstanceRunner } from '../instance-runner.js';
import type { OrderManager } from '../order-manager.js';
import type { OrderSync } from '../order-sync.js';

export type ExitOrder = { type: 'MARKET' } | { type: 'LIMIT'; price: Dec };

export interface ExitResult {
  /** The exit order journaled now (then sent, or its outcome being reconciled). */
  sent: OrderRow | undefined;
  /** Exit orders that were already working (from an earlier exit): left alone. */
  working: OrderRow[];
  cancelled: string[];
  /** Cancels the venue refused or did not answer: the exit stopped there (their base may still be locked). */
  cancelFailed: { order: string; message: string }[];
  /** The base quantity left unsold: below the pair's step, minimum quantity or minimum value. */
  dust: Dec;
  /** Why nothing was sent when something should have been (a brake, a rule, the balance). */
  refused: string | undefined;
  /** Refused only because an earlier order's outcome is still being reconciled: asking again later may sell. */
  waiting: boolean;
}

/** The instance's rows still live on the venue (the cache also keeps final rows whose fills await delivery). */
const live = (p: EngineParts, r: InstanceRunner) => p.journal.activeFor(r.name).filter((row) => isActive(row.status));

/** Runs an exit for `r`. The caller holds the engine's lock. */
export async function exitPosition(
  p: EngineParts,
  orders: OrderManager,
  sync: OrderSync,
  refreshBalances: () => Promise<void>,
  r: InstanceRunner,
  order: ExitOrder,
  reason: string,
  /** A declared exit (exit-rules.ts): the instance goes on running, and the order is tagged `exit:<reason>`. */
  declared?: { tag: string },
): Promise<ExitResult> {
  if (declared === undefined) r.pauseByOperator(reason);
  const tag = declared?.tag ?? EXIT_TAG;
  const result: ExitResult = {
    sent: undefined,
    working: [],
    cancelled: [],
    cancelFailed: [],
    dust: ZERO,
    refused: undefined,
    waiting: false,
  };
  // A stop the exchange holds for the engine (held-exits.ts) is cancelled like the strategy's orders: this exit
  // sells now what it would have sold later (a cancel it refuses, e.g. already filled, stops the exit here).
  for (const row of live(p, r)) {
    if (isExitOrder(row) && !isHeldExit(row)) continue;
    const cancel = await orders.cancelOnVenue(row, r.logger);
    if (cancel.ok) result.cancelled.push(row.localId);
    else result.cancelFailed.push({ order: row.localId, message: cancel.message });
  }
  crashPoint('exit-after-cancel');
  // What the cancels left: fills of the cancelled orders, and the base they no longer lock.
  try {
    await sync.poll(r.symbol, false);
    await refreshBalances();
  } catch (err) {
    r.logger.warn({ err }, 'exit: reading the venue after the cancels failed; using what is known');
  }
  if (result.cancelFailed.length > 0) {
    result.refused = `cancel failed for ${result.cancelFailed.map((f) => f.order).join(', ')}: nothing sold`;
    return result;
  }
  const rules = p.market.rules.get(r.symbol);
  if (rules === undefined) {
    result.refused = `no pair rules for ${r.symbol}`;
    return result;
  }
  // Right after a start no market poll may have run yet: a MARKET exit needs a price to be checked against.
  if (p.market.lastPrice(r.symbol) === undefined) {
    try {
      for (const t of await p.guard.call(`market watch ${r.symbol}`, () => p.venue.marketWatch(r.symbol)))
        p.market.setTicker(t);
    } catch (err) {
      r.logger.warn({ err }, 'exit: no last price and the market watch failed');
    }
  }
  const last = p.market.lastPrice(r.symbol);
  result.working = live(p, r).filter((row) => isExitOrder(row) && !isHeldExit(row));
  // An exit whose own order's outcome is not known yet (journaled, then a crash) may never have reached the
  // venue: wait for the reconciler's answer rather than count it as selling (it may turn out NOT_PLACED).
  result.waiting = result.working.some(isUnresolved);
  let selling = ZERO;
  for (const row of result.working) selling = selling.plus(remainingBase(row, last));
  const held = D.max(r.position.position.quantity.minus(selling), ZERO);
  const free = p.market.free(rules.baseAsset);
  const available = free === undefined ? held : D.min(held, free);
  const price = order.type === 'LIMIT' ? roundPrice(rules, order.price, 'SELL') : last;
  // What can really be sold (the strategies' own rule): floored to the step, none under the pair's minimums.
  const quantity = tradableQuantity(rules, available, price);
  if (quantity.isZero()) {
    result.dust = held;
    return result;
  }
  result.dust = held.minus(quantity);
  const intent: OrderIntent =
    order.type === 'MARKET'
      ? { kind: 'MARKET', side: 'SELL', quantity, tag }
      : { kind: 'LIMIT', side: 'SELL', price: roundPrice(rules, order.price, 'SELL'), quantity, tag };
  const outcome = await orders.submitExit(r, intent);
  if (outcome.ok) result.sent = outcome.row;
  else {
    result.refused = outcome.reason;
    result.waiting = outcome.waiting === true;
  }
  return result;
}

/** An exit result as JSON (decimals as text). */
export function exitResultJson(e: ExitResult) {
  return {
    sent:
      e.sent === undefined
        ? null
        : {
            localId: e.sent.localId,
            type: e.sent.type,
            side: e.sent.side,
            quantity: e.sent.quantity ?? null,
            price: e.sent.price ?? null,
            status: e.sent.status,
            active: isActive(e.sent.status),
          },
    working: e.working.map((w) => w.localId),
    cancelled: e.cancelled,
    cancelFailed: e.cancelFailed,
    dust: plain(e.dust),
    refused: e.refused ?? null,
  };
}
