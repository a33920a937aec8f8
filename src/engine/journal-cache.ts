/**
 * The engine's in-memory mirror of the journal rows that still matter: orders not final, final orders whose
 * fills are not all recorded yet, and orders with fills recorded but not yet delivered to their strategy's
 * onFill. Every change is written to the journal first and mirrored once its transaction commits (the cache
 * holds only what committed: a write the disk refused is not here either), so the tick path reads memory and
 * never SQLite.
 *
 * An instance's view (activeFor) keeps an order until its fills are delivered: a strategy must never see an
 * order vanish before onFill tells it why, or it would place it again (a tick can run while a poll that
 * recorded the fill is still awaiting the venue, and at start onStart runs before the delivery).
 */
import { type Dec, ZERO } from '../market/decimal.js';
import type { Store } from '../store/store.js';
import { hasOutstandingFills, isActive, isUnresolved, type OrderRow, remainingBase } from '../store/order-journal.js';
import { isHeldExit } from './exits/exit-orders.js';

/**
 * What an instance's orders in its view (activeFor) may still bring, as the risk check reads it before every
 * order: kept as the rows change, so an intent costs the same with 5 or 5,000 orders open.
 */
export interface OpenExposure {
  /** Base still to come from the orders with a base quantity, per side (remainingBase of each). */
  buy: Dec;
  sell: Dec;
  /** MARKET orders by quote amount: what they may still bring depends on the last price (remainingBase). */
  byQuote: readonly OrderRow[];
  /** The view's orders that are the strategy's (a held exit is the engine's): what maxOpenOrders counts. */
  count: number;
}

/** One row's part in its instance's exposure (the base is undefined for an order by quote amount). */
interface Part {
  instance: string;
  row: OrderRow;
  base: Dec | undefined;
}

interface Totals {
  buy: Dec;
  sell: Dec;
  byQuote: Map<string, OrderRow>;
  count: number;
}

export class JournalCache {
  private readonly live = new Map<string, OrderRow>();
  private readonly byExchange = new Map<string, OrderRow>();
  private readonly versions = new Map<string, number>();
  /** Rows a poll must look at even when the venue reports no change (unresolved, or fills outstanding). */
  private readonly attention = new Set<string>();
  /** Recorded fills not yet delivered to onFill, by order. */
  private readonly undelivered = new Map<string, number>();
  /** Each row of an instance's view, as counted in its instance's totals (exposure). */
  private readonly parts = new Map<string, Part>();
  private readonly totals = new Map<string, Totals>();
  /** Local ids whose create request is on its way: their PENDING rows are not reconciled meanwhile. */
  private readonly sending = new Set<string>();
  /**
   * The row last mirrored out of `live`, as committed: a fill's transaction commits its order's final row before
   * fillRecorded counts the fill, so the row is read back at once (from here, not the database).
   */
  private dropped: OrderRow | undefined;

  constructor(private readonly store: Store) {}

  load(): void {
    this.live.clear();
    this.byExchange.clear();
    this.attention.clear();
    this.undelivered.clear();
    this.parts.clear();
    this.totals.clear();
    this.dropped = undefined;
    for (const [localId, n] of this.store.fills.undeliveredByOrder()) this.undelivered.set(localId, n);
    for (const row of [...this.store.orders.active(), ...this.store.orders.withOutstandingFills()]) this.mirror(row);
    for (const localId of this.undelivered.keys()) {
      const row = this.live.has(localId) ? undefined : this.store.orders.get(localId);
      if (row) this.mirror(row);
    }
  }

  /** A fill of this order was recorded: the order stays in its instance's view until the fill is delivered. */
  fillRecorded(localId: string): void {
    this.undelivered.set(localId, (this.undelivered.get(localId) ?? 0) + 1);
    const row = this.get(localId);
    if (row) this.mirror(row);
  }

  /** A fill of this order reached onFill. */
  fillDelivered(localId: string): void {
    const left = (this.undelivered.get(localId) ?? 1) - 1;
    if (left > 0) this.undelivered.set(localId, left);
    else this.undelivered.delete(localId);
    const row = this.get(localId);
    if (row) this.mirror(row);
  }

  /** Writes a new row to the journal; mirrored once it is committed (a write that fails leaves no trace here). */
  insert(row: OrderRow): void {
    this.insertMany([row]);
  }

  /** Writes new rows to the journal in one transaction (one sync to disk, whatever their number); mirrored once committed. */
  insertMany(rows: readonly OrderRow[]): void {
    const { store } = this;
    store.transaction(() => {
      for (const row of rows) store.orders.insert(row);
      store.whenCommitted(() => {
        for (const row of rows) this.mirror(row);
      });
    });
  }

  /** Writes the row's outcome to the journal; mirrored once it is committed. */
  save(row: OrderRow): void {
    this.saveMany([row]);
  }

  /** Writes rows' outcomes in one transaction (one sync to disk, whatever their number); mirrored once committed. */
  saveMany(rows: readonly OrderRow[]): void {
    const { store } = this;
    store.transaction(() => {
      for (const row of rows) store.orders.update(row);
      store.whenCommitted(() => {
        for (const row of rows) this.mirror(row);
      });
    });
  }

  get(localId: string): OrderRow | undefined {
    const dropped = this.dropped;
    return (
      this.live.get(localId) ?? (dropped?.localId === localId ? dropped : undefined) ?? this.store.orders.get(localId)
    );
  }

  byExchangeId(exchangeId: string): OrderRow | undefined {
    return this.byExchange.get(exchangeId) ?? this.store.orders.byExchangeId(exchangeId);
  }

