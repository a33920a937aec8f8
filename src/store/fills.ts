/**
 * Fills: one row per execution, keyed by the exchange's trade id (or `<exchangeOrderId>:<cumulativeQty>` where
 * the venue gives none), so inserting the same fill twice is a no-op. `delivered` records that the owning
 * strategy's onFill has seen it: delivery is exactly-once across restarts.
 */
import { columnMapper } from './columns.js';
import type { Database as Db } from 'better-sqlite3';
import type { Side } from '../market/pair-rules.js';
import { PositionFolds } from './positions.js';

export type FeeIn = 'base' | 'quote' | 'other';

export interface FillRow {
  fillKey: string;
  orderLocalId: string;
  instance: string | undefined;
  symbol: string;
  side: Side;
  price: string;
  qty: string;
  fee: string;
  feeAsset: string | undefined;
  feeIn: FeeIn;
  time: number;
  source: 'trade' | 'delta';
  delivered: boolean;
  recordedAt: number;
}

const FILL = columnMapper<FillRow>(
  {
    fillKey: 'fill_key',
    orderLocalId: 'order_local_id',
    instance: 'instance',
    symbol: 'symbol',
    side: 'side',
    price: 'price',
    qty: 'qty',
    fee: 'fee',
    feeAsset: 'fee_asset',
    feeIn: 'fee_in',
    time: 'time',
    source: 'source',
    delivered: 'delivered',
    recordedAt: 'recorded_at',
  },
  ['delivered'],
);
type DbFill = Record<string, unknown>;
/** Keys looked up one by one at most (FillStore.recorded); more go in one statement. */
const FEW_KEYS = 4;
const COLUMNS = FILL.columns;
const fromDb = (r: DbFill): FillRow => FILL.fromDb(r);
const insertValues = FILL.values();

export interface FillTotal {
  instance: string | null;
  symbol: string;
  side: Side;
  n: number;
  /** Sum of price × quantity, in the quote currency. */
  notional: number;
}

export class FillStore {
  /** Each instance's position folded from its fills, kept as they are inserted. */
  readonly positions: PositionFolds;
  private readonly insertFill: (fill: FillRow) => boolean;
  private readonly symbolsStmt;
  private readonly insertStmt;
  private readonly deliveredStmt;
  private readonly undeliveredStmt;
  private readonly forInstanceStmt;
  private readonly forInstanceSinceStmt;
  private readonly forOrderStmt;
  private readonly latestTimeStmt;
  private readonly undeliveredOrdersStmt;
  private readonly hasStmt;
  private readonly recordedStmt;
  private readonly totalsStmt;
  private readonly db: Db;
  private readonly afterStmt;
  private readonly seqBeforeStmt;
  private readonly lastSeqStmt;

  constructor(db: Db) {
    this.db = db;
    this.positions = new PositionFolds(db);
    this.insertStmt = db.prepare<unknown[]>(`INSERT OR IGNORE INTO fills (${COLUMNS}) VALUES (${FILL.marks})`);
    // The fill and its instance's fold together or not at all (a savepoint inside the caller's transaction).
    this.insertFill = db.transaction((fill: FillRow): boolean => {
      const result = this.insertStmt.run(insertValues(fill));
      if (result.changes !== 1) return false;
      if (fill.instance !== undefined) this.positions.apply(fill.instance, fill, Number(result.lastInsertRowid));
      return true;
    });
    this.deliveredStmt = db.prepare<[string]>('UPDATE fills SET delivered = 1 WHERE fill_key = ?');
    this.undeliveredStmt = db.prepare<[string], DbFill>(
      `SELECT ${COLUMNS} FROM fills WHERE instance = ? AND delivered = 0 ORDER BY rowid`,
    );
    this.forInstanceStmt = db.prepare<[string], DbFill>(
      `SELECT ${COLUMNS} FROM fills WHERE instance = ? ORDER BY rowid`,
    );
    this.forInstanceSinceStmt = db.prepare<[string, number], DbFill>(
      `SELECT ${COLUMNS} FROM fills WHERE instance = ? AND time >= ? ORDER BY rowid`,
    );
    this.forOrderStmt = db.prepare<[string], DbFill>(
      `SELECT ${COLUMNS} FROM fills WHERE order_local_id = ? ORDER BY rowid`,
    );
    this.afterStmt = db.prepare<[number, number], DbFill>(
      `SELECT rowid AS seq, ${COLUMNS} FROM fills WHERE rowid > ? ORDER BY rowid LIMIT ?`,
    );
    this.seqBeforeStmt = db.prepare<[number], { seq: number }>(
      'SELECT MIN(rowid) - 1 AS seq FROM fills WHERE recorded_at >= ? HAVING COUNT(*) > 0',
    );
    this.lastSeqStmt = db.prepare<[], { seq: number }>('SELECT COALESCE(MAX(rowid), 0) AS seq FROM fills');
    this.undeliveredOrdersStmt = db.prepare<[], { id: string; n: number }>(
      'SELECT order_local_id AS id, COUNT(*) AS n FROM fills WHERE delivered = 0 AND instance IS NOT NULL GROUP BY order_local_id',
    );
    this.hasStmt = db.prepare<[string], { n: number }>('SELECT 1 AS n FROM fills WHERE fill_key = ?');
    this.recordedStmt = db
      .prepare<[string], string>('SELECT fill_key FROM fills WHERE fill_key IN (SELECT value FROM json_each(?))')
      .pluck();
    this.symbolsStmt = db.prepare<[string], { symbol: string }>(
      'SELECT DISTINCT symbol FROM fill_totals WHERE instance = ? ORDER BY symbol',
    );
    // Kept by a trigger as fills are inserted (migration 5): a scrape reads a few rows, not every fill.
    this.totalsStmt = db.prepare<[], FillTotal>(
      "SELECT nullif(instance, '') AS instance, symbol, side, n, notional FROM fill_totals ORDER BY instance, symbol, side",
    );
    this.latestTimeStmt = db.prepare<[string], { t: number | null }>(
      "SELECT MAX(time) AS t FROM fills WHERE symbol = ? AND source = 'trade'",
    );
  }

