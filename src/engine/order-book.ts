/**
 * The engine's in-memory mirror of the journal rows that still matter: orders not final, and final orders
 * whose fills are not all recorded yet. Every change is written to the journal first, then mirrored, so the
 * tick path reads memory and never SQLite.
 */
import { D } from '../market/decimal.js';
import type { Store } from '../store/store.js';
import { ACTIVE_STATUSES, type OrderRow } from '../store/order-journal.js';

const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);

export function isActive(status: string): boolean {
  return ACTIVE.has(status);
}

/** PENDING or UNKNOWN: the create's outcome is not known yet. */
export function isUnresolved(row: OrderRow): boolean {
  return row.status === 'UNKNOWN' || row.status === 'PENDING';
}

export function hasOutstandingFills(row: OrderRow): boolean {
  return row.execQty !== row.filledQty && new D(row.execQty).gt(row.filledQty);
}

export class OrderBook {
  private readonly live = new Map<string, OrderRow>();
  private readonly byExchange = new Map<string, OrderRow>();
  private readonly versions = new Map<string, number>();
  /** Rows a poll must look at even when the venue reports no change (unresolved, or fills outstanding). */
  private readonly attention = new Set<string>();

  constructor(private readonly store: Store) {}

  load(): void {
    this.live.clear();
    this.byExchange.clear();
    this.attention.clear();
    for (const row of [...this.store.orders.active(), ...this.store.orders.withOutstandingFills()]) this.mirror(row);
  }

  insert(row: OrderRow): void {
    this.store.orders.insert(row);
    this.mirror(row);
  }

  /** Writes the row's outcome to the journal, then mirrors it. */
  save(row: OrderRow): void {
    this.store.orders.update(row);
    this.mirror(row);
  }

  get(localId: string): OrderRow | undefined {
    return this.live.get(localId) ?? this.store.orders.get(localId);
  }

  byExchangeId(exchangeId: string): OrderRow | undefined {
    return this.byExchange.get(exchangeId) ?? this.store.orders.byExchangeId(exchangeId);
  }

  isKnownExchangeId(exchangeId: string): boolean {
    return this.byExchangeId(exchangeId) !== undefined;
  }

  activeFor(instance: string): OrderRow[] {
    const out: OrderRow[] = [];
    for (const row of this.live.values()) if (row.instance === instance && isActive(row.status)) out.push(row);
    return out;
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
    if (isActive(row.status) || hasOutstandingFills(row)) {
      this.live.set(row.localId, row);
      if (row.exchangeId !== undefined) this.byExchange.set(row.exchangeId, row);
    } else {
      this.live.delete(row.localId);
      if (row.exchangeId !== undefined) this.byExchange.delete(row.exchangeId);
    }
    if (isUnresolved(row) || hasOutstandingFills(row)) this.attention.add(row.localId);
    else this.attention.delete(row.localId);
    if (row.instance !== undefined) this.versions.set(row.instance, this.version(row.instance) + 1);
  }
}
