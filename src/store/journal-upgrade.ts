/**
 * The daemon's journal brought up to date before it is opened. A new or current one: nothing to do. A newer
 * one: refused, naming the backup to restore (database.ts newerSchema). An older one: backed up beside it, named
 * for the two versions (bot.schema-4-before-6.db), then migrated; both in a worker thread (migration-worker.ts),
 * so the daemon's listeners keep answering (a journal of 300,000 fills takes seconds to migrate), each step told
 * to `onStep` as it goes (the daemon shows it on /readyz and in the log).
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { type ErrorCode } from '../errors.js';
import { workerEntry } from '../ops/worker-entry.js';
import { backupPath, connect, DatabaseError, newerSchema, schemaVersion } from './database.js';
import { LATEST_VERSION } from './migrations.js';

/** What the worker is given. */
export interface UpgradeTask {
  path: string;
  /** When the migrations are applied (schema_migrations.applied_at). */
  now: number;
  from: number;
}

export type UpgradeStep =
  /** The journal is being copied to `path` (SQLite's online backup). */
  | { kind: 'backup'; path: string; from: number; to: number }
  /** A migration begins. */
  | { kind: 'migration'; version: number; name: string }
  /** Its data upgrade has done `done` of `total` rows. */
  | { kind: 'rows'; version: number; done: number; total: number };

export type UpgradeMessage = UpgradeStep | { kind: 'done' } | { kind: 'failed'; code: ErrorCode; message: string };

export interface Upgraded {
  from: number;
  to: number;
  backup: string;
}

/** One line for a step: what start-up is doing (the readiness probe's detail, the log). */
export function stepText(step: UpgradeStep, path: string): string {
  const of = LATEST_VERSION;
  switch (step.kind) {
    case 'backup':
      return `migrating the journal ${path} from schema ${step.from} to ${step.to}: backing it up first to ${step.path}`;
    case 'migration':
      return `migrating the journal ${path}: migration ${step.version} of ${of} (${step.name})`;
    case 'rows':
      return `migrating the journal ${path}: migration ${step.version} of ${of}, ${step.done.toLocaleString('en-US')} of ${step.total.toLocaleString('en-US')} rows`;
  }
}

/** The journal's schema before the daemon opens it: undefined when there is no file yet. */
function versionOf(path: string): number | undefined {
  if (path === ':memory:' || !existsSync(path)) return undefined;
  const db = connect(path);
  try {
    return schemaVersion(db);
  } finally {
    db.close();
  }
}

/**
 * Brings the journal at `path` up to date (see above); resolves with what was done, or undefined when nothing
 * was. Rejects with a DatabaseError: E_DB_VERSION (newer), E_DB_BACKUP (nothing changed), E_DB_OPEN (a
 * migration failed: the migrations before it stay applied, the backup holds the journal as it was).
 */
export async function upgradeJournal(
  path: string,
  now: number,
  onStep: (step: UpgradeStep) => void,
): Promise<Upgraded | undefined> {
  const from = versionOf(path);
  if (from === undefined || from === 0 || from === LATEST_VERSION) return undefined;
  if (from > LATEST_VERSION) throw newerSchema(path, from);
  const task: UpgradeTask = { path, now, from };
  const worker = new Worker(workerEntry(import.meta.url, 'migration-worker'), { workerData: task });
  // The worker ends by itself once it has said 'done' (it is never stopped from here: see migration-worker.ts);
  // its messages all arrive before its 'exit'.
  await new Promise<void>((resolve, reject) => {
    let done = false;
    worker.on('message', (message: UpgradeMessage) => {
      if (message.kind === 'done') done = true;
      else if (message.kind === 'failed')
        reject(new DatabaseError(message.code, message.message, { context: { path } }));
      else onStep(message);
    });
    worker.once('error', (err) =>
      reject(new DatabaseError('E_DB_OPEN', `migrating ${path}: ${err.message}`, { cause: err, context: { path } })),
    );
    worker.once('exit', (code) => {
      if (done) resolve();
      else
        reject(new DatabaseError('E_DB_OPEN', `migrating ${path}: the worker exited (${code})`, { context: { path } }));
    });
  });
  return { from, to: LATEST_VERSION, backup: backupPath(path, from, LATEST_VERSION) };
}
