/** The bot's store: one database connection and the table families on it. */
import { openDatabase, type Db, type OpenDatabaseOptions } from './database.js';
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
    this.paper = new PaperExchangeStore(db);
    // One transaction wrapper created once; nested calls become savepoints (better-sqlite3).
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /** Runs fn in one transaction: every change in it is committed together or not at all. fn must be synchronous. */
  transaction<T>(fn: () => T): T {
    return this.runInTransaction(fn) as T;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export function openStore(options: OpenDatabaseOptions): Store {
  return new Store(openDatabase(options));
}
