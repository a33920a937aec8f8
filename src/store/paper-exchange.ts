/**
 * The paper exchange's tables (migration 3): the embedded simulated exchange's accounts, balances, orders,
 * fills, last prices and replay position. Its rows have the shapes the simulated exchange persists
 * (ports/ledger-records.ts: decimals as exact TEXT).
 * Only the simulated exchange writes them (through app/paper-ledger.ts); `status` and audits read them.
 */
import type { LedgerBalance, LedgerFill, LedgerMarket, LedgerOrder, LedgerPage } from '../ports/ledger-records.js';
import { columnMapper } from './columns.js';
import type { Database as Db, Statement } from 'better-sqlite3';

export type PaperData = 'recording' | 'live';

export interface PaperExchangeRow {
  data: PaperData;
  /** JSON of the replay position (paper on recorded data). */
  replay: string | undefined;
  createdAt: number;
  updatedAt: number;
}

export interface PaperAccountRow {
  userId: number;
  /** Starting balances by asset code. */
  funding: Record<string, string>;
  createdAt: number;
}

export interface PaperBalanceRow extends LedgerBalance {
  userId: number;
  asset: string;
}

export type PaperOrderRow = LedgerOrder;
export type PaperFillRow = LedgerFill;
export type PaperMarketRow = LedgerMarket;

/**
 * What the simulated exchange needs to resume: its accounts, balances, open orders, last prices and where its
 * ids stand. Its history stays here, read a page at a time (orderPage, fillPage): a resume reads as many rows
 * however long the account has traded.
 */
export interface PaperSnapshot {
  exchange: PaperExchangeRow | undefined;
  accounts: PaperAccountRow[];
  balances: PaperBalanceRow[];
  /** The orders still NEW or PARTIALLY_FILLED. */
  open: PaperOrderRow[];
  /** The highest order and fill ids (0 when none). */
  lastOrderId: number;
  lastFillId: number;
  /** The pairs the orders are on. */
  symbols: string[];
  market: PaperMarketRow[];
  /** The latest time the records carry (their last prices, orders and fills), undefined when they hold none. */
  latest: number | undefined;
}

/** What `status` shows of the paper account. */
export interface PaperSummary {
  data: PaperData;
  since: number;
  funding: Record<string, string>;
  balances: PaperBalanceRow[];
  orders: number;
  openOrders: number;
  fills: number;
  replay: string | undefined;
}

const ORDER = columnMapper<PaperOrderRow>(
  {
    id: 'id',
    userId: 'user_id',
    symbol: 'symbol',
    side: 'side',
    type: 'type',
    status: 'status',
    quantity: 'quantity',
    price: 'price',
    stopPrice: 'stop_price',
    limitPrice: 'limit_price',
    quoteOrderQty: 'quote_order_qty',
    useQuoteQty: 'use_quote_qty',
    stop: 'stop',
    limit: 'limit_in_force',
    leg: 'leg',
    lockPerUnit: 'lock_per_unit',
    locked: 'locked',
    executedQty: 'executed_qty',
    executedQuoteQty: 'executed_quote_qty',
    fee: 'fee',
    feeRatio: 'fee_ratio',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  },
  ['useQuoteQty'],
);

const FILL = columnMapper<PaperFillRow>(
  {
    id: 'id',
    orderId: 'order_id',
    userId: 'user_id',
    symbol: 'symbol',
    side: 'side',
    price: 'price',
    baseQty: 'base_qty',
    quoteQty: 'quote_qty',
    fee: 'fee',
    feeAsset: 'fee_asset',
    feeRatio: 'fee_ratio',
    maker: 'maker',
    time: 'time',
  },
  ['maker'],
);

const BALANCE = columnMapper<PaperBalanceRow>({ userId: 'user_id', asset: 'asset', free: 'free', locked: 'locked' });

type DbRecord = Record<string, unknown>;

/** A history table: its name, columns, the time a page's bounds compare, whether its rows can be CANCELED. */
interface History {
  table: string;
  columns: string;
  time: string;
  canceled: boolean;
}

const ORDERS: History = { table: 'paper_orders', columns: ORDER.columns, time: 'created_at', canceled: true };
const FILLS: History = { table: 'paper_fills', columns: FILL.columns, time: 'time', canceled: false };

const json = (text: unknown): Record<string, unknown> | undefined =>
  typeof text === 'string' ? (JSON.parse(text) as Record<string, unknown>) : undefined;

export class PaperExchangeStore {
  private readonly db: Db;
  private readonly putOrderStmt;
  private readonly insertFillStmt;
  private readonly putBalanceStmt;
  private readonly putMarketStmt;
  private readonly putReplayStmt;
  private readonly orderStmt;
  private readonly pageStmts = new Map<string, Statement<[DbRecord], DbRecord>>();

