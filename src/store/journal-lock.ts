/**
 * One daemon per journal. The daemon holds an exclusive lock for as long as it runs, taken before the journal
 * (and the paper account in it) is opened or migrated. The lock is SQLite's own: a small database beside the
 * real journal file (`<real path>.lock`: a symlink, or a path through a symlinked folder, names the file it
 * points to, so every path to one file takes one lock) in which the holder keeps a write transaction open
 * (`BEGIN IMMEDIATE`: SQLite's RESERVED lock, an fcntl byte-range lock on the file). Another writer is refused
 * at once; readers still read, so a refused daemon can name the holder (pid, host, container, since) from the
 * row the holder wrote. A hard link, another mount or another machine reaches the file by a path this lock does
 * not see: the lease inside the journal (journal-lease.ts) answers those.
 *
 * Why this lock: it is an OS lock (POSIX advisory, fcntl), so the kernel drops it when the holding process
 * dies, kill -9 included: no stale lock, no clean-up, no lease to expire. It needs no native addon beyond
 * better-sqlite3, which the journal already uses, and SQLite already knows the fcntl pitfalls (a close of
 * another descriptor of the same file dropping the lock; two connections in one process). It works across
 * containers sharing a volume on one host (one kernel). On a network filesystem it is only as good as that
 * filesystem's fcntl locking: NFSv4 honours it (a dead client's lock lasts until its lease expires, about
 * 90 s), NFSv3 needs lockd, some SMB and FUSE mounts ignore it; SQLite itself advises against network
 * filesystems for the journal. docs/operations.md says more.
 *
 * The holder row and the lock cannot be taken in one step (a commit releases the lock), so a candidate writes
 * its row, takes the lock, then checks that the row is still its own; another candidate slipped in between
 * means a release and a new try (bounded): whoever holds the lock at the end is the one the row names.
 */
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { BotError } from '../errors.js';

export interface LockHolder {
  pid: number;
  host: string;
  /** The container or pod it runs in (`container 3f2a9c1b7d0e`, `pod trading/bot-0`), when in one. */
  container?: string;
  /** When it took the lock (ISO 8601). */
  since: string;
}

/** A holder in words: `pid 1 on host vm (container 3f2a9c1b7d0e) since …`. */
export function holderText(holder: LockHolder): string {
  const where = holder.container === undefined ? '' : ` (${holder.container})`;
  return `pid ${holder.pid} on host ${holder.host}${where} since ${holder.since}`;
}

/** Another daemon holds the journal: nothing was opened. */
export class JournalLockedError extends BotError {
  readonly holder: LockHolder | undefined;

  constructor(
    readonly path: string,
    holder: LockHolder | undefined,
    /** `lease`: what the lease inside the journal says (refused by it rather than by the lock beside the file). */
    more: { lease?: string } = {},
  ) {
    const who = holder === undefined ? 'another bot (it has not said who yet)' : `another bot: ${holderText(holder)}`;
    const lease = more.lease === undefined ? '' : ` (${more.lease})`;
    super(
      'E_DB_LOCKED',
      `${path} is in use by ${who}${lease}; one daemon per journal: stop that one first, or set DB_PATH to another file`,
      { context: { path, holder } },
    );
    this.holder =
      holder === undefined
        ? undefined
        : {
            pid: holder.pid,
            host: holder.host,
            ...(holder.container === undefined ? {} : { container: holder.container }),
            since: holder.since,
          };
  }
}

export interface JournalLock {
  readonly holder: LockHolder;
  /** Releases the lock (idempotent). */
  release(): void;
}

/**
 * The journal's real path: symlinks followed (the file's, and its folders'), also for a file not made yet (a
 * dangling symlink names where it will be). Every path that names one file gives the same answer.
 */
