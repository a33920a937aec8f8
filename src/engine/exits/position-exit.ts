/**
 * Getting out of an instance's position by hand: pause the instance, cancel its open orders (an exit order
 * already working stays; a stop the exchange holds for the engine is cancelled), read what that left, and sell
 * the position less dust through the order manager's one path (brakes, rules, risk, balance, journal before
 * send). Exactly once: the quantity sent is the position
 * less what working exit orders still sell, so asking again (or finishing after a restart) never sells twice.
 *
 * Protection outlives the exit (invariant 13): every brake is checked before anything is paused or cancelled
 * (under the kill switch the exit does nothing, and the stops on the exchange stay); a sale refused after the
 * cancels puts back the protective SELLs it cancelled (the held stop, and the strategy's own stops and brackets,
 * as they were). The result says what protects the position when it is done.
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
  /** After a refused sale: the protective SELLs placed again in place of those cancelled. */
  restored: string[];
  /** What protects the position once the exit is done: the instance's SELLs live on the venue. */
  protectedBy: OrderRow[];
  /** The instance's position (base) when the exit was done. */
  position: Dec;
}

/** A protective order the exit cancelled, as the intent that places it again (its remaining quantity). */
function intentAgain(row: OrderRow, last: Dec | undefined): OrderIntent | undefined {
  const quantity = remainingBase(row, last);
  const at = (text: string | undefined) => (text === undefined ? undefined : new D(text));
  const [price, stopPrice, limitPrice] = [at(row.price), at(row.stopPrice), at(row.limitPrice)];
  const tag = row.tag;
  if (!quantity.isPos()) return undefined;
  if (row.type === 'OCO' && price && stopPrice && limitPrice)
    return { kind: 'OCO', side: 'SELL', price, stopPrice, limitPrice, quantity, tag };
  if (row.type === 'STOP_LIMIT' && price && stopPrice)
    return { kind: 'STOP_LIMIT', side: 'SELL', price, stopPrice, quantity, tag };
  if (row.type === 'LIMIT' && price) return { kind: 'LIMIT', side: 'SELL', price, quantity, tag };
  return undefined;
}

/**
 * The sale was refused after the cancels: the protective SELLs go back on the venue. The held stop as the
 * position calls for it (`restoreHeld`), the strategy's own SELLs as they were (same type, prices, tag; what
 * they had left to sell). Refusals are logged by the order path; what could not go back is told by `protectedBy`.
 */
async function putProtectionBack(
  p: EngineParts,
  orders: OrderManager,
  r: InstanceRunner,
  cancelled: readonly OrderRow[],
  restoreHeld: () => Promise<void>,
  result: ExitResult,
): Promise<void> {
  const before = new Set(p.journal.liveFor(r.name).map((row) => row.localId));
  const last = p.market.lastPrice(r.symbol);
  for (const row of cancelled) {
    if (row.side !== 'SELL' || isHeldExit(row)) continue;
    const intent = intentAgain(row, last);
    if (intent !== undefined) await orders.submitExit(r, intent);
  }
  if (cancelled.some(isHeldExit)) await restoreHeld();
  result.restored = p.journal
    .liveFor(r.name)
    .filter((row) => !before.has(row.localId))
    .map((row) => row.localId);
  if (result.restored.length > 0)
    r.logger.warn({ restored: result.restored }, 'exit refused after its cancels: the protection was put back');
}

