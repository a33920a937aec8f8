/**
 * The daemon's journal upgrade, as a real process: a journal of an older schema is backed up beside it (named
 * for the two versions) and migrated while the listener answers, its progress on /readyz and in the log; a
 * journal of a newer schema is refused in one line naming the backup to restore; a backup that cannot be made
 * leaves the journal as it was.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { writeOldJournal } from '../support/old-journal.js';
import { freePort } from '../support/free-port.js';
import { DaemonProcess, daemonEnv, http, readDb, ROOT, waitFor } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-upgrade');
const processes: DaemonProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (!p.exit) await p.stop('SIGKILL');
});

const config = join(dir, 'config');
mkdirSync(config);
copyFileSync(join(ROOT, 'config/grid-btcusdt.json'), join(config, 'grid-btcusdt.json'));

/** A paper daemon on the journal at `db` (the shipped grid, the samples), its metrics listener on `port`. */
function daemon(db: string, vars: Record<string, string> = {}): DaemonProcess {
  const p = new DaemonProcess(
    daemonEnv({ DB_PATH: db, CONFIG_DIR: config, KILL_SWITCH_FILE: join(dir, 'KILL'), LOG_FORMAT: 'json', ...vars }),
  );
  processes.push(p);
  return p;
}

const versionOf = (db: Database.Database) =>
  db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number;
const ordersIn = (db: Database.Database) => db.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number;

it('backs an older journal up beside it, then migrates it while /healthz answers and /readyz tells how far', async () => {
  const db = join(dir, 'old.db');
  writeOldJournal(db, { fills: 400, schema: 4, venue: 'paper' });
  const release = join(dir, 'release');
  const port = await freePort();
  const bot = daemon(db, { METRICS_PORT: String(port), BOT_TEST_HOOKS: '1', BOT_HOLD_MIGRATION: release });
  // The worker holds the first migration (a test hook) until the file exists: the daemon is mid-migration.
  await waitFor('the first migration', () => bot.messages(new RegExp(`migration 5 of ${LATEST_VERSION}`)).length > 0, {
    daemon: bot,
  });
  const backup = join(dir, `old.schema-4-before-${LATEST_VERSION}.db`);
  expect(readDb(backup, (b) => [versionOf(b), ordersIn(b)])).toEqual([4, 400]);
  const healthz = await http(`http://127.0.0.1:${port}/healthz`);
  expect([healthz.status, (healthz.body as { phase: string }).phase]).toEqual([200, 'starting']);
  const readyz = await http(`http://127.0.0.1:${port}/readyz`);
  expect(readyz.status).toBe(503);
  expect(JSON.stringify(readyz.body)).toContain(
    `migrating the journal ${db}: migration 5 of ${LATEST_VERSION} (reads that stay fast as the journal grows)`,
  );
  writeFileSync(release, '');
  await waitFor('the daemon to run', () => bot.messages(/"daemon running"/).length > 0, { daemon: bot });
  expect(
    bot.messages(new RegExp(`migrated from schema 4 to ${LATEST_VERSION} in [\\d.]+ s; as it was before`)),
  ).toHaveLength(1);
  expect(bot.messages(/backing it up first to/)).toHaveLength(1);
  await bot.stop();
  // Every order kept (the grid has placed some since), and the fold the migration made of the 400 fills.
  expect(readDb(db, versionOf)).toBe(LATEST_VERSION);
  expect(readDb(db, ordersIn)).toBeGreaterThanOrEqual(400);
  const fold = readDb(db, (d) =>
    d.prepare("SELECT fill_seq FROM positions WHERE instance = 'grid-btcusdt'").pluck().get(),
  );
  expect(fold).toBeGreaterThanOrEqual(400);
}, 120_000);

it('refuses a journal of a newer schema in one line naming the backup to restore, and how', async () => {
  const db = join(dir, 'newer.db');
  writeOldJournal(db, { fills: 3, schema: LATEST_VERSION, venue: 'paper' });
  const backup = join(dir, `newer.schema-${LATEST_VERSION}-before-${LATEST_VERSION + 1}.db`);
  copyFileSync(db, backup);
  const d = new Database(db);
  d.prepare("INSERT INTO schema_migrations VALUES (?, 'from a newer version', 0)").run(LATEST_VERSION + 1);
  d.close();
  const bot = daemon(db);
  expect((await bot.exited).code).toBe(1);
  const said = bot.messages(/not started/);
  expect(said).toHaveLength(1);
  expect(said[0]).toContain(
    `database ${db} has schema version ${LATEST_VERSION + 1}, newer than this bot knows (${LATEST_VERSION}): a newer version of the bot migrated it. Run that version, or restore the backup made before its migration: stop the bot, then mv ${backup} ${db} (delete ${db}-wal and ${db}-shm if present)`,
  );
}, 60_000);

it('a backup that cannot be made refuses the start and changes nothing', async () => {
  const db = join(dir, 'cramped.db');
  writeOldJournal(db, { fills: 3, schema: 4, venue: 'paper' });
  // A folder where the backup goes: the copy cannot take its name.
  mkdirSync(join(dir, `cramped.schema-4-before-${LATEST_VERSION}.db`));
  const bot = daemon(db);
  expect((await bot.exited).code).toBe(1);
  const said = bot.messages(/not started/);
  expect(said).toHaveLength(1);
  expect(said[0]).toMatch(
    /cannot back .*cramped\.db up to .* before migrating it from schema 4 to \d+ \(\w+\): nothing was changed/,
  );
  expect(readDb(db, versionOf)).toBe(4);
}, 60_000);
