/**
 * Declared exits held on the exchange: once an instance that declares `exits.stopLossPct` holds a position,
 * the engine places its stop there, so the position is protected while the daemon is down. A STOP_LIMIT SELL
 * (tag `exit:stop-loss`) of the position less dust, stop at entry × (1 − stopLossPct/100) and limit
 * `stopLimitPct` (default 0.5 %) under it; or, when the `roi` table has a "0" row and the pair allows OCO, an
 * OCO SELL bracket (tag `exit:bracket`) whose limit leg takes that profit. Only where the pair allows the type
 * and the venue can cancel (a held order locks the base: without cancel nothing else could sell it); elsewhere
 * the declared exits act on ticks alone (exit-rules.ts).
 *
 * Kept consistent by `sync`, after every orders poll and at start, under the engine's lock: the held order is
 * the one the position calls for now (its quantity the position less dust and less what the instance's other
 * SELLs still sell, its prices from the average entry), else it is cancelled and placed again; cancelled
 * when the position closes; left alone while its outcome is unknown (the reconciler answers first) or while
 * an exit at market is working. Never two sells of the same base: the tick-based exits leave a stop-loss to
 * the held order while its limit can still fill and cancel it before selling otherwise; the operator's exit
 * cancels it first (position-exit.ts); a strategy's own SELL releases it first (`release`), and the next sync
 * holds what is left. Each order goes through the order manager's one path (brakes, PRICE_FILTER and precision,
 * risk, balance, journal before send).
 */
import { D, type Dec, plain, ZERO } from '../../market/decimal.js';
import { rounder } from '../../market/display.js';
import { type PairRules, roundPrice, tradableQuantity } from '../../market/pair-rules.js';
import type { ExitRulesDecl, OrderIntent } from '../../strategy/api.js';
import { isUnresolved, type OrderRow, remainingBase } from '../../store/order-journal.js';
import type { EngineParts } from '../engine-parts.js';
import { HELD_BRACKET_TAG, HELD_STOP_TAG, isExitOrder, isHeldExit } from './exit-orders.js';
import { protects } from '../instance-lifecycle.js';
import type { InstanceRunner } from '../instance-runner.js';
import type { OrderManager } from '../order-manager.js';
import type { OrderSync } from '../order-sync.js';

const DEFAULT_STOP_LIMIT_PCT = 0.5;

/** The held order the position calls for. */
interface HeldPlan {
  kind: 'STOP_LIMIT' | 'OCO';
  stopPrice: Dec;
  /** Where the stop leg rests once triggered. */
  stopLimit: Dec;
  /** The OCO's take-profit leg. */
  takeProfit: Dec | undefined;
  quantity: Dec;
}

/** The price a held order's stop leg rests at once triggered (below it, it does not fill). */
export function heldStopLimit(row: OrderRow): Dec | undefined {
  const text = row.type === 'OCO' ? row.limitPrice : row.price;
  return text === undefined ? undefined : new D(text);
}

export class HeldExits {
  constructor(
    private readonly p: EngineParts,
    private readonly orders: OrderManager,
    private readonly sync: OrderSync,
    private readonly refreshBalances: () => Promise<void>,
    /** The exits `r` declares now (undefined: none). */
    private readonly exitsOf: (r: InstanceRunner) => ExitRulesDecl | undefined,
  ) {}

  /** Whether the engine holds `r`'s stop on the exchange (it declares one, the pair and the venue allow it). */
  holds(r: InstanceRunner): boolean {
    if (this.exitsOf(r)?.stopLossPct === undefined || this.p.venue.cancelOrder === undefined) return false;
    const rules = this.p.market.rules.get(r.symbol);
    return rules !== undefined && this.kind(r, rules) !== undefined;
  }

