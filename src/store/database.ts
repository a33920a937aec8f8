/**
 * Opening the bot's SQLite database: one connection per process (the only writer), WAL, foreign keys,
 * migrations applied on open, and a refusal to touch a database written by a newer version of the bot.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { BotError } from '../errors.js';
import type { ClockReading } from '../ports/clock.js';
import { LATEST_VERSION, MIGRATIONS, type Migration } from './migrations.js';

type Db = Database.Database;

export const DEFAULT_DB_PATH = 'data/bot.db';

export interface OpenDatabaseOptions {
  /** File path, or ':memory:' (tests, backtests). Default data/bot.db. */
  path?: string;
  clock: ClockReading;
  /**
   * FULL (default): every commit is fsynced before it returns, so a journal row written before an order is
   * sent survives a power cut (invariant 2). WAL with NORMAL could lose the last commits on power loss:
   * exactly the PENDING row that proves an order may exist. The cost is one fsync per commit, which orders
   * (seconds apart) can afford; a backtest uses ':memory:' where it does not apply.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /** How long a statement waits for a lock held by another connection (e.g. a `status` reader). */
  busyTimeoutMs?: number;
}

export class DatabaseError extends BotError {}

/** SQLite result codes that mean the file refused a write (disk full, I/O error, read-only, …), not a bug. */
const WRITE_FAILURES = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN|CORRUPT|NOTADB|PERM|BUSY|LOCKED)/;

/** The database refused a write (better-sqlite3's SqliteError carries SQLite's extended result code). */
export function isWriteFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Database.SqliteError && typeof code === 'string' && WRITE_FAILURES.test(code);
}

function appliedVersion(db: Db): number {
  const row = db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null };
  return row.v ?? 0;
}

function apply(db: Db, migration: Migration, now: number): void {
  db.transaction(() => {
    db.exec(migration.sql);
    migration.upgrade?.(db);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      migration.version,
      migration.name,
      now,
    );
  })();
}

export function openDatabase(options: OpenDatabaseOptions): Db {
  const path = options.path ?? DEFAULT_DB_PATH;
  const memory = path === ':memory:';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  let db: Db;
  try {
    db = new Database(path);
  } catch (err) {
    throw new DatabaseError('E_DB_OPEN', `cannot open database ${path}: ${(err as Error).message}`, {
      cause: err,
      context: { path },
    });
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (!memory) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (String(mode).toLowerCase() !== 'wal')
        throw new DatabaseError(
          'E_DB_OPEN',
          `database ${path}: cannot switch to WAL (journal_mode is ${String(mode)})`,
        );
    }
    db.pragma(`synchronous = ${options.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = ON');
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
    );
    const current = appliedVersion(db);
    if (current > LATEST_VERSION) {
      throw new DatabaseError(
        'E_DB_VERSION',
        `database ${path} has schema version ${current}, newer than this bot knows (${LATEST_VERSION}): ` +
          'run the newer bot, or restore a backup made by this version',
        { context: { path, version: current, known: LATEST_VERSION } },
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version > current) apply(db, migration, options.clock.now());
    }
    return db;
  } catch (err) {
    db.close();
    if (err instanceof DatabaseError) throw err;
    throw new DatabaseError('E_DB_OPEN', `database ${path}: ${(err as Error).message}`, {
      cause: err,
      context: { path },
    });
  }
}