export function realJournalPath(dbPath: string, depth = 0): string {
  try {
    return realpathSync(dbPath);
  } catch {
    // Not there (yet): a dangling symlink is followed, else the folder is resolved and the name kept.
    try {
      if (depth < 40 && lstatSync(dbPath).isSymbolicLink())
        return realJournalPath(resolve(dirname(dbPath), readlinkSync(dbPath)), depth + 1);
    } catch {
      // Nothing at that path at all.
    }
    let folder: string;
    try {
      folder = realpathSync(dirname(dbPath));
    } catch {
      folder = resolve(dirname(dbPath));
    }
    return join(folder, basename(dbPath));
  }
}

/** The lock file of a journal: beside the real file, whatever path names it. */
export const lockPathOf = (dbPath: string) => `${realJournalPath(dbPath)}.lock`;

/** The steps of an acquisition, for the test that drives two candidates through them in a chosen order. */
export type LockStep = 'row written' | 'lock taken';

export interface AcquireOptions {
  /** Who is asking (default: this process, this host, now). */
  holder?: LockHolder;
  /** Called after each step (tests interleave candidates here). */
  onStep?: (step: LockStep) => void;
  /** Tries before giving up when other candidates keep slipping in (default 20). */
  attempts?: number;
}

const isBusy = (err: unknown) => (err as { code?: string }).code?.startsWith('SQLITE_BUSY') === true;

interface HolderRow {
  token: string;
  pid: number;
  host: string;
  container: string | null;
  since: string;
}

/** Reads who holds (or last held) the lock; waits out a holder's commit in progress. */
function readHolder(db: Database.Database): HolderRow | undefined {
  db.pragma('busy_timeout = 2000');
  try {
    return db.prepare('SELECT token, pid, host, container, since FROM lock_holder WHERE id = 1').get() as
      HolderRow | undefined;
  } catch {
    // A lock file of an earlier version (its table named no container): the holder has not said who it is.
    return undefined;
  } finally {
    db.pragma('busy_timeout = 0');
  }
}

const publicHolder = (row: HolderRow | undefined): LockHolder | undefined =>
  row === undefined
    ? undefined
    : {
        pid: row.pid,
        host: row.host,
        ...(row.container === null ? {} : { container: row.container }),
        since: row.since,
      };

/**
 * Takes the lock of the journal at `dbPath`, or throws JournalLockedError naming the holder. Nothing else is
 * opened; ':memory:' needs no lock.
 */
export function acquireJournalLock(dbPath: string, options: AcquireOptions = {}): JournalLock {
  const me = options.holder ?? { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  if (dbPath === ':memory:') return { holder: me, release: () => undefined };
  const path = lockPathOf(dbPath);
  const db = new Database(path);
  const refuse = (): never => {
    const holder = publicHolder(readHolder(db));
    db.close();
    throw new JournalLockedError(dbPath, holder);
  };
  try {
    db.pragma('busy_timeout = 0');
    // A rollback journal (not WAL): its RESERVED lock lets readers in while it excludes every other writer.
    db.pragma('journal_mode = DELETE');
    db.exec(
      'CREATE TABLE IF NOT EXISTS lock_holder (id INTEGER PRIMARY KEY CHECK (id = 1), token TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, container TEXT, since TEXT NOT NULL)',
    );
  } catch (err) {
    if (isBusy(err)) refuse();
    db.close();
    throw err;
  }
  const token = randomUUID();
  const attempts = options.attempts ?? 20;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      db.prepare(
        'INSERT OR REPLACE INTO lock_holder (id, token, pid, host, container, since) VALUES (1, ?, ?, ?, ?, ?)',
      ).run(token, me.pid, me.host, me.container ?? null, me.since);
      options.onStep?.('row written');
      db.exec('BEGIN IMMEDIATE');
      options.onStep?.('lock taken');
    } catch (err) {
      if (isBusy(err)) refuse();
      db.close();
      throw err;
    }
    if (readHolder(db)?.token === token) {
      let released = false;
      return {
        holder: me,
        release: () => {
          if (released) return;
          released = true;
          // Closing the connection ends the transaction and drops the lock; the row stays, naming the last holder.
          db.close();
        },
      };
    }
    // Another candidate wrote its row between ours and our lock: let go, and try again.
    db.exec('ROLLBACK');
  }
  return refuse();
}