/** Runs an exit for `r`. The caller holds the engine's lock. */
export async function exitPosition(
  p: EngineParts,
  orders: OrderManager,
  sync: OrderSync,
  refreshBalances: () => Promise<void>,
  /** Places the stop the engine holds for `r` again, paused or not (held-exits.ts). */
  restoreHeld: () => Promise<void>,
  r: InstanceRunner,
  order: ExitOrder,
  reason: string,
  /** A declared exit (exit-rules.ts): the instance goes on running, and the order is tagged `exit:<reason>`. */
  declared?: { tag: string },
): Promise<ExitResult> {
  const result: ExitResult = {
    sent: undefined,
    working: [],
    cancelled: [],
    cancelFailed: [],
    dust: ZERO,
    refused: undefined,
    waiting: false,
    restored: [],
    protectedBy: [],
    position: ZERO,
  };
  const done = () => {
    result.protectedBy = p.journal.liveFor(r.name).filter((row) => row.side === 'SELL');
    result.position = r.position.quantity;
    return result;
  };
  // Every brake first: a SELL the brakes would refuse is not worth the stops it would cancel.
  const block = p.guard.orderBlock('SELL');
  if (block !== undefined) {
    result.refused = `${block} (nothing cancelled)`;
    return done();
  }
  if (p.market.rules.get(r.symbol) === undefined) {
    result.refused = `no pair rules for ${r.symbol} (nothing cancelled)`;
    return done();
  }
  if (declared === undefined) r.pauseByOperator(reason);
  const tag = declared?.tag ?? EXIT_TAG;
  // An order of the strategy's whose outcome is unknown: the sale would wait for it, so nothing is cancelled yet.
  const unknown = () => p.journal.liveFor(r.name).filter((row) => isUnresolved(row) && !isExitOrder(row));
  if (unknown().length > 0) {
    try {
      await sync.poll(r.symbol, false);
    } catch (err) {
      r.logger.warn({ err }, 'exit: reconciling an unknown outcome failed');
    }
    const waiting = unknown();
    if (waiting.length > 0) {
      result.waiting = true;
      result.refused = `waiting for the outcome of order ${waiting.map((w) => w.localId).join(', ')} (not known yet; nothing cancelled)`;
      return done();
    }
  }
  const cancelledRows: OrderRow[] = [];
  // A stop the exchange holds for the engine (held-exits.ts) is cancelled like the strategy's orders: this exit
  // sells now what it would have sold later (a cancel it refuses, e.g. already filled, stops the exit here).
  for (const row of p.journal.liveFor(r.name)) {
    if (isExitOrder(row) && !isHeldExit(row)) continue;
    const cancel = await orders.cancelOnVenue(row, r.logger);
    if (cancel.ok) {
      result.cancelled.push(row.localId);
      cancelledRows.push(row);
    } else result.cancelFailed.push({ order: row.localId, message: cancel.message });
  }
  crashPoint('exit-after-cancel');
  // What the cancels left: fills of the cancelled orders, and the base the cancelled SELLs no longer lock (the one
  // balance read made under the lock, up to its deadline: nothing else says what they freed). With no SELL
  // cancelled the sale goes on the figures known: at most the base known free, the rest at the next exit once
  // the read after a fill brought it.
  try {
    await sync.poll(r.symbol, false);
    if (cancelledRows.some((row) => row.side === 'SELL')) await refreshBalances();
  } catch (err) {
    r.logger.warn({ err }, 'exit: reading the venue after the cancels failed; using what is known');
  }
  const refuse = async (why: string) => {
    result.refused = why;
    await putProtectionBack(p, orders, r, cancelledRows, restoreHeld, result);
    return done();
  };
  if (result.cancelFailed.length > 0)
    return refuse(`cancel failed for ${result.cancelFailed.map((f) => f.order).join(', ')}: nothing sold`);
  const rules = p.market.rules.get(r.symbol);
  if (rules === undefined) return refuse(`no pair rules for ${r.symbol}`);
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
  result.working = p.journal.liveFor(r.name).filter((row) => isExitOrder(row) && !isHeldExit(row));
  // An exit whose own order's outcome is not known yet (journaled, then a crash) may never have reached the
  // venue: wait for the reconciler's answer rather than count it as selling (it may turn out NOT_PLACED).
  result.waiting = result.working.some(isUnresolved);
  let selling = ZERO;
  for (const row of result.working) selling = selling.plus(remainingBase(row, last));
  const held = D.max(r.position.quantity.minus(selling), ZERO);
  const free = p.market.free(rules.baseAsset);
  const available = free === undefined ? held : D.min(held, free);
  const price = order.type === 'LIMIT' ? roundPrice(rules, order.price, 'SELL') : last;
  // What can really be sold (the strategies' own rule): floored to the step, none under the pair's minimums.
  const quantity = tradableQuantity(rules, available, price);
  if (quantity.isZero()) {
    result.dust = held;
    return done();
  }
  result.dust = held.minus(quantity);
  const intent: OrderIntent =
    order.type === 'MARKET'
      ? { kind: 'MARKET', side: 'SELL', quantity, tag }
      : { kind: 'LIMIT', side: 'SELL', price: roundPrice(rules, order.price, 'SELL'), quantity, tag };
  const outcome = await orders.submitExit(r, intent);
  if (outcome.ok) {
    result.sent = outcome.row;
    const { status, localId, rejectReason } = outcome.row;
    // Refused by the venue, or never sent: nothing sells, so the protection goes back.
    if (status === 'REJECTED' || status === 'NOT_SENT')
      return refuse(`the SELL ${localId} was ${status}${rejectReason === undefined ? '' : ` (${rejectReason})`}`);
    return done();
  }
  result.waiting = outcome.waiting === true;
  return refuse(outcome.reason);
}

/** A protective order as JSON (what the answer of an exit lists). */
function protectionJson(row: OrderRow) {
  return {
    localId: row.localId,
    type: row.type,
    tag: row.tag ?? null,
    quantity: row.quantity ?? null,
    price: row.price ?? null,
    stopPrice: row.stopPrice ?? null,
    limitPrice: row.limitPrice ?? null,
    status: row.status,
  };
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
    restored: e.restored,
    protectedBy: e.protectedBy.map(protectionJson),
    position: plain(e.position),
  };
}
