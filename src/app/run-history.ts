/**
 * Which kind of run a database belongs to. Each daemon start is recorded ('daemon-started': mode, venue, clock, pid)
 * and checked against the previous one, because a journal only makes sense against the venue that holds its
 * orders: live and paper never share a database. The embedded simulated exchange keeps its own state in the
 * same database (paper-ledger.ts), so a paper run resumes the previous one; the database is moved aside
 * (archived next to it, the newest PAPER_ARCHIVES_KEPT kept) only when a fresh start is asked for, or when it
 * holds a paper journal from before the exchange kept its state (its orders are gone with that exchange).
 *
 * A start is recorded only once the daemon runs (`started`); a start that fails (`abandon`) leaves the database
 * as it was: a database it made is removed, one it archived is put back, an existing one is only closed (a
 * journal of an older version keeps the migrations applied to it: an upgrade the next start makes anyway).
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { ClockReading } from '../ports/clock.js';
import { openStore, type Store } from '../store/store.js';

export interface RunIdentity {
  mode: 'paper' | 'live';
  /** The exchange's URL live; 'embedded' for the in-process simulated exchange. */
  venue: string;
  /**
   * The venue's clock: 'wall' (live, paper on live prices), 'data' (paper on recordings: the recording's time,
   * which `status` then tells beside the wall's). Not part of what must match between runs.
   */
  clock?: 'wall' | 'data';
}

export interface RunStoreOptions {
  /** Archive a paper database and start a new paper account (PAPER_FRESH, `bot run --fresh`). */
  fresh?: boolean;
  /** Archives of this database kept after archiving (the oldest beyond are deleted); default 5. */
  archivesKept?: number;
}

export interface RunStore {
  store: Store;
  /** Where the previous database was moved, when it was. */
  archivedTo: string | undefined;
  /** Why: asked for (fresh), or a paper journal whose exchange state was never kept (legacy). */
  archivedBecause: 'fresh' | 'legacy' | undefined;
  /**
   * The daemon runs: records this start ('daemon-started', with `began`: the journal's last event id and fill
   * sequence number when the start began, where a restart's notifications resume by sequence) and deletes the
   * archives beyond PAPER_ARCHIVES_KEPT. Returns the archives deleted.
   */
  started(began: { event: number; fill: number }): string[];
  /** The start failed: closes the store and leaves the database as it was before openRunStore. */
  abandon(): void;
}

const hasOrders = (store: Store) => store.orders.instances().length > 0 || store.orders.active().length > 0;

/** The previous run's identity: from its start event, else (no event, but orders) unknown. */
function previousRun(store: Store): RunIdentity | 'unknown' | undefined {
  const [last] = store.events.list({ kinds: ['daemon-started'], limit: 1 });
  if (last) {
    const { mode, venue } = last.data;
    if ((mode === 'paper' || mode === 'live') && typeof venue === 'string') return { mode, venue };
  }
  return hasOrders(store) ? 'unknown' : undefined;
}

const STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

const stampOf = (ms: number) => new Date(ms).toISOString().replace(/[:.]/g, '-');

/** `bot.db` -> `bot.<stamp>.db`; a path without .db gets `.<stamp>` appended. */
function archiveName(path: string, stamp: string): string {
  return path.endsWith('.db') ? `${path.slice(0, -3)}.${stamp}.db` : `${path}.${stamp}`;
}

/** The archives of `path` in its folder, oldest first (their stamps sort as their times). */
export function listArchives(path: string): string[] {
  const dir = dirname(path);
  const name = basename(path);
  const [head, tail] = name.endsWith('.db') ? [`${name.slice(0, -3)}.`, '.db'] : [`${name}.`, ''];
  return readdirSync(dir)
    .filter((f) => {
      if (!f.startsWith(head) || !f.endsWith(tail)) return false;
      return STAMP.test(f.slice(head.length, f.length - tail.length));
    })
    .sort()
    .map((f) => join(dir, f));
}

/** A database's files: the file, and the WAL and shared memory a crash may leave. */
const DB_SUFFIXES = ['', '-wal', '-shm'];

/** Moves a database's files from `from` to `to`. */
function moveDatabase(from: string, to: string): void {
  for (const suffix of DB_SUFFIXES) if (existsSync(from + suffix)) renameSync(from + suffix, to + suffix);
}

/** Moves the database (and any WAL left by a crash) aside; returns where. */
function archive(path: string, now: number): string {
  let at = now;
  // Two archives in one millisecond (scripts, tests) must not overwrite each other.
  while (existsSync(archiveName(path, stampOf(at)))) at++;
  const archivedTo = archiveName(path, stampOf(at));
  moveDatabase(path, archivedTo);
  return archivedTo;
}

/** Deletes the archives of `path` beyond the newest `kept`; returns them. */
function pruneArchives(path: string, kept: number): string[] {
  const all = listArchives(path);
  const deleted = all.slice(0, Math.max(0, all.length - kept));
  for (const old of deleted) for (const suffix of DB_SUFFIXES) rmSync(old + suffix, { force: true });
  return deleted;
}

/**
 * Opens the store for a run of `identity` at `path`: refuses a database of the other mode, archives a paper
 * one when asked to (or when it predates the paper exchange's ledger). The start is recorded by `started`.
 */
export function openRunStore(
  path: string,
  identity: RunIdentity,
  clock: ClockReading,
  options: RunStoreOptions = {},
): RunStore {
  const onDisk = path !== ':memory:';
  const existed = onDisk && existsSync(path);
  let store = openStore({ path, clock });
  let archivedTo: string | undefined;
  let archivedBecause: RunStore['archivedBecause'];
  const previous = previousRun(store);
  const previousMode = previous === 'unknown' ? undefined : previous?.mode;
  if (previousMode !== undefined && previousMode !== identity.mode) {
    store.close();
    throw new ConfigError([
      `DB_PATH: ${path} holds ${previousMode} trading; a ${identity.mode} run needs its own database ` +
        `(set DB_PATH to another file, e.g. data/${identity.mode}.db)`,
    ]);
  }
  if (identity.venue === 'embedded' && path !== ':memory:') {
    const kept = store.paper.exists();
    // Orders journaled against an exchange whose state was not kept (a version before the ledger) are gone
    // with it; a run that stopped before its paper account was created left nothing to lose.
    if (previous !== undefined && !kept && hasOrders(store)) archivedBecause = 'legacy';
    else if (options.fresh && (previous !== undefined || kept)) archivedBecause = 'fresh';
    if (archivedBecause !== undefined) {
      // The clean close checkpoints the WAL and removes it: the database is one file again.
      store.close();
      archivedTo = archive(path, clock.now());
      store = openStore({ path, clock });
    }
  }
  const opened = store;
  return {
    store,
    archivedTo,
    archivedBecause,
    started(began) {
      opened.events.record(clock.now(), undefined, 'daemon-started', { ...identity, pid: process.pid, began });
      return archivedTo === undefined ? [] : pruneArchives(path, options.archivesKept ?? 5);
    },
    abandon() {
      opened.close();
      if (!onDisk) return;
      // What this start made goes; what it moved aside comes back.
      if (archivedTo !== undefined || !existed)
        for (const suffix of DB_SUFFIXES) rmSync(path + suffix, { force: true });
      if (archivedTo !== undefined) moveDatabase(archivedTo, path);
    },
  };
}