  private kind(r: InstanceRunner, rules: PairRules): 'STOP_LIMIT' | 'OCO' | undefined {
    const oco = rules.orderTypes.has('OCO') && rules.ocoAllowed;
    if (this.exitsOf(r)?.roi?.['0'] !== undefined && oco) return 'OCO';
    return rules.orderTypes.has('STOP_LIMIT') ? 'STOP_LIMIT' : undefined;
  }

  /** What `r`'s position calls for now (undefined: nothing to hold, e.g. flat or dust). */
  private plan(r: InstanceRunner, rules: PairRules, rows: readonly OrderRow[]): HeldPlan | undefined {
    const exits = this.exitsOf(r);
    const kind = this.kind(r, rules);
    if (exits?.stopLossPct === undefined || kind === undefined) return undefined;
    const { quantity: held, averagePrice } = r.position;
    if (!averagePrice.isPos()) return undefined;
    const last = this.p.market.lastPrice(r.symbol);
    let otherSells = ZERO;
    for (const row of rows)
      if (row.side === 'SELL' && !isHeldExit(row)) otherSells = otherSells.plus(remainingBase(row, last));
    const left = D.max(held.minus(otherSells), ZERO);
    const stopPrice = roundPrice(rules, averagePrice.mul(1 - exits.stopLossPct / 100), 'SELL');
    const stopLimit = roundPrice(rules, stopPrice.mul(1 - (exits.stopLimitPct ?? DEFAULT_STOP_LIMIT_PCT) / 100), 'BUY');
    const roi0 = exits.roi?.['0'];
    const takeProfit =
      kind === 'OCO' && roi0 !== undefined ? roundPrice(rules, averagePrice.mul(1 + roi0 / 100), 'SELL') : undefined;
    const quantity = tradableQuantity(rules, left, stopLimit);
    if (quantity.isZero()) return undefined;
    return { kind, stopPrice, stopLimit, takeProfit, quantity };
  }

  private static matches(row: OrderRow, plan: HeldPlan, last: Dec | undefined): boolean {
    const same = (text: string | undefined, value: Dec | undefined) =>
      value === undefined ? text === undefined : text !== undefined && new D(text).eq(value);
    if (row.type !== plan.kind || !remainingBase(row, last).eq(plan.quantity)) return false;
    if (!same(row.stopPrice, plan.stopPrice)) return false;
    return plan.kind === 'OCO'
      ? same(row.limitPrice, plan.stopLimit) && same(row.price, plan.takeProfit)
      : same(row.price, plan.stopLimit);
  }

  /** Cancels `rows` on the venue, then reads what that left (fills, balances); false when a cancel failed. */
  private async cancel(r: InstanceRunner, rows: readonly OrderRow[], why: string): Promise<boolean> {
    let ok = true;
    for (const row of rows) {
      const result = await this.orders.cancelOnVenue(row, r.logger);
      if (result.ok) r.logger.info({ localId: row.localId }, `held exit cancelled: ${why}`);
      else ok = false;
    }
    if (rows.length === 0) return ok;
    try {
      await this.sync.poll(r.symbol, false);
      await this.refreshBalances();
    } catch (err) {
      r.logger.warn({ err }, 'held exit: reading the venue after the cancel failed; using what is known');
    }
    return ok;
  }

  /**
   * A strategy's own SELL is about to go: the held order would lock the base it needs, so it is cancelled first
   * (the next sync holds whatever the position still calls for). The caller holds the engine's lock.
   */
  async release(r: InstanceRunner): Promise<void> {
    const held = this.p.journal.liveFor(r.name).filter(isHeldExit);
    if (held.length > 0 && !held.some(isUnresolved)) await this.cancel(r, held, 'the strategy sells');
  }

  /**
   * Brings every instance's held exit in line with its position. `redeclared`: a reload changed their exits, so
   * one whose stop is no longer declared is looked at too (its held order is cancelled). The caller holds the
   * engine's lock.
   */
  async syncAll(runners: readonly InstanceRunner[], redeclared = false): Promise<void> {
    for (const r of runners) {
      if (this.exitsOf(r)?.stopLossPct === undefined && !redeclared) continue;
      try {
        await this.syncOne(r);
      } catch (err) {
        r.logger.error({ err }, 'held exit: could not bring it in line with the position');
      }
    }
  }

