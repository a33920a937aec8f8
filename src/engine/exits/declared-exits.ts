/**
 * The declared exits and protections of every instance, in one owner: the engine tells it what happens (start,
 * tick, fill, orders poll, reload, a strategy's SELL, the operator's exit) and asks whether an entry may go; it
 * decides, records (events and the instance's watch, `<instance>/exits` in the store's strategy_state, saved with
 * the events a fill makes in one transaction) and sells through the order manager's one path (position-exit.ts).
 *
 * - exit-rules.ts: stop-loss, trailing stop and roi, checked on ticks from the position's entry, open time and high.
 * - protections/: one file per protection (cooldown, losing trades, drawdown) behind one interface.
 * - held-exits.ts: the declared stop held on the exchange while a position is open.
 * - position-exit.ts: selling the position less dust (the operator's exit, and a declared exit's sale).
 */
import { declaredExits } from '../../config/strategy-file.js';
import { D, type Dec } from '../../market/decimal.js';
import { rounder } from '../../market/display.js';
import type { PairRules } from '../../market/pair-rules.js';
import { positionFill, positionFromFills } from '../../market/position.js';
import type { ExitRulesDecl, Intent, Position, ProtectionsDecl } from '../../strategy/api.js';
import type { FillRow } from '../../store/fills.js';
import type { OrderRow } from '../../store/order-journal.js';
import type { EngineParts } from '../engine-parts.js';
import { protects } from '../instance-lifecycle.js';
import type { InstanceRunner, InstanceSpec } from '../instance-runner.js';
import type { Mutex } from '../mutex.js';
import type { EntryGate, OrderManager } from '../order-manager.js';
import type { OrderSync } from '../order-sync.js';
import { ExitRules, type ExitReason, type ExitTrigger, type PositionState } from './exit-rules.js';
import { declaredExitTag, isExitOrder, isHeldExit } from './exit-orders.js';
import { HeldExits, heldStopLimit } from './held-exits.js';
import { type ExitOrder, type ExitResult, exitPosition } from './position-exit.js';
import type { ProtectionState, Trip, TripName } from './protections/protection.js';
import { Protections } from './protections/protections.js';

/** An instance and the strategy file it runs (as loaded, or reloaded). */
export type DeclaringInstance = readonly [InstanceRunner, InstanceSpec];

/** One instance's declared exits and protections, and what they keep across restarts. */
class InstanceExits {
  readonly rules: ExitRules;
  readonly protections: Protections;

  constructor(exits: ExitRulesDecl, protections: ProtectionsDecl) {
    this.rules = new ExitRules(exits);
    this.protections = new Protections(protections);
  }

  /** The state an earlier run saved (undefined: none) taken up. */
  restore(saved: string | undefined): void {
    const { openedAt, peak, ...protections } = (saved === undefined ? {} : JSON.parse(saved)) as PositionState &
      ProtectionState;
    this.rules.restore({ openedAt, peak });
    this.protections.restore(protections);
  }

  /** The state as saved: the exits' and the protections' side by side in one object. */
  get saved(): string {
    return JSON.stringify({ ...this.rules.state, ...this.protections.state });
  }
}

/** What a reload changed in an instance's exits and protections. */
interface Redeclared {
  exits: ExitRulesDecl;
  protections: ProtectionsDecl;
  /** Protections no longer declared whose trip (or cooldown) ends now. */
  lifted: TripName[];
  /** The protections count trades anew: they are seeded from the journal. */
  reseed: boolean;
}

/** The store key of an instance's watch: beside the strategy's state, never in it (the strategy owns that). */
const stateKey = (r: InstanceRunner) => `${r.name}/exits`;

export class DeclaredExits implements EntryGate {
  /** The instances that declare exits or protections (one made at a reload that declares the first). */
  private readonly watches = new Map<InstanceRunner, InstanceExits>();
  private readonly held: HeldExits;