  /** Inserts the fill unless its key is already recorded, folding it into its instance's position; true when it was new. */
  insert(fill: FillRow): boolean {
    return this.insertFill(fill);
  }

  /** Whether a fill with this key is recorded. */
  has(fillKey: string): boolean {
    return this.hasStmt.get(fillKey) !== undefined;
  }

  /**
   * Which of `fillKeys` are recorded: one statement for a page of trades, however many it holds; a key or two
   * (a poll's new trades) through the key's index, cheaper than the JSON they would be sent as.
   */
  recorded(fillKeys: readonly string[]): Set<string> {
    if (fillKeys.length <= FEW_KEYS) return new Set(fillKeys.filter((key) => this.has(key)));
    return new Set(this.recordedStmt.all(JSON.stringify(fillKeys)));
  }

  markDelivered(fillKey: string): void {
    this.deliveredStmt.run(fillKey);
  }

  /** The instance's fills its strategy has not seen yet, in the order they were recorded. */
  undelivered(instance: string): FillRow[] {
    return this.undeliveredStmt.all(instance).map(fromDb);
  }

  /** How many fills each instance-owned order has that its strategy has not seen yet. */
  undeliveredByOrder(): Map<string, number> {
    return new Map(this.undeliveredOrdersStmt.all().map((r) => [r.id, r.n]));
  }

  /** Every fill of the instance in recording order (the order positions are folded in); since a time through an index. */
  forInstance(instance: string, sinceTime?: number): FillRow[] {
    const rows =
      sinceTime === undefined ? this.forInstanceStmt.all(instance) : this.forInstanceSinceStmt.all(instance, sinceTime);
    return rows.map(fromDb);
  }

  /** Symbols the instance has fills in, sorted. */
  symbolsOf(instance: string): string[] {
    return this.symbolsStmt.all(instance).map((r) => r.symbol);
  }

  /** Fills counted, and their quote value summed, by instance, symbol and side (metrics), as kept on insert. */
  totals(): FillTotal[] {
    return this.totalsStmt.all();
  }

  /**
   * One page of fills, newest first: of one instance when given, recorded before the `before` cursor when given.
   * `next` is the cursor of the following page (undefined on the last).
   */
  page(query: { instance?: string; before?: number; limit: number }): { fills: FillRow[]; next: number | undefined } {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (query.instance !== undefined) {
      where.push('instance = ?');
      args.push(query.instance);
    }
    if (query.before !== undefined) {
      where.push('rowid < ?');
      args.push(query.before);
    }
    const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
    const rows = this.db
      .prepare<(string | number)[], DbFill & { cursor: number }>(
        `SELECT rowid AS cursor, ${COLUMNS} FROM fills${clause} ORDER BY rowid DESC LIMIT ?`,
      )
      .all(...args, query.limit + 1);
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    return { fills: page.map(fromDb), next: more ? page[page.length - 1]?.cursor : undefined };
  }

  forOrder(orderLocalId: string): FillRow[] {
    return this.forOrderStmt.all(orderLocalId).map(fromDb);
  }

  /**
   * Fills recorded after row `afterSeq` in recording order, each with its row number (`seq`): how a reader
   * outside the engine (the notifier) follows new fills without the engine knowing.
   */
  after(afterSeq: number, limit: number): { seq: number; fill: FillRow }[] {
    return this.afterStmt.all(afterSeq, limit).map((r) => ({ seq: Number(r.seq), fill: fromDb(r) }));
  }

  /** Row number of the first fill recorded at or after `time` minus one (the last before it); 0 when none. */
  seqBefore(time: number): number {
    const row = this.seqBeforeStmt.get(time);
    return row?.seq ?? this.lastSeqStmt.get()?.seq ?? 0;
  }

  /** Time of the newest trade-sourced fill on the symbol: where the next trade-history poll starts (minus a margin). */
  latestTradeTime(symbol: string): number | undefined {
    return this.latestTimeStmt.get(symbol)?.t ?? undefined;
  }
}
