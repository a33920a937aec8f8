/**
 * The lease inside the journal: who uses it (holder, host, container or pod, since) and a heartbeat, in a row of
 * the journal itself. The lock beside the file (journal-lock.ts) keeps out a second daemon that names the file by
 * the same real path on the same machine; this row is read by any daemon that opens the file, whatever it came
 * through: a hard link, another mount of the volume, another machine on a network filesystem. A daemon refuses
 * a journal whose lease another holds with a heartbeat younger than the lease's time to live; a lease left by
 * kill -9 is taken over once it has expired (at once when its holder was on this host, in this container, and
 * its process is gone: the lock beside the file was free, and the pid says it is not running).
 *
 * The row is read before the journal is opened for writing (no migration, no paper account touched), written
 * once the journal is open, renewed on a heartbeat and deleted at a clean stop. Each write is checkpointed into
 * the file itself (WAL frames live in a `-wal` file named by path, which a hard link's name does not see). A
 * renewal that finds the row is no longer its own means another daemon took the journal over (this one was
 * frozen past its lease): the caller stops. The table is migration 9's: a journal of an older schema has none
 * (nobody holds it) until the daemon that takes it has migrated it.
 */
import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import type { Database as Db } from 'better-sqlite3';
import { holderText, JournalLockedError, type LockHolder } from './journal-lock.js';

/** A lease's default time to live: a holder silent this long is taken for dead. */
export const DEFAULT_LEASE_MS = 30_000;

export interface LeaseRow extends LockHolder {
  token: string;
  /** The holder's last heartbeat (epoch ms, the wall clock's). */
  heartbeat: number;
  ttlMs: number;
}

interface DbLease {
  token: string;
  pid: number;
  host: string;
  container: string | null;
  since: string;
  heartbeat: number;
  ttl_ms: number;
}

const SELECT = 'SELECT token, pid, host, container, since, heartbeat, ttl_ms FROM journal_lease WHERE id = 1';

function fromDb(row: DbLease | undefined): LeaseRow | undefined {
  if (row === undefined) return undefined;
  return {
    token: row.token,
    pid: row.pid,
    host: row.host,
    ...(row.container === null ? {} : { container: row.container }),
    since: row.since,
    heartbeat: row.heartbeat,
    ttlMs: row.ttl_ms,
  };
}

/** The journal's lease as the file holds it, read without writing anything; undefined without a file or a lease. */
export function readLease(dbPath: string): LeaseRow | undefined {
  if (dbPath === ':memory:') return undefined;
  try {
    if (statSync(dbPath).size === 0) return undefined;
  } catch {
    return undefined;
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'journal_lease'").get();
    return table === undefined ? undefined : fromDb(db.prepare(SELECT).get() as DbLease | undefined);
  } catch {
    // Not a journal this can read: opening it for real says what is wrong.
    return undefined;
  } finally {
    db?.close();
  }
}

/** Whether process `pid` runs on this machine (in this pid namespace). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether `me` may take the journal at `now`: undefined when the lease is free, its own, expired, or its holder's
 * process is gone from this host and container (then `takeover` says why); else a JournalLockedError naming the
 * holder and when its lease expires.
 */
export function leaseVerdict(
  dbPath: string,
  lease: LeaseRow | undefined,
  me: LockHolder,
  now: number,
): { takeover: string | undefined } {
  if (lease === undefined) return { takeover: undefined };
  const expiresAt = lease.heartbeat + lease.ttlMs;
  if (expiresAt <= now)
    return {
      takeover: `the lease of ${holderText(lease)} expired ${Math.round((now - expiresAt) / 1000)} s ago (last heartbeat ${new Date(lease.heartbeat).toISOString()})`,
    };
  const here = lease.host === me.host && lease.container === me.container;
  if (here && (lease.pid === me.pid || !running(lease.pid)))
    return { takeover: `the lease of ${holderText(lease)}: that process is gone from this host` };
  throw new JournalLockedError(dbPath, lease, {
    lease: `its lease in the journal has a heartbeat ${Math.max(0, Math.round((now - lease.heartbeat) / 1000))} s old and expires at ${new Date(expiresAt).toISOString()} unless renewed`,
  });
}

/** The lease this daemon holds in its open journal. */
export class JournalLease {
  private released = false;
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly db: Db,
    private readonly token: string,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * Writes `me`'s lease into the open journal, unless another daemon wrote a live one since it was read (two
   * starts at once through different paths): then a JournalLockedError, and nothing written.
   */
  static take(db: Db, dbPath: string, me: LockHolder, ttlMs: number, now: () => number): JournalLease {
    const token = `${me.host}/${me.pid}/${me.since}/${Math.random().toString(36).slice(2)}`;
    db.transaction(() => {
      leaseVerdict(dbPath, fromDb(db.prepare(SELECT).get() as DbLease | undefined), me, now());
      db.prepare(
        'INSERT OR REPLACE INTO journal_lease (id, token, pid, host, container, since, heartbeat, ttl_ms) VALUES (1, ?, ?, ?, ?, ?, ?, ?)',
      ).run(token, me.pid, me.host, me.container ?? null, me.since, now(), ttlMs);
    }).immediate();
    const lease = new JournalLease(db, token, ttlMs, now);
    lease.checkpoint();
    return lease;
  }

  /** How often the heartbeat renews it: a third of its time to live. */
  get renewEveryMs(): number {
    return Math.max(250, Math.floor(this.ttlMs / 3));
  }

  /**
   * Renews the heartbeat. False when the row is another daemon's now (it took the journal over). A write the
   * journal refuses (a full disk) is thrown: the caller retries at the next beat.
   */
  renew(): boolean {
    if (this.released || !this.db.open) return true;
    const changed = this.db
      .prepare('UPDATE journal_lease SET heartbeat = ? WHERE id = 1 AND token = ?')
      .run(this.now(), this.token).changes;
    if (changed === 0) return false;
    this.checkpoint();
    return true;
  }

  /**
   * Renews it on a timer (which keeps no process alive) until released. `lost` is called once, naming the new
   * holder, when another daemon has taken it over; `failed` with a renewal the journal refused (tried again).
   */
  keep(lost: (why: string) => void, failed: (err: unknown) => void): void {
    this.timer = setInterval(() => {
      try {
        if (this.renew()) return;
        clearInterval(this.timer);
        const now = fromDb(this.db.prepare(SELECT).get() as DbLease | undefined);
        lost(
          `the journal's lease is held by ${now === undefined ? 'nobody' : holderText(now)} now, not by this daemon`,
        );
      } catch (err) {
        failed(err);
      }
    }, this.renewEveryMs);
    this.timer.unref();
  }

  /** A clean stop: the lease goes, so the next daemon, by any path, starts at once. */
  release(): void {
    clearInterval(this.timer);
    if (this.released || !this.db.open) return;
    this.released = true;
    try {
      this.db.prepare('DELETE FROM journal_lease WHERE id = 1 AND token = ?').run(this.token);
      this.checkpoint();
    } catch {
      // A journal that refuses the write keeps the row: it expires.
    }
  }

  /** Copies the WAL into the file, so the row is read through any name of it. */
  private checkpoint(): void {
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }
}