  constructor(
    private readonly p: EngineParts,
    private readonly orders: OrderManager,
    private readonly sync: OrderSync,
    /** The engine's lock: a declared exit's sale runs under it. */
    private readonly lock: Mutex,
    private readonly refreshBalances: () => Promise<void>,
    instances: readonly DeclaringInstance[],
  ) {
    for (const [r, spec] of instances) this.add(r, spec);
    this.held = new HeldExits(p, orders, sync, refreshBalances, (r) => this.watches.get(r)?.rules.declaration);
  }

  /** The exits and protections `r` declares (an instance a pair list took up after the start too). */
  add(r: InstanceRunner, spec: InstanceSpec): void {
    const { exits, protections } = declaredExits(r.definition, spec.config);
    if (exits !== undefined || protections !== undefined)
      this.watches.set(r, new InstanceExits(exits ?? {}, protections ?? {}));
  }

  /**
   * At start, with the pair rules loaded and before anything is sent: the instance's saved watch is taken up and
   * caught up with the journal (catchUp), and its protections count its trades so far.
   */
  start(r: InstanceRunner): void {
    const w = this.watches.get(r);
    if (w === undefined) return;
    w.restore(this.p.store.state.get(stateKey(r)));
    this.catchUp(r, w);
    this.seed(r, w);
  }

  /**
   * A tick of `r`: protections whose pause is over are lifted, and when a declared exit triggers, the position
   * less dust is sold under the lock (the promise; the caller skips the strategy's onTick then). Undefined when
   * nothing needs to wait (the usual tick).
   */
  /** A tick would find nothing to do for `r`'s exits and protections (none declared, none tripped, no position). */
  idle(r: InstanceRunner): boolean {
    const w = this.watches.get(r);
    return w === undefined || (!w.protections.hasTrips && !w.rules.active);
  }

  tick(r: InstanceRunner): Promise<void> | undefined {
    const w = this.watches.get(r);
    if (w === undefined) return undefined;
    if (w.protections.hasTrips) this.lift(r, w);
    return w.rules.active ? this.checkExits(r, w) : undefined;
  }

  /**
   * A fill of `r` was recorded (its transaction committed; the position was `before` it): the exits see the
   * position open or close (a stop the exchange held that closed it is told), the protections count the trades it
   * closed. The events and the watch they change are saved together: a kill -9 leaves both or neither (the next
   * start catches up from the journal).
   */
  filled(r: InstanceRunner, row: OrderRow, fill: FillRow, before: Position): void {
    const w = this.watches.get(r);
    const step = this.p.market.rules.get(r.symbol)?.stepSize;
    if (w === undefined || step === undefined) return;
    const after = r.position.quantity;
    this.p.store.transaction(() => {
      if (before.quantity.lt(step) && after.gte(step)) w.rules.opened(fill.time, Number(fill.price));
      else if (before.quantity.gte(step) && after.lt(step)) {
        w.rules.closed();
        if (isHeldExit(row)) this.heldExitFilled(r, w, row, fill, before.averagePrice);
      }
      this.tripped(r, w.protections.filled(fill, row, step), fill.time);
      this.save(r, w);
    });
  }

  /**
   * Strategy files reloaded: their exits and protections apply from the next tick. Each change is recorded
   * (`exits-changed`), a protection no longer declared is lifted, changed protections count the journal's trades
   * again (as a start does), and a stop held on the exchange is brought in line through the order path
   * (cancelled, then placed at the new level once; cancelled when no longer declared). The watch's state (a
   * trailing stop's high, a protection's window and trips) is kept. Returns the instances whose declarations
   * changed. The caller holds the engine's lock.
   */
  async reload(instances: readonly DeclaringInstance[]): Promise<InstanceRunner[]> {
    const { store, clock } = this.p;
    const redeclared: InstanceRunner[] = [];
    for (const [r, spec] of instances) {
      const change = this.redeclare(r, spec);
      const w = this.watches.get(r);
      if (change === undefined || w === undefined) continue;
      redeclared.push(r);
      const now = clock.now();
      const { exits, protections } = change;
      r.logger.warn({ exits, protections }, 'exits and protections reloaded');
      store.transaction(() => {
        store.events.record(now, r.name, 'exits-changed', { exits, protections });
        for (const protection of change.lifted)
          store.events.record(now, r.name, 'protection-lifted', { protection, reason: 'no longer declared' });
        this.save(r, w);
      });
      if (change.reseed) this.seed(r, w);
    }
    await this.held.syncAll(redeclared, true);
    return redeclared;
  }

