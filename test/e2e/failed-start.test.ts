/**
 * Issue 28, "a failed start leaves the database as it was": the daemon as a real process, started on a journal a
 * previous run left (orders, events, strategy state, the paper account) with its API port held by another
 * listener, and live against a venue that does not answer (a closed local port) until it is told to stop, each
 * with a notification channel. Either start fails; the journal's schema and every row of every table (their
 * autoincrement counters included) are then what they were before it, and a start that fails on a path with no
 * database leaves none there.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DaemonProcess,
  daemonEnv,
  journal,
  journalContents,
  liveEnv,
  lockstepPaperEnv,
  restingFile,
  waitFor,
} from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-failed-start');
const processes: DaemonProcess[] = [];
let holder: Server | undefined;
afterAll(async () => {
  for (const p of processes) if (!p.exit) await p.stop('SIGKILL');
  holder?.close();
});

function track(p: DaemonProcess): DaemonProcess {
  processes.push(p);
  return p;
}

const RESTING = restingFile(3);

/** A port another listener holds (this test process: the daemon is a process of its own). */
async function heldPort(): Promise<number> {
  const server = createServer((s) => s.destroy());
  holder = server;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
}

/** The database's files (a WAL or shared memory left behind counts). */
const dbFiles = (db: string) => ['', '-wal', '-shm'].map((s) => db + s).filter((f) => existsSync(f));

describe('a failed start leaves the database as it was', () => {
  it(
    'paper, the API port taken or the configuration bad: the journal of the previous run unchanged, no journal made on a new path',
    { timeout: 120_000 },
    async () => {
      const runDir = join(dir, 'paper');
      mkdirSync(runDir);
      const env = await lockstepPaperEnv(runDir, { 'rest.json': RESTING }, {});
      const db = join(runDir, 'bot.db');
      const first = track(new DaemonProcess(env));
      await waitFor('three resting orders', () => journal(db).filter((r) => r.status === 'OPEN').length === 3, {
        daemon: first,
      });
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      const before = journalContents(db);
      expect(before.orders).toHaveLength(3);

      const port = await heldPort();
      // A notification channel too: its first run would be marked in the journal (nothing may be).
      const taken = {
        ...env,
        API_PORT: String(port),
        NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${port}/hook`,
        NOTIFY_WEBHOOK_SECRET: 'webhook-secret-for-the-test',
      };
      const failed = track(new DaemonProcess(taken));
      expect(await failed.exited).toEqual({ code: 1, signal: null });
      expect(failed.messages(/EADDRINUSE/).length).toBeGreaterThan(0);
      expect(journalContents(db)).toEqual(before);

      // Bad configuration: a strategy file that does not validate, and a live run on this paper journal.
      const badConfig = join(runDir, 'bad-config');
      mkdirSync(badConfig);
      writeFileSync(join(badConfig, 'rest.json'), JSON.stringify({ ...JSON.parse(RESTING), params: { count: -1 } }));
      const bad = track(new DaemonProcess({ ...env, CONFIG_DIR: badConfig }));
      expect(await bad.exited).toEqual({ code: 1, signal: null });
      expect(bad.messages(/params\.count/).length).toBeGreaterThan(0);
      const live = track(
        new DaemonProcess(liveEnv('http://127.0.0.1:1', runDir, { DB_PATH: db, CONFIG_DIR: env.CONFIG_DIR! })),
      );
      expect(await live.exited).toEqual({ code: 1, signal: null });
      expect(live.messages(/holds paper trading; a live run needs its own database/).length).toBeGreaterThan(0);
      expect(journalContents(db)).toEqual(before);

      const fresh = join(runDir, 'fresh.db');
      const failedFresh = track(new DaemonProcess({ ...taken, DB_PATH: fresh }));
      expect(await failedFresh.exited).toEqual({ code: 1, signal: null });
      expect(dbFiles(fresh)).toEqual([]);
    },
  );

  it(
    'live, the venue unreachable until told to stop: the journal unchanged, none made on a new path',
    { timeout: 120_000 },
    async () => {
      const runDir = join(dir, 'live');
      mkdirSync(runDir);
      const sim = track(new DaemonProcess(daemonEnv({}), ['sim', '--port', '0', '--random-walk', '--seed', '5']));
      const urlOf = () => /http:\/\/127\.0\.0\.1:\d+/.exec(sim.messages(/http:\/\/127\.0\.0\.1:\d+/)[0] ?? '')?.[0];
      const simUrl = await waitFor('the simulated exchange', urlOf, { daemon: sim });
      mkdirSync(join(runDir, 'config'));
      writeFileSync(join(runDir, 'config', 'rest.json'), RESTING);
      const db = join(runDir, 'live.db');
      const env = liveEnv(simUrl, runDir, { DB_PATH: db });
      const first = track(new DaemonProcess(env));
      await waitFor('three resting orders', () => journal(db).filter((r) => r.status === 'OPEN').length === 3, {
        daemon: first,
      });
      expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // The venue goes away: its port is closed, nothing answers there.
      await sim.stop('SIGTERM');
      const before = journalContents(db);
      expect(before.orders).toHaveLength(3);

      const unreachable = async (path: string) => {
        const daemon = track(
          new DaemonProcess({
            ...env,
            DB_PATH: path,
            NOTIFY_WEBHOOK_URL: `${simUrl}/hook`,
            NOTIFY_WEBHOOK_SECRET: 'webhook-secret-for-the-test',
          }),
        );
        await waitFor(
          'a start that cannot reach the venue',
          () => daemon.messages(/cannot .* \(attempt 2\)/).length > 0,
          { daemon },
        );
        await daemon.stop('SIGTERM');
        expect(daemon.messages(/ECONNREFUSED|connect|unreachable/i).length).toBeGreaterThan(0);
      };
      await unreachable(db);
      expect(journalContents(db)).toEqual(before);

      const fresh = join(runDir, 'fresh.db');
      await unreachable(fresh);
      expect(dbFiles(fresh)).toEqual([]);
    },
  );
});
