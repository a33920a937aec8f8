/**
 * The lease inside the journal (store/journal-lease.ts), on a real temp-file journal: a daemon that reaches the
 * file through a hard link (a path the lock beside the file does not see) is refused while the lease is live,
 * naming the holder and its container; a lease past its time to live is taken over, and its old holder learns
 * at its next renewal that it lost it; a lease whose holder's process is gone from this host is taken over at
 * once; a clean release leaves none.
 */
import { linkSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { JournalLockedError, type LockHolder } from '../../src/store/journal-lock.js';
import { JournalLease, leaseVerdict, readLease } from '../../src/store/journal-lease.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/store.js';
import { writeOldJournal } from '../support/old-journal.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('journal-lease');
let n = 0;

const holder = (host: string, pid: number, container?: string): LockHolder => ({
  pid,
  host,
  ...(container === undefined ? {} : { container }),
  since: '2026-01-01T00:00:00.000Z',
});

/** A journal at a fresh path, and a hard link to it in another folder. */
function journalWithLink() {
  const path = join(dir, `bot-${++n}.db`);
  const store = openStore({ path, clock: { now: () => 0 } });
  const other = mkdtempSync(join(dir, 'other-'));
  const link = join(other, 'alias.db');
  linkSync(path, link);
  return { path, link, store };
}

describe('the journal lease', () => {
  it('refuses a daemon through a hard link while the holder heartbeats; a released lease is gone', () => {
    const { link, store, path } = journalWithLink();
    let now = 1_000_000;
    const lease = JournalLease.take(store.db, path, holder('vm', 1, 'container 3f2a9c1b7d0e'), 30_000, () => now);
    // The row is in the file itself: read through the other name, whose WAL is not the holder's.
    expect(readLease(link)).toMatchObject({ host: 'vm', pid: 1, container: 'container 3f2a9c1b7d0e', heartbeat: now });
    now += 29_000;
    expect(lease.renew()).toBe(true);
    now += 29_000;
    let refusal: unknown;
    try {
      leaseVerdict(link, readLease(link), holder('other-host', 7), now);
    } catch (err) {
      refusal = err;
    }
    expect(refusal).toBeInstanceOf(JournalLockedError);
    expect((refusal as JournalLockedError).message).toBe(
      `${link} is in use by another bot: pid 1 on host vm (container 3f2a9c1b7d0e) since 2026-01-01T00:00:00.000Z (its lease in the journal has a heartbeat 29 s old and expires at ${new Date(now + 1_000).toISOString()} unless renewed); one daemon per journal: stop that one first, or set DB_PATH to another file`,
    );
    // The token is the holder's alone: not in what a refused daemon is told.
    expect(JSON.stringify((refusal as JournalLockedError).holder)).not.toContain('token');
    lease.release();
    expect(readLease(link)).toBeUndefined();
    store.close();
  });

  it('is taken over once expired; the old holder learns it at its next renewal', () => {
    const { link, store, path } = journalWithLink();
    let now = 2_000_000;
    const old = JournalLease.take(store.db, path, holder('node-a', 1), 5_000, () => now);
    now += 5_000;
    const verdict = leaseVerdict(link, readLease(link), holder('node-b', 2), now);
    expect(verdict.takeover).toMatch(/^the lease of pid 1 on host node-a since .* expired 0 s ago/);
    const second = openStore({ path: link, clock: { now: () => 0 } });
    const taken = JournalLease.take(second.db, link, holder('node-b', 2), 5_000, () => now);
    expect(old.renew()).toBe(false);
    expect(taken.renew()).toBe(true);
    taken.release();
    second.close();
    store.close();
  });

  it("is taken over at once when its holder's process is gone from this host and container", () => {
    const { store, path } = journalWithLink();
    const now = 3_000_000;
    // A pid no process has: the lease of a daemon killed -9 on this host.
    JournalLease.take(store.db, path, holder('vm', 2 ** 22 + 17), 30_000, () => now);
    expect(leaseVerdict(path, readLease(path), holder('vm', process.pid), now + 1_000).takeover).toMatch(
      /that process is gone from this host$/,
    );
    // Alive (this very process, as another holder would be), it is refused.
    JournalLease.take(store.db, path, holder('vm', process.ppid), 30_000, () => now + 2_000);
    expect(() => leaseVerdict(path, readLease(path), holder('vm', process.pid), now + 3_000)).toThrow(
      JournalLockedError,
    );
    store.close();
  });

  it('is migration 9: none before it; a journal whose lease was made outside the migrations keeps it', () => {
    const before = join(dir, 'schema-8.db');
    writeOldJournal(before, { fills: 1, schema: 8, venue: 'live' });
    expect(readLease(before)).toBeUndefined();
    // The daemons of 79e10e2 made the table themselves, on a journal of schema 8, and left a row there.
    const made = join(dir, 'made-outside.db');
    writeOldJournal(made, { fills: 1, schema: 8, venue: 'live' });
    const old = new Database(made);
    old.exec(
      'CREATE TABLE journal_lease (id INTEGER PRIMARY KEY CHECK (id = 1), token TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL, container TEXT, since TEXT NOT NULL, heartbeat INTEGER NOT NULL, ttl_ms INTEGER NOT NULL)',
    );
    old
      .prepare("INSERT INTO journal_lease VALUES (1, 't', 5, 'vm', NULL, '2026-01-01T00:00:00.000Z', 1000, 30000)")
      .run();
    old.close();
    for (const path of [before, made]) {
      const store = openStore({ path, clock: { now: () => 0 } });
      expect(store.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: LATEST_VERSION });
      store.close();
    }
    expect(readLease(made)).toMatchObject({ host: 'vm', pid: 5, heartbeat: 1000 });
    const store = openStore({ path: before, clock: { now: () => 0 } });
    JournalLease.take(store.db, before, holder('vm', 1), 30_000, () => 5_000).release();
    store.close();
  });
});