  /**
   * After an orders poll that read every symbol, and at start: the stops held on the exchange brought in line
   * with the positions. The caller holds the engine's lock.
   */
  polled(runners: readonly InstanceRunner[]): Promise<void> {
    return this.held.syncAll(runners);
  }

  /**
   * `r`'s strategy is about to send these intents: a stop held for it would lock the base a SELL needs, so it is
   * released first (the next poll holds what the position still calls for). Not when `r` no longer runs (paused
   * or stopped between its hook and the lock): the order manager drops those intents, and the stop stays held
   * (invariant 13). The caller holds the engine's lock.
   */
  async strategySends(r: InstanceRunner, intents: readonly Intent[]): Promise<void> {
    if (r.status !== 'running') return;
    if (this.watches.has(r) && intents.some((i) => i.kind !== 'CANCEL' && i.side === 'SELL'))
      await this.held.release(r);
  }

  /** The operator's exit (position-exit.ts): pauses `r` and sells its position less dust. The caller holds the lock. */
  exit(r: InstanceRunner, order: ExitOrder, reason: string): Promise<ExitResult> {
    return this.sell(r, order, reason, undefined);
  }

  /** Why `r`'s protections refuse a new entry at `now` (undefined: it may go). */
  entryBlock(r: InstanceRunner, now: number): string | undefined {
    return this.watches.get(r)?.protections.entryBlock(now);
  }

  /** Saves every watch (a refresh: a trailing stop's high moves on ticks without being saved). */
  saveAll(): void {
    for (const [r, w] of this.watches) this.save(r, w);
  }

  private save(r: InstanceRunner, w: InstanceExits): void {
    this.p.store.state.put(stateKey(r), w.saved, this.p.clock.now());
  }

  /** The reloaded declarations applied (undefined when they are what `r` runs with already). */
  private redeclare(r: InstanceRunner, spec: InstanceSpec): Redeclared | undefined {
    const declared = declaredExits(r.definition, spec.config);
    const exits = declared.exits ?? {};
    const protections = declared.protections ?? {};
    let w = this.watches.get(r);
    const now = { exits: w?.rules.declaration ?? {}, protections: w?.protections.declaration ?? {} };
    if (JSON.stringify(now) === JSON.stringify({ exits, protections })) return undefined;
    let made = false;
    if (w === undefined) {
      // The first declarations: the watch goes on from the state saved under its key, if any.
      w = new InstanceExits(exits, protections);
      w.restore(this.p.store.state.get(stateKey(r)));
      this.watches.set(r, w);
      made = true;
    }
    w.rules.redeclare(exits);
    const { lifted, reseed } = w.protections.redeclare(protections, this.p.clock.now());
    return { exits, protections, lifted, reseed: reseed || made };
  }

