/**
 * Which kind of run a database belongs to. Each daemon start is recorded ('daemon-started': mode, venue, pid)
 * and checked against the previous one, because a journal only makes sense against the venue that holds its
 * orders: live and paper never share a database, and the embedded simulated exchange starts empty every
 * run, so a previous paper run's journal is moved aside rather than reconciled against orders that are gone.
 */
import { existsSync, renameSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import { openStore, type Store } from '../store/store.js';

export interface RunIdentity {
  mode: 'paper' | 'live';
  /** The exchange's URL live; 'embedded' for the in-process simulated exchange. */
  venue: string;
}

/** The previous run's identity: from its start event, else (no event, but orders) unknown. */
function previousRun(store: Store): RunIdentity | 'unknown' | undefined {
  const [last] = store.events.list({ kinds: ['daemon-started'], limit: 1 });
  if (last) {
    const { mode, venue } = last.data;
    if ((mode === 'paper' || mode === 'live') && typeof venue === 'string') return { mode, venue };
  }
  return store.orders.instances().length > 0 || store.orders.active().length > 0 ? 'unknown' : undefined;
}

function archiveName(path: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[:.]/g, '-');
  return path.endsWith('.db') ? `${path.slice(0, -3)}.${stamp}.db` : `${path}.${stamp}`;
}

/**
 * Opens the store for a run of `identity` at `path`: refuses a database of the other mode, moves aside one
 * of a previous embedded paper run (returning where to), and records this start.
 */
export function openRunStore(
  path: string,
  identity: RunIdentity,
  clock: Clock,
): { store: Store; archivedTo: string | undefined } {
  let store = openStore({ path, clock });
  let archivedTo: string | undefined;
  const previous = previousRun(store);
  if (previous !== undefined) {
    const previousMode = previous === 'unknown' ? undefined : previous.mode;
    if (previousMode !== undefined && previousMode !== identity.mode) {
      store.close();
      throw new ConfigError([
        `DB_PATH: ${path} holds ${previousMode} trading; a ${identity.mode} run needs its own database ` +
          `(set DB_PATH to another file, e.g. data/${identity.mode}.db)`,
      ]);
    }
    if (identity.venue === 'embedded' && path !== ':memory:') {
      store.close();
      archivedTo = archiveName(path, clock.now());
      // The WAL was checkpointed and removed by the clean close: the database is one file again.
      renameSync(path, archivedTo);
      for (const suffix of ['-wal', '-shm'])
        if (existsSync(path + suffix)) renameSync(path + suffix, archivedTo + suffix);
      store = openStore({ path, clock });
    }
  }
  store.events.record(clock.now(), undefined, 'daemon-started', { ...identity, pid: process.pid });
  return { store, archivedTo };
}
