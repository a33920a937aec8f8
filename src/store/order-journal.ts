/**
 * The order journal: one row per order the bot placed (or adopted), written BEFORE the request leaves
 * (invariant 2) and updated as the venue answers, reconciles and fills. Decimals are exact TEXT.
 */
import { D, type Dec, ZERO } from '../market/decimal.js';
import type { Side } from '../market/pair-rules.js';
import { columnMapper } from './columns.js';
import type { Database as Db } from 'better-sqlite3';
import { distinctThroughIndex } from './columns.js';

/** Statuses the engine writes; rows resolved from the venue keep the venue's final status verbatim. */
export const ACTIVE_STATUSES = ['PENDING', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN'] as const;
const ACTIVE: ReadonlySet<string> = new Set(ACTIVE_STATUSES);

/** Not final: the order may still fill (or, PENDING and UNKNOWN, may exist). */
export function isActive(status: string): boolean {
  return ACTIVE.has(status);
}

/** PENDING or UNKNOWN: the create's outcome is not known yet. */
export function isUnresolved(row: OrderRow): boolean {
  return row.status === 'UNKNOWN' || row.status === 'PENDING';
}

/** The venue reports more executed than the fills recorded so far. */
export function hasOutstandingFills(row: OrderRow): boolean {
  return row.execQty !== row.filledQty && new D(row.execQty).gt(row.filledQty);
}

/**
 * Base a live order may still bring: its unfilled quantity, or for a MARKET order by quote amount (no base
 * quantity) the quote it has not spent yet, at the last price. Without a last price (none was ever seen: no
 * such order could have been placed) it counts nothing.
 */
export function remainingBase(row: OrderRow, last: Dec | undefined): Dec {
  if (row.quantity !== undefined) return D.max(new D(row.quantity).minus(row.filledQty), ZERO);
  if (row.quoteAmount === undefined || last === undefined || !last.isPos()) return ZERO;
  const spent = new D(row.filledQty).mul(row.avgPrice ?? 0);
  return D.max(new D(row.quoteAmount).minus(spent), ZERO).div(last);
}

export interface OrderCount {
  instance: string | null;
  symbol: string;
  side: Side;
  type: string;
  status: string;
  /** 1 when the venue gave the order an id (it was placed). */
  placed: number;
  n: number;
}

export type MatchMethod = 'response' | 'open-orders' | 'history' | 'not-found' | 'adopted' | 'vanished';
export type FillSource = 'trades' | 'delta';

export interface OrderRow {
  localId: string;
  /** Undefined for an order the bot did not place (external, adopted). */
  instance: string | undefined;
  seq: number | undefined;
  symbol: string;
  side: Side;
  type: string;
  price: string | undefined;
  stopPrice: string | undefined;
  limitPrice: string | undefined;
  quantity: string | undefined;
  quoteAmount: string | undefined;
  tag: string | undefined;
  /** The tag of the entry the order closes, as the strategy named it (closed trades pair by it). */
  closes: string | undefined;
  status: string;
  /** The status the venue last reported, verbatim (the journal's stays active until its fills are recorded). */
  venueStatus: string | undefined;
  exchangeId: string | undefined;
  filledQty: string;
  avgPrice: string | undefined;
  execQty: string;
  fillSource: FillSource | undefined;
  rejectCode: string | undefined;
  rejectReason: string | undefined;
  matchMethod: MatchMethod | undefined;
  external: boolean;
  createdAt: number;
  sentAt: number | undefined;
  /**
   * When the order was created on the venue's clock (its record's createdAt), once the venue has shown it:
   * where history reads about it start, whatever this machine's clock says.
   */
  venueCreatedAt: number | undefined;
  updatedAt: number;
}

/** A new journal row: what identifies it, plus any other field; the outcome fields start empty. */
export function newOrderRow(
  fields: Pick<OrderRow, 'localId' | 'instance' | 'symbol' | 'side' | 'type' | 'status' | 'createdAt'> &
    Partial<OrderRow>,
): OrderRow {
  return {
    seq: undefined,
    price: undefined,
    stopPrice: undefined,
    limitPrice: undefined,
    quantity: undefined,
    quoteAmount: undefined,
    tag: undefined,
    closes: undefined,
    venueStatus: undefined,
    exchangeId: undefined,
    filledQty: '0',
    avgPrice: undefined,
    execQty: '0',
    fillSource: undefined,
    rejectCode: undefined,
    rejectReason: undefined,
    matchMethod: undefined,
    external: false,
    sentAt: undefined,
    venueCreatedAt: undefined,
    updatedAt: fields.createdAt,
    ...fields,
  };
}

const ORDER = columnMapper<OrderRow>(
  {
    localId: 'local_id',
    instance: 'instance',
    seq: 'seq',
    symbol: 'symbol',
    side: 'side',
    type: 'type',
    price: 'price',
    stopPrice: 'stop_price',
    limitPrice: 'limit_price',
    quantity: 'quantity',
    quoteAmount: 'quote_amount',
    tag: 'tag',
    closes: 'closes',
    status: 'status',
    venueStatus: 'venue_status',
    exchangeId: 'exchange_id',
    filledQty: 'filled_qty',
    avgPrice: 'avg_price',
    execQty: 'exec_qty',
    fillSource: 'fill_source',
    rejectCode: 'reject_code',
    rejectReason: 'reject_reason',
    matchMethod: 'match_method',
    external: 'external',
    createdAt: 'created_at',
    sentAt: 'sent_at',
    venueCreatedAt: 'venue_created_at',
    updatedAt: 'updated_at',
  },
  ['external'],
);
type DbOrder = Record<string, unknown>;
const COLUMNS = ORDER.columns;
/** Identity (local id, instance, what was asked) never changes after insert; only the outcome does. */
const OUTCOME = [
  'status',
  'venueStatus',
  'exchangeId',
  'filledQty',
  'avgPrice',
  'execQty',
  'fillSource',
  'rejectCode',
  'rejectReason',
  'matchMethod',
  'sentAt',
  'venueCreatedAt',
  'updatedAt',
] as const;
const insertValues = ORDER.values();
const updateValues = ORDER.values([...OUTCOME, 'localId']);
const ACTIVE_LIST = ACTIVE_STATUSES.map((s) => `'${s}'`).join(', ');

export class OrderJournal {
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly getStmt;
  private readonly byExchangeIdStmt;
  private readonly activeStmt;
  private readonly activeForInstanceStmt;
  private readonly outstandingStmt;
  private readonly maxSeqStmt;
  private readonly latestTimeStmt;
  private readonly instancesStmt;
  private readonly countsStmt;

  constructor(private readonly db: Db) {
    // Bound by position (ORDER.values): the journal's writes are on every order's and every fill's path.
    this.insertStmt = db.prepare<unknown[]>(`INSERT INTO orders (${COLUMNS}) VALUES (${ORDER.marks})`);
    this.updateStmt = db.prepare<unknown[]>(
      `UPDATE orders SET ${OUTCOME.map((f) => `${ORDER.column(f)} = ?`).join(', ')} WHERE local_id = ?`,
    );
    this.getStmt = db.prepare<[string], DbOrder>(`SELECT ${COLUMNS} FROM orders WHERE local_id = ?`);
    this.byExchangeIdStmt = db.prepare<[string], DbOrder>(`SELECT ${COLUMNS} FROM orders WHERE exchange_id = ?`);
    this.activeStmt = db.prepare<[], DbOrder>(
      `SELECT ${COLUMNS} FROM orders WHERE status IN (${ACTIVE_LIST}) ORDER BY created_at, rowid`,
    );
    this.activeForInstanceStmt = db.prepare<[string], DbOrder>(
      `SELECT ${COLUMNS} FROM orders WHERE instance = ? AND status IN (${ACTIVE_LIST}) ORDER BY created_at, rowid`,
    );
    // Decimals are written canonically (plain()), so text inequality is numeric inequality here.
    this.outstandingStmt = db.prepare<[], DbOrder>(
      `SELECT ${COLUMNS} FROM orders WHERE status NOT IN (${ACTIVE_LIST}) AND exec_qty <> filled_qty ORDER BY created_at, rowid`,
    );
    this.maxSeqStmt = db.prepare<[string], { s: number | null }>('SELECT MAX(seq) AS s FROM orders WHERE instance = ?');
    this.latestTimeStmt = db
      .prepare<[], number | null>('SELECT MAX(MAX(created_at), MAX(updated_at)) FROM orders')
      .pluck();
    this.instancesStmt = db.prepare<[], { instance: string }>(distinctThroughIndex('orders', 'instance'));
    // Kept by triggers as rows are written (migration 5): a scrape reads a few rows, not every order.
    this.countsStmt = db.prepare<[], OrderCount>(
      "SELECT nullif(instance, '') AS instance, symbol, side, type, status, placed, n FROM order_counts WHERE n > 0 " +
        'ORDER BY instance, symbol, side, type, status, placed',
    );
  }

  /** Rows counted by instance, symbol, side, type, status and whether the venue took them (metrics), as kept on write. */
  counts(): OrderCount[] {
    return this.countsStmt.all();
  }

  /** The latest time any order row carries (created or updated), undefined when there is none. */
  latestTime(): number | undefined {
    return this.latestTimeStmt.get() ?? undefined;
  }

  /** No order was ever journaled here (a new database, or one deleted and created again). */
  isEmpty(): boolean {
    return this.db.prepare('SELECT 1 FROM orders LIMIT 1').get() === undefined;
  }

  insert(row: OrderRow): void {
    this.insertStmt.run(insertValues(row));
  }

  /** Writes the row's outcome fields (status, exchange id, fills, reject, match method, times). */
  update(row: OrderRow): void {
    const result = this.updateStmt.run(updateValues(row));
    if (result.changes !== 1) throw new Error(`order ${row.localId} is not in the journal`);
  }

  get(localId: string): OrderRow | undefined {
    const r = this.getStmt.get(localId);
    return r && ORDER.fromDb(r);
  }

  byExchangeId(exchangeId: string): OrderRow | undefined {
    const r = this.byExchangeIdStmt.get(exchangeId);
    return r && ORDER.fromDb(r);
  }

  /** Every row, in the order they were written (placement order): a backtest's journal, read whole. */
  all(): OrderRow[] {
    return this.db
      .prepare<[], DbOrder>(`SELECT ${COLUMNS} FROM orders ORDER BY rowid`)
      .all()
      .map((r) => ORDER.fromDb(r));
  }

  /** Every row that is not final (PENDING, OPEN, PARTIALLY_FILLED, UNKNOWN), oldest first. */
  active(): OrderRow[] {
    return this.activeStmt.all().map((r) => ORDER.fromDb(r));
  }

  activeForInstance(instance: string): OrderRow[] {
    return this.activeForInstanceStmt.all(instance).map((r) => ORDER.fromDb(r));
  }

  /** Final rows whose venue-reported executed quantity is not yet covered by recorded fills. */
  withOutstandingFills(): OrderRow[] {
    return this.outstandingStmt.all().map((r) => ORDER.fromDb(r));
  }

  /** Highest sequence number used by the instance (0 when none): local ids continue from it after a restart. */
  maxSeq(instance: string): number {
    return this.maxSeqStmt.get(instance)?.s ?? 0;
  }

  instances(): string[] {
    return this.instancesStmt.all().map((r) => r.instance);
  }
}