  /**
   * A fill the last run committed and was killed before telling the watch (between the two): the journal's
   * position is not what the saved watch says. Held where the watch says flat: it takes the position as opened
   * at the fill that opened it (its time held counts from there, as the fill path would have; so does a position
   * held before the exits were declared). Flat where the watch says open: it takes the close, and when that
   * fill was a stop the exchange held, it is reported (held-exit-filled) and starts the cooldown, once: the event
   * and the watch are saved together. (A tick-based exit was recorded, its cooldown started, when decided.)
   */
  private catchUp(r: InstanceRunner, w: InstanceExits): void {
    const step = this.p.market.rules.get(r.symbol)?.stepSize;
    if (step === undefined) return;
    const held = r.position.quantity.gte(step);
    if (held === w.rules.held) return;
    const { store, journal } = this.p;
    const fills = store.fills.forInstance(r.name);
    if (held) {
      let opening: FillRow | undefined;
      const folded = positionFromFills([]);
      for (const f of fills) {
        const before = folded.position.quantity;
        folded.apply(positionFill(f));
        if (before.lt(step) && folded.position.quantity.gte(step)) opening = f;
      }
      if (opening === undefined) return;
      w.rules.opened(opening.time, Number(opening.price));
      this.save(r, w);
      return;
    }
    const last = fills.at(-1);
    const row =
      last === undefined ? undefined : (journal.get(last.orderLocalId) ?? store.orders.get(last.orderLocalId));
    store.transaction(() => {
      w.rules.closed();
      if (last !== undefined && row !== undefined && isHeldExit(row)) {
        const entry = positionFromFills(fills.slice(0, -1)).position.averagePrice;
        this.heldExitFilled(r, w, row, last, entry);
      }
      this.save(r, w);
    });
  }

  /**
   * The protections count the instance's trades so far (their trips are in its saved watch; one decided but not
   * saved before a crash is decided again here).
   */
  private seed(r: InstanceRunner, w: InstanceExits): void {
    const { store, journal, market, clock } = this.p;
    const trips = w.protections.seed(
      store.fills.forInstance(r.name),
      (id) => journal.get(id) ?? store.orders.get(id),
      market.rules.get(r.symbol)?.stepSize,
      clock.now(),
    );
    if (trips.length === 0) return;
    this.tripped(r, trips, clock.now());
    this.save(r, w);
  }

  /** Protections that tripped (a stop-out's cooldown among them): told (log, events); the caller saves the watch. */
  private tripped(r: InstanceRunner, trips: readonly Trip[], time: number): void {
    for (const trip of trips) {
      r.logger.warn({ ...trip }, `protection tripped: ${trip.reason}`);
      this.p.store.events.record(time, r.name, 'protection-tripped', { ...trip });
    }
  }

  /** Protections whose pause is over: told once, and entries may go again. */
  private lift(r: InstanceRunner, w: InstanceExits): void {
    const now = this.p.clock.now();
    const lifted = w.protections.lifted(now);
    if (lifted.length === 0) return;
    for (const protection of lifted) {
      r.logger.info({ protection }, `protection lifted: ${protection}; entries allowed again`);
      this.p.store.events.record(now, r.name, 'protection-lifted', { protection });
    }
    this.save(r, w);
  }

  /** A stop the exchange held closed the position: told, and a stop-out starts the cooldown. */
  private heldExitFilled(r: InstanceRunner, w: InstanceExits, row: OrderRow, fill: FillRow, entry: Dec): void {
    const reason: ExitReason = row.type === 'OCO' && new D(fill.price).gte(entry) ? 'roi' : 'stop-loss';
    const trips = w.protections.exitTriggered(reason, fill.time);
    const data = { symbol: r.symbol, reason, price: fill.price, entry: entry.toFixed(), localId: row.localId };
    const shown = rounder(this.p.market.rules.get(r.symbol)).price;
    r.logger.warn({ ...data, entry: shown(entry) }, `declared exit filled on the exchange: ${reason}`);
    this.p.store.events.record(fill.time, r.name, 'held-exit-filled', data);
    this.tripped(r, trips, fill.time);
  }

  /** The declared exits on this tick: a trigger no exit already working answers is acted on under the lock. */
  private checkExits(r: InstanceRunner, w: InstanceExits): Promise<void> | undefined {
    const { market, clock } = this.p;
    const rules = market.rules.get(r.symbol);
    const ticker = market.tickers.get(r.symbol);
    const { quantity, averagePrice } = r.position;
    if (rules === undefined || ticker === undefined || quantity.lt(rules.stepSize) || quantity.lt(rules.minQty))
      return undefined;
    const now = clock.now();
    const trigger = w.rules.check(now, ticker.last, averagePrice.toNumber());
    if (trigger === undefined) return undefined;
    if (this.exitWorking(r, trigger.reason, ticker.last)) return undefined;
    return this.exitOnTrigger(r, w, trigger, ticker.last, averagePrice, now, rules);
  }