  constructor(db: Db) {
    this.db = db;
    const update = (mapper: { columns: string }, key: string) =>
      mapper.columns
        .split(', ')
        .filter((c) => c !== key)
        .map((c) => `${c} = excluded.${c}`)
        .join(', ');
    this.putOrderStmt = db.prepare<[DbRecord]>(
      `INSERT INTO paper_orders (${ORDER.columns}) VALUES (${ORDER.params}) ON CONFLICT (id) DO UPDATE SET ${update(ORDER, 'id')}`,
    );
    this.insertFillStmt = db.prepare<[DbRecord]>(`INSERT INTO paper_fills (${FILL.columns}) VALUES (${FILL.params})`);
    this.putBalanceStmt = db.prepare<[DbRecord]>(
      `INSERT INTO paper_balances (${BALANCE.columns}) VALUES (${BALANCE.params}) ` +
        'ON CONFLICT (user_id, asset) DO UPDATE SET free = excluded.free, locked = excluded.locked',
    );
    this.putMarketStmt = db.prepare<[string, number, number, string | null]>(
      'INSERT INTO paper_market (symbol, price, time, ticker) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (symbol) DO UPDATE SET price = excluded.price, time = excluded.time, ticker = excluded.ticker',
    );
    this.putReplayStmt = db.prepare<[string | null, number]>(
      'UPDATE paper_exchange SET replay = ?, updated_at = ? WHERE id = 1',
    );
    this.orderStmt = db.prepare<[number], DbRecord>(`SELECT ${ORDER.columns} FROM paper_orders WHERE id = ?`);
  }

  /** Whether a paper account exists here (the exchange was created and funded). */
  exists(): boolean {
    return this.db.prepare('SELECT 1 FROM paper_accounts LIMIT 1').get() !== undefined;
  }

  /** Creates the exchange's identity row; a second call is refused by the table's key. */
  create(data: PaperData, now: number): void {
    this.db
      .prepare('INSERT INTO paper_exchange (id, data, replay, created_at, updated_at) VALUES (1, ?, NULL, ?, ?)')
      .run(data, now, now);
  }

  putAccount(account: PaperAccountRow): void {
    this.db
      .prepare('INSERT INTO paper_accounts (user_id, funding, created_at) VALUES (?, ?, ?)')
      .run(account.userId, JSON.stringify(account.funding), account.createdAt);
  }

  putBalance(balance: PaperBalanceRow): void {
    this.putBalanceStmt.run(BALANCE.toDb(balance));
  }

  putOrder(order: PaperOrderRow): void {
    this.putOrderStmt.run(ORDER.toDb(order));
  }

  /** A fill is written once: a second insert of the same id is an error (it would be a doubled fill). */
  insertFill(fill: PaperFillRow): void {
    this.insertFillStmt.run(FILL.toDb(fill));
  }

  putMarket(market: PaperMarketRow): void {
    this.putMarketStmt.run(
      market.symbol,
      market.price,
      market.time,
      market.ticker === undefined ? null : JSON.stringify(market.ticker),
    );
  }

  putReplay(replay: string | undefined, now: number): void {
    this.putReplayStmt.run(replay ?? null, now);
  }

  exchange(): PaperExchangeRow | undefined {
    const row = this.db
      .prepare<[], { data: PaperData; replay: string | null; created_at: number; updated_at: number }>(
        'SELECT data, replay, created_at, updated_at FROM paper_exchange WHERE id = 1',
      )
      .get();
    return (
      row && { data: row.data, replay: row.replay ?? undefined, createdAt: row.created_at, updatedAt: row.updated_at }
    );
  }

