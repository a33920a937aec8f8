/** The bot's store: one database connection and the table families on it. */
import { statSync } from 'node:fs';
import type { Database as Db } from 'better-sqlite3';
import { DEFAULT_DB_PATH, isWriteFailure, openDatabase, type OpenDatabaseOptions } from './database.js';
import { CandleStore } from './candles.js';
import { EventLog } from './events.js';
import { FillStore } from './fills.js';
import { LastPrices } from './last-prices.js';
import { OrderJournal } from './order-journal.js';
import { PaperExchangeStore } from './paper-exchange.js';
import { PairRulesStore } from './pair-rules.js';
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
  /** Each traded pair's configuration as the venue last gave the daemon (for rounding what is shown). */
  readonly pairRules: PairRulesStore;
  private readonly runInTransaction;
  /** Writes the database refused since it was opened, and the last one while no commit has succeeded since. */
  writeFailures = 0;
  writeFailure: Error | undefined;
  private onCommit: (() => void)[] | undefined;
  /** The database file's identity when it was opened (none in memory). */
  private readonly file: { path: string; dev: number; ino: number } | undefined;

  constructor(db: Db, path?: string) {
    this.db = db;
    if (path !== undefined && path !== ':memory:') {
      const { dev, ino } = statSync(path);
      this.file = { path, dev, ino };
    }
    this.orders = new OrderJournal(db);
    this.fills = new FillStore(db);
    this.state = new StrategyStateStore(db);
    this.events = new EventLog(db);
    this.prices = new LastPrices(db);
    this.candles = new CandleStore(db);
    this.paper = new PaperExchangeStore(db);
    this.pairRules = new PairRulesStore(db);
    // One transaction wrapper created once; nested calls become savepoints (better-sqlite3).
    this.runInTransaction = db.transaction((fn: () => unknown) => fn());
  }

  /**
   * Runs fn in one transaction: every change in it is committed together or not at all. fn must be synchronous.
   * A write the database refuses (disk full, I/O error, read-only) is counted in `writeFailures` and kept in
   * `writeFailure` until a transaction commits again.
   */
  transaction<T>(fn: () => T): T {
    if (this.db.inTransaction) {
      // A savepoint: what it asked to run on commit is dropped with it when it rolls back.
      const mark = this.onCommit?.length ?? 0;
      try {
        return this.runInTransaction(fn) as T;
      } catch (err) {
        this.onCommit?.splice(mark);
        throw err;
      }
    }
    const onCommit: (() => void)[] = [];
    this.onCommit = onCommit;
    let result: T;
    try {
      result = this.runInTransaction(fn) as T;
    } catch (err) {
      if (isWriteFailure(err)) {
        this.writeFailures++;
        this.writeFailure = err as Error;
      }
      throw err;
    } finally {
      this.onCommit = undefined;
    }
    this.writeFailure = undefined;
    for (const run of onCommit) run();
    return result;
  }

  /** Runs `fn` once the transaction in progress commits (never when it rolls back); at once outside one. */
  whenCommitted(fn: () => void): void {
    if (this.onCommit) this.onCommit.push(fn);
    else fn();
  }

  /** A real write to the file (its header's user_version), committed: throws while the database refuses writes. */
  probeWrite(): void {
    this.transaction(() => {
      const version = this.db.pragma('user_version', { simple: true }) as number;
      this.db.pragma(`user_version = ${(version + 1) % 1_000_000}`);
    });
  }

  /**
   * Why the database file at the path opened is no longer this store's (deleted, or replaced by another
   * file), or undefined while it is. The connection would go on writing to the unlinked file, which no
   * restart ever reads: whatever it writes from then on is lost.
   */
  fileProblem(): string | undefined {
    const file = this.file;
    if (file === undefined) return undefined;
    let now: { dev: number; ino: number };
    try {
      now = statSync(file.path);
    } catch (err) {
      // Another failure (EIO, EACCES) says nothing about which file is there: the next check asks again.
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
      return `database file ${file.path} was deleted while the bot was running`;
    }
    if (now.dev !== file.dev || now.ino !== file.ino)
      return `database file ${file.path} was replaced while the bot was running (another file is at that path)`;
    return undefined;
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
  return new Store(openDatabase(options), options.path ?? DEFAULT_DB_PATH);
}