  // Apart from checkExits, which runs on every tick: a closure there would cost an allocation on every call.

  /**
   * A declared exit triggered: decided again under the lock (a poll meanwhile may have filled an exit or closed
   * the position), recorded (`exit-triggered`, a stop-out's cooldown), then the position less dust is sold at
   * market through the exit path, tagged `exit:<reason>`.
   */
  private exitOnTrigger(
    r: InstanceRunner,
    w: InstanceExits,
    trigger: ExitTrigger,
    last: number,
    entry: Dec,
    now: number,
    rules: PairRules,
  ): Promise<void> {
    return this.lock.run(async () => {
      if (!protects(r.status)) return;
      if (this.exitWorking(r, trigger.reason, last)) return;
      if (r.position.quantity.lt(rules.stepSize)) return;
      const trips = w.protections.exitTriggered(trigger.reason, now);
      const data = {
        symbol: r.symbol,
        reason: trigger.reason,
        price: last,
        level: trigger.level,
        entry: entry.toFixed(),
        quantity: r.position.quantity.toFixed(),
      };
      // The log line names the trigger's level `exitLevel`: `level` is pino's own (the line's severity). Its
      // entry and level are rounded to the pair's tick, for people (the event keeps every digit).
      const { level, ...logged } = data;
      const shown = rounder(rules).price;
      r.logger.warn(
        { ...logged, entry: shown(entry), exitLevel: Number(shown(level)) },
        `declared exit: ${trigger.reason}`,
      );
      const { store } = this.p;
      store.transaction(() => {
        store.events.record(now, r.name, 'exit-triggered', data);
        this.tripped(r, trips, now);
        this.save(r, w);
      });
      const tag = declaredExitTag(trigger.reason);
      const result = await this.sell(r, { type: 'MARKET' }, trigger.reason, { tag });
      if (result.refused !== undefined) r.logger.warn({ reason: result.refused }, 'declared exit: nothing sold');
    });
  }

  /** Sells `r`'s position less dust (position-exit.ts); a held stop it cancelled goes back when the sale is refused. */
  private sell(
    r: InstanceRunner,
    order: ExitOrder,
    reason: string,
    declared: { tag: string } | undefined,
  ): Promise<ExitResult> {
    const restoreHeld = () => this.held.restore(r);
    return exitPosition(this.p, this.orders, this.sync, this.refreshBalances, restoreHeld, r, order, reason, declared);
  }

  /**
   * Whether an exit already working answers this trigger: an exit at market, or an order the exchange holds
   * (held-exits.ts) whose leg for it can fill at this price (a stop-loss: its stop is reached and the stop
   * leg's limit is at or under the price; a roi: the OCO's take-profit is at or under it). Otherwise the held
   * order is cancelled by the exit (position-exit.ts) before it sells: never both. (A held stop under the price
   * does not answer a stop-loss a reload tightened above it.)
   */
  private exitWorking(r: InstanceRunner, reason: ExitReason, last: number): boolean {
    let held = false;
    for (const row of this.p.journal.liveFor(r.name)) {
      if (!isExitOrder(row)) continue;
      if (!isHeldExit(row)) return true;
      const leg =
        reason === 'stop-loss'
          ? row.stopPrice !== undefined && Number(row.stopPrice) >= last
            ? heldStopLimit(row)
            : undefined
          : reason === 'roi' && row.type === 'OCO'
            ? row.price
            : undefined;
      if (leg !== undefined && Number(leg.toString()) <= last) held = true;
    }
    return held;
  }
}