  snapshot(): PaperSnapshot {
    const max = (sql: string) => this.db.prepare<[], number | null>(sql).pluck().get() ?? null;
    const latest = max(
      'SELECT MAX(t) FROM (SELECT MAX(updated_at) AS t FROM paper_orders UNION ALL SELECT MAX(time) FROM paper_fills ' +
        'UNION ALL SELECT MAX(time) FROM paper_market)',
    );
    return {
      exchange: this.exchange(),
      accounts: this.db
        .prepare<[], { user_id: number; funding: string; created_at: number }>(
          'SELECT user_id, funding, created_at FROM paper_accounts ORDER BY user_id',
        )
        .all()
        .map((r) => ({
          userId: r.user_id,
          funding: JSON.parse(r.funding) as Record<string, string>,
          createdAt: r.created_at,
        })),
      balances: this.balances(),
      // The condition is the open-orders index's (migration 10), which SQLite uses only when it reads the same.
      open: this.db
        .prepare<[], DbRecord>(
          `SELECT ${ORDER.columns} FROM paper_orders WHERE status IN ('NEW', 'PARTIALLY_FILLED') ORDER BY id`,
        )
        .all()
        .map((r) => ORDER.fromDb(r)),
      lastOrderId: max('SELECT MAX(id) FROM paper_orders') ?? 0,
      lastFillId: max('SELECT MAX(id) FROM paper_fills') ?? 0,
      symbols: this.symbols(),
      market: this.db
        .prepare<[], { symbol: string; price: number; time: number; ticker: string | null }>(
          'SELECT symbol, price, time, ticker FROM paper_market ORDER BY symbol',
        )
        .all()
        .map((r) => ({ symbol: r.symbol, price: r.price, time: r.time, ticker: json(r.ticker) })),
      latest: latest ?? undefined,
    };
  }

  /** The order of this id, if any. */
  order(id: number): PaperOrderRow | undefined {
    const row = this.orderStmt.get(id);
    return row && ORDER.fromDb(row);
  }

  /** One page of a user's orders, newest first (by creation time). */
  orderPage(userId: number, page: LedgerPage): PaperOrderRow[] {
    return this.page(ORDERS, userId, page).map((r) => ORDER.fromDb(r));
  }

  /** One page of a user's fills, newest first. */
  fillPage(userId: number, page: LedgerPage): PaperFillRow[] {
    return this.page(FILLS, userId, page).map((r) => FILL.fromDb(r));
  }

  /**
   * A page newest first: by id backwards while it finds rows, or, from a time on, through the table's time index
   * (migration 10), so a poll's read since a recent time costs what it returns, not the account's whole history.
   */
  private page(history: History, userId: number, page: LedgerPage): DbRecord[] {
    const { table, columns, time } = history;
    const where = ['user_id = @userId'];
    const params: DbRecord = { userId, size: page.size, skip: page.skip };
    const when = (condition: string, name: string, value: unknown) => {
      where.push(condition);
      params[name] = value;
    };
    if (page.symbol !== undefined) when('symbol = @symbol', 'symbol', page.symbol);
    if (page.side !== undefined) when('side = @side', 'side', page.side);
    if (page.hideCanceled && history.canceled) where.push("status != 'CANCELED'");
    if (page.from > -Infinity) when(`${time} >= @from`, 'from', page.from);
    if (page.to < Infinity) when(`${time} <= @to`, 'to', page.to);
    const index = page.from > -Infinity ? `INDEXED BY ${table}_time` : 'NOT INDEXED';
    const sql = `SELECT ${columns} FROM ${table} ${index} WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT @size OFFSET @skip`;
    // A few shapes (the filters a request gives), each prepared once: the bot's polls ask the same one each time.
    let statement = this.pageStmts.get(sql);
    if (statement === undefined) this.pageStmts.set(sql, (statement = this.db.prepare<[DbRecord], DbRecord>(sql)));
    return statement.all(params);
  }

  /** The pairs the paper exchange has orders on (it must list them again to resume). */
  symbols(): string[] {
    return this.db.prepare<[], string>('SELECT DISTINCT symbol FROM paper_orders ORDER BY symbol').pluck().all();
  }

  balances(): PaperBalanceRow[] {
    return this.db
      .prepare<[], DbRecord>(`SELECT ${BALANCE.columns} FROM paper_balances ORDER BY user_id, asset`)
      .all()
      .map((r) => BALANCE.fromDb(r));
  }

  /** The paper account at a glance (the first account: the daemon has one), undefined when there is none. */
  summary(): PaperSummary | undefined {
    const exchange = this.exchange();
    const account = this.db
      .prepare<[], { user_id: number; funding: string; created_at: number }>(
        'SELECT user_id, funding, created_at FROM paper_accounts ORDER BY user_id LIMIT 1',
      )
      .get();
    if (!exchange || !account) return undefined;
    // Kept by triggers as the simulated exchange writes (migration 5): no count over every order and fill.
    const counts = this.db
      .prepare<[number], { orders: number; open_orders: number; fills: number }>(
        'SELECT orders, open_orders, fills FROM paper_counts WHERE user_id = ?',
      )
      .get(account.user_id);
    return {
      data: exchange.data,
      since: account.created_at,
      funding: JSON.parse(account.funding) as Record<string, string>,
      balances: this.balances().filter((b) => b.userId === account.user_id),
      orders: counts?.orders ?? 0,
      openOrders: counts?.open_orders ?? 0,
      fills: counts?.fills ?? 0,
      replay: exchange.replay,
    };
  }
}