  /** The live row with this exchange id (memory only: no database read for an id it does not hold). */
  liveByExchangeId(exchangeId: string): OrderRow | undefined {
    return this.byExchange.get(exchangeId);
  }

  /** External rows (orders of another owner) still live. */
  externalLive(): number {
    let n = 0;
    for (const row of this.live.values()) if (row.external && isActive(row.status)) n++;
    return n;
  }

  isKnownExchangeId(exchangeId: string): boolean {
    return this.byExchangeId(exchangeId) !== undefined;
  }

  activeFor(instance: string): OrderRow[] {
    const out: OrderRow[] = [];
    for (const row of this.live.values()) if (row.instance === instance && this.inView(row)) out.push(row);
    return out;
  }

  /** The instance's orders still live on the venue (its view less the final rows whose fills await delivery). */
  liveFor(instance: string): OrderRow[] {
    const out: OrderRow[] = [];
    for (const row of this.live.values()) if (row.instance === instance && isActive(row.status)) out.push(row);
    return out;
  }

  /** The create of `localId` (journaled PENDING) leaves for the venue: its row waits for the answer, not a reconcile. */
  createSent(localId: string): void {
    this.sending.add(localId);
  }

  /** The venue answered the create of `localId`, or failed to: what became of it is in its row. */
  createAnswered(localId: string): void {
    this.sending.delete(localId);
  }

  /** The row's outcome is not known (PENDING, UNKNOWN) and no answer to its create is awaited: to be reconciled. */
  toReconcile(row: OrderRow): boolean {
    return isUnresolved(row) && !this.sending.has(row.localId);
  }

  /** The instance's rows to reconcile (toReconcile): among the few needing attention. */
  unresolvedFor(instance: string): OrderRow[] {
    const out: OrderRow[] = [];
    for (const localId of this.attention) {
      const row = this.live.get(localId);
      if (row !== undefined && row.instance === instance && this.toReconcile(row)) out.push(row);
    }
    return out;
  }

  /** What the instance's view (activeFor) may still bring, kept as its rows change (no pass over them). */
  exposure(instance: string): OpenExposure {
    const totals = this.totals.get(instance);
    if (!totals) return { buy: ZERO, sell: ZERO, byQuote: [], count: 0 };
    return { buy: totals.buy, sell: totals.sell, byQuote: [...totals.byQuote.values()], count: totals.count };
  }

  forSymbol(symbol: string): OrderRow[] {
    const out: OrderRow[] = [];
    for (const row of this.live.values()) if (row.symbol === symbol) out.push(row);
    return out;
  }

  symbols(): Set<string> {
    const out = new Set<string>();
    for (const row of this.live.values()) out.add(row.symbol);
    return out;
  }

  needsAttention(): boolean {
    return this.attention.size > 0;
  }

  /** Changes whenever one of the instance's rows changes: the key of its cached order views. */
  version(instance: string): number {
    return this.versions.get(instance) ?? 0;
  }

  private mirror(row: OrderRow): void {
    const previous = this.live.get(row.localId);
    if (previous?.exchangeId !== undefined && previous.exchangeId !== row.exchangeId)
      this.byExchange.delete(previous.exchangeId);
    if (isActive(row.status) || hasOutstandingFills(row) || this.undelivered.has(row.localId)) {
      this.live.set(row.localId, row);
      if (row.exchangeId !== undefined) this.byExchange.set(row.exchangeId, row);
      if (this.dropped?.localId === row.localId) this.dropped = undefined;
    } else {
      this.live.delete(row.localId);
      if (row.exchangeId !== undefined) this.byExchange.delete(row.exchangeId);
      this.dropped = row;
    }
    if (isUnresolved(row) || hasOutstandingFills(row)) this.attention.add(row.localId);
    else this.attention.delete(row.localId);
    if (row.instance !== undefined) this.versions.set(row.instance, this.version(row.instance) + 1);
    this.account(row);
  }

  /** In its instance's view: not final, or final with fills its strategy has not been told of yet. */
  private inView(row: OrderRow): boolean {
    return isActive(row.status) || this.undelivered.has(row.localId);
  }

  /** Takes the row's previous part out of its instance's totals and puts its current one in (if in view). */
  private account(row: OrderRow): void {
    const before = this.parts.get(row.localId);
    if (before) {
      this.add(before, -1);
      this.parts.delete(row.localId);
    }
    if (row.instance === undefined || this.live.get(row.localId) !== row || !this.inView(row)) return;
    // A row's remaining base changes with its quantities only (a status or an id alone does not re-parse them).
    const same = before !== undefined && before.row.quantity === row.quantity && before.row.filledQty === row.filledQty;
    const part: Part = {
      instance: row.instance,
      row,
      base: same ? before.base : row.quantity !== undefined ? remainingBase(row, undefined) : undefined,
    };
    this.parts.set(row.localId, part);
    this.add(part, 1);
  }

  private add(part: Part, sign: 1 | -1): void {
    let totals = this.totals.get(part.instance);
    if (!totals) {
      totals = { buy: ZERO, sell: ZERO, byQuote: new Map(), count: 0 };
      this.totals.set(part.instance, totals);
    }
    const { row, base } = part;
    if (base === undefined) {
      if (sign > 0) totals.byQuote.set(row.localId, row);
      else totals.byQuote.delete(row.localId);
    } else if (row.side === 'BUY') totals.buy = sign > 0 ? totals.buy.plus(base) : totals.buy.minus(base);
    else totals.sell = sign > 0 ? totals.sell.plus(base) : totals.sell.minus(base);
    if (!isHeldExit(row)) totals.count += sign;
  }
}
