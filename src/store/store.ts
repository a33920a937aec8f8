/** The bot's store: one database connection and the table families on it. */
import { openDatabase, type Db, type OpenDatabaseOptions } from './database.js';
import { CandleStore } from './candles.js';
import { EventLog } from './events.js';
import { FillStore } from './fills.js';
import { LastPrices } from './last-prices.js';
import { OrderJournal } from './order-journal.js';
import { PaperExchangeStore } from './paper-exchange.js';
import { StrategyStateStore } from './strategy-state.js';

export class Store {
  readonly db: Db;
  readonly orders: OrderJournal;
  readonly fills: FillStore;
  readonly state: StrategyStateStore;
  readonly events: EventLog;
  readonly prices: LastPrices;
  /** Each symbol's candles, saved by the engine across restarts. */
  readonly candles: CandleStore;
  /** The embedded simulated exchange's own tables (paper trading). */
  readonly paper: PaperExchangeStore;
  private readonly runInTransaction;

  constructor(db: Db) {
    this.db = db;
    this.orders = new OrderJournal(db);
    this.fills = new FillStore(db);
    this.state = new StrategyStateStore(db);
    this.events = new EventLog(db);
    this.prices = new LastPrices(db);
    this.candles = new CandleStore(db);
    this.paper = new PaperExchangeStore(db);
    // One transaction wrapper created once; nested calls become savepoints (better-sqlite3).
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Runs fn in one transaction: every change in it is committed together or not at all. fn must be synchronous. */
  transaction<T>(fn: () => T): T {
    return this.runInTransaction(fn) as T;
  }

  /**
   * When this database was created (its first migration), in epoch ms: what tells one journal from another
   * (a fresh paper account's, a new database), so that ids built on its row ids never repeat across them.
   */
  createdAt(): number {
    const at = this.db.prepare('SELECT applied_at FROM schema_migrations ORDER BY version LIMIT 1').pluck().get();
    return typeof at === 'number' ? at : 0;
  }

  /** Throws when the database cannot take a write now (readiness): takes the write lock and lets it go. */
  checkWritable(): void {
    this.db.exec('BEGIN IMMEDIATE');
    this.db.exec('ROLLBACK');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export function openStore(options: OpenDatabaseOptions): Store {
  return new Store(openDatabase(options));
}
