/**
 * Opening the bot's SQLite database: one connection per process (the only writer), WAL, foreign keys,
 * migrations applied on open, and a refusal to touch a database written by a newer version of the bot, naming
 * the backup to restore. The daemon migrates before it opens (journal-upgrade.ts: a backup first, in a worker
 * thread, its progress shown); what opens a database after that finds nothing to migrate.
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
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

/** How far a migration's data upgrade has gone (rows done of total), for a start that reports its progress. */
export type MigrationProgress = (done: number, total: number) => void;

function apply(db: Db, migration: Migration, now: number, progress: MigrationProgress): void {
  db.transaction(() => {
    db.exec(migration.sql);
    migration.upgrade?.(db, progress);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      migration.version,
      migration.name,
      now,
    );
  })();
}

/** What a migration run tells as it goes (the daemon's start shows it on /readyz and in the log). */
export interface MigrationListener {
  /** A migration begins. */
  migrating?(migration: Migration): void;
  /** Its data upgrade has done `done` of `total` rows. */
  progress?(migration: Migration, done: number, total: number): void;
}

/** The database's schema version: 0 for a new one. */
export function schemaVersion(db: Db): number {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  return appliedVersion(db);
}

/** Applies the migrations after the database's version, each in its own transaction. */
export function migrate(db: Db, now: number, listener: MigrationListener = {}): void {
  const current = schemaVersion(db);
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    listener.migrating?.(migration);
    apply(db, migration, now, (done, total) => listener.progress?.(migration, done, total));
  }
}

/**
 * `bot.db` at schema 4, backed up before its migration to schema 6: `bot.schema-4-before-6.db` beside it (a
 * path without `.db` gets `.schema-4-before-6` appended).
 */
export function backupPath(path: string, from: number, to: number): string {
  const tag = `schema-${from}-before-${to}`;
  return path.endsWith('.db') ? `${path.slice(0, -3)}.${tag}.db` : `${path}.${tag}`;
}

/** The backups the migrations of the database at `path` left beside it, the newest schema first. */
export function migrationBackups(path: string): { path: string; from: number; to: number }[] {
  const name = basename(path);
  const [head, tail] = name.endsWith('.db') ? [`${name.slice(0, -3)}.schema-`, '.db'] : [`${name}.schema-`, ''];
  let files: string[];
  try {
    files = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const found = [];
  for (const file of files) {
    if (!file.startsWith(head) || !file.endsWith(tail)) continue;
    const m = /^(\d+)-before-(\d+)$/.exec(file.slice(head.length, file.length - tail.length));
    if (m) found.push({ path: join(dirname(path), file), from: Number(m[1]), to: Number(m[2]) });
  }
  return found.sort((a, b) => b.from - a.from || b.to - a.to);
}

/**
 * A database of a schema this version does not know: which backup to restore (the newest a migration made at a
 * schema this version knows), and how, or that there is none.
 */
export function newerSchema(path: string, version: number): DatabaseError {
  const backup = migrationBackups(path).find((b) => b.from <= LATEST_VERSION);
  const restore =
    backup === undefined
      ? `no backup a migration made is beside it (${backupPath(basename(path), LATEST_VERSION, version)} or older)`
      : `or restore the backup made before its migration: stop the bot, then mv ${backup.path} ${path} ` +
        `(delete ${path}-wal and ${path}-shm if present); what was recorded since that backup is not in it`;
  return new DatabaseError(
    'E_DB_VERSION',
    `database ${path} has schema version ${version}, newer than this bot knows (${LATEST_VERSION}): a newer version ` +
      `of the bot migrated it. Run that version, ${restore}`,
    { context: { path, version, known: LATEST_VERSION, backup: backup?.path } },
  );
}

/** A connection to the database at `path` as the bot uses it (WAL, synchronous, foreign keys), not migrated. */
export function connect(path: string, options: Omit<OpenDatabaseOptions, 'path' | 'clock'> = {}): Db {
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
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Opens (or creates) the database and brings its schema up to date, or refuses one of a newer schema. */
export function openDatabase(options: OpenDatabaseOptions): Db {
  const path = options.path ?? DEFAULT_DB_PATH;
  const db = connect(path, options);
  try {
    const current = schemaVersion(db);
    if (current > LATEST_VERSION) throw newerSchema(path, current);
    migrate(db, options.clock.now());
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