  /**
   * Places the held order `r`'s position calls for, paused or not: an exit that cancelled it and could not sell
   * puts it back (protection outlives decisions). The caller holds the engine's lock.
   */
  async restore(r: InstanceRunner): Promise<void> {
    try {
      await this.syncOne(r);
    } catch (err) {
      r.logger.error({ err }, 'held exit: could not be put back');
    }
  }

  private async syncOne(r: InstanceRunner): Promise<void> {
    if (!this.holds(r)) {
      // A reload took the declared stop away: the order held for it goes (once its outcome is known).
      if (this.exitsOf(r)?.stopLossPct !== undefined) return;
      const held = this.p.journal.liveFor(r.name).filter(isHeldExit);
      if (held.length > 0 && !held.some(isUnresolved)) await this.cancel(r, held, 'the declared stop was removed');
      return;
    }
    const { market, clock, store } = this.p;
    const rules = market.rules.get(r.symbol) as PairRules;
    let rows = this.p.journal.liveFor(r.name);
    const held = rows.filter(isHeldExit);
    // Its outcome is being reconciled, or an exit at market is working: nothing to decide yet.
    if (held.some(isUnresolved) || rows.some((row) => isExitOrder(row) && !isHeldExit(row))) return;
    const last = market.lastPrice(r.symbol);
    let plan = this.plan(r, rules, rows);
    if (plan === undefined) {
      if (held.length > 0) await this.cancel(r, held, 'the position it protected is closed');
      return;
    }
    if (held.length === 1 && HeldExits.matches(held[0] as OrderRow, plan, last)) return;
    // Placed and replaced for an instance running or paused (a pause stops decisions, never protection); not
    // when the price is already through the stop (a held one may have triggered; the tick-based exit acts on
    // what is left).
    if (!protects(r.status) || last === undefined || last.lte(plan.stopPrice)) return;
    if (plan.takeProfit !== undefined && last.gte(plan.takeProfit)) return;
    if (!(await this.cancel(r, held, 'the position changed'))) return;
    if (held.length > 0) {
      rows = this.p.journal.liveFor(r.name);
      plan = this.plan(r, rules, rows);
      if (plan === undefined) return;
    }
    const free = market.free(rules.baseAsset);
    const quantity = tradableQuantity(
      rules,
      free === undefined ? plan.quantity : D.min(plan.quantity, free),
      plan.stopLimit,
    );
    if (quantity.isZero()) return;
    const intent: OrderIntent =
      plan.kind === 'OCO'
        ? {
            kind: 'OCO',
            side: 'SELL',
            price: plan.takeProfit as Dec,
            stopPrice: plan.stopPrice,
            limitPrice: plan.stopLimit,
            quantity,
            tag: HELD_BRACKET_TAG,
          }
        : {
            kind: 'STOP_LIMIT',
            side: 'SELL',
            stopPrice: plan.stopPrice,
            price: plan.stopLimit,
            quantity,
            tag: HELD_STOP_TAG,
          };
    const outcome = await this.orders.submitExit(r, intent);
    if (!outcome.ok) return;
    const data = {
      symbol: r.symbol,
      localId: outcome.row.localId,
      type: plan.kind,
      quantity: plain(quantity),
      stopPrice: plain(plan.stopPrice),
      limitPrice: plain(plan.stopLimit),
      takeProfit: plan.takeProfit === undefined ? null : plain(plan.takeProfit),
      entry: r.position.averagePrice.toFixed(),
    };
    r.logger.info({ ...data, entry: rounder(rules).price(data.entry) }, 'declared exit held on the exchange');
    store.events.record(clock.now(), r.name, 'exit-held', data);
  }
}
