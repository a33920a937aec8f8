/**
 * The worker thread of a journal's upgrade (journal-upgrade.ts): backs the database up beside it, then applies
 * the migrations, posting each step, so the daemon's thread stays free to answer its probes meanwhile.
 */
import { existsSync, renameSync, rmSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { errorCode } from '../errors.js';
import { backupPath, connect, DatabaseError, migrate } from './database.js';
import type { UpgradeMessage, UpgradeTask } from './journal-upgrade.js';
import { LATEST_VERSION } from './migrations.js';

const { path, now, from } = workerData as UpgradeTask;
const post = (message: UpgradeMessage) => parentPort!.postMessage(message);

async function backUp(db: ReturnType<typeof connect>, to: number): Promise<void> {
  const backup = backupPath(path, from, to);
  post({ kind: 'backup', path: backup, from, to });
  // Written aside and renamed: a backup cut short never stands under the backup's name.
  const partial = `${backup}.partial`;
  try {
    await db.backup(partial);
    renameSync(partial, backup);
  } catch (err) {
    rmSync(partial, { force: true });
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new DatabaseError(
      'E_DB_BACKUP',
      `cannot back ${path} up to ${backup} before migrating it from schema ${from} to ${to} (${why}): nothing ` +
        'was changed; make room beside it (the backup is as large as the journal) and start again',
      { cause: err, context: { path, backup } },
    );
  }
}

/**
 * Test-only, as the crash points (ops/crash-points.ts): with BOT_TEST_HOOKS=1, BOT_HOLD_MIGRATION=FILE holds
 * the first migration, once it is told, until FILE exists, so a test sees the daemon answer while it migrates.
 */
function holdForTest(): void {
  const file = process.env.BOT_HOLD_MIGRATION;
  if (process.env.BOT_TEST_HOOKS !== '1' || file === undefined || file === '') return;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  while (!existsSync(file)) Atomics.wait(nap, 0, 0, 50);
}

/**
 * The upgrade, in a function the module starts rather than at the module's top level: a module that awaits at
 * its top level is evaluated asynchronously, and Node 22's V8 aborts the whole process (a failed check in
 * AsyncModuleExecutionFulfilled) when such a module's thread is stopped as its evaluation completes.
 */
async function upgrade(): Promise<UpgradeMessage> {
  const db = connect(path);
  try {
    await backUp(db, LATEST_VERSION);
    migrate(db, now, {
      migrating: (m) => {
        post({ kind: 'migration', version: m.version, name: m.name });
        if (m.version === from + 1) holdForTest();
      },
      progress: (m, done, total) => post({ kind: 'rows', version: m.version, done, total }),
    });
  } finally {
    db.close();
  }
  return { kind: 'done' };
}

upgrade().then(post, (err: unknown) =>
  post({ kind: 'failed', code: errorCode(err), message: err instanceof Error ? err.message : String(err) }),
);
