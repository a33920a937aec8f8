/**
 * Paper trading survives kill -9: a paper daemon (a real process, the embedded simulated exchange replaying a
 * recording, a strategy placing an order a second) is killed without warning at random moments, start-up
 * included, again and again, and restarted on the same database each time. Then the market goes flat and new
 * orders stop (kill switch), the journal settles, and the journal is audited against the paper exchange's
 * persisted ledger: no duplicate order, no lost or doubled fill, every balance exact to the last digit.
 *
 * PAPER_CHAOS_KILLS (default 12) sets how many kills; PAPER_CHAOS_SEED replays a run's random moments (the
 * seed is in the test's name and in every failure).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/sim/prng.js';
import {
  DaemonProcess,
  daemonEnv,
  everyOrderFile,
  journal,
  readDb,
  TEST_STRATEGIES,
  waitFor,
  writeSwingRecording,
} from '../e2e/daemon-process.js';
import { auditPaperDb, paperAuditSettled } from './paper-audit.js';
import { tempDir } from '../support/temp-dir.js';

const KILLS = Number(process.env.PAPER_CHAOS_KILLS ?? 12);
const SEED = Number(process.env.PAPER_CHAOS_SEED ?? Date.now() % 2 ** 31);

const dir = tempDir('chaos-paper');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the replay stands: passes over the recording (as their shift) and tickers into this pass. */
function replayAt(db: string): [number, number] {
  if (!existsSync(db)) return [0, 0];
  const text = readDb(db, (d) => {
    const exists = d.prepare("SELECT 1 FROM sqlite_master WHERE name = 'paper_exchange'").get();
    return exists ? (d.prepare('SELECT replay FROM paper_exchange').pluck().get() as string | null) : null;
  });
  if (!text) return [0, 0];
  const { shift, taken } = JSON.parse(text) as { shift: number; taken: number };
  return [shift, taken];
}
const later = (a: [number, number], b: [number, number]) => a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]);

describe('paper trading under kill -9', () => {
  it(
    `resumes the same paper account after ${KILLS} kills at random moments (seed ${SEED})`,
    async () => {
      const random = mulberry32(SEED);
      const db = join(dir, 'paper.db');
      const config = join(dir, 'config');
      const swing = join(dir, 'swing.jsonl.gz');
      const flat = join(dir, 'flat.jsonl.gz');
      mkdirSync(config);
      // Three instances, each placing an order a second: kills land in the middle of orders often.
      for (const name of ['churn-a', 'churn-b', 'churn-c'])
        writeFileSync(join(config, `${name}.json`), everyOrderFile(name, { churn: 100_000 }));
      await writeSwingRecording(swing, { count: 600 });
      await writeSwingRecording(flat, { count: 10, amplitudePct: 0 });
      const env = daemonEnv({
        DB_PATH: db,
        CONFIG_DIR: config,
        STRATEGIES_DIR: TEST_STRATEGIES,
        KILL_SWITCH_FILE: join(dir, 'KILL'),
        PAPER_DATA: swing,
        PAPER_SPEED: '30',
      });
      const context = (what: string) => `${what} (seed ${SEED})`;

      let replay: [number, number] = [0, 0];
      let runsThatTraded = 0;
      for (let i = 0; i < KILLS; i++) {
        const daemon = new DaemonProcess(env);
        if (i % 3 === 0) {
          // Anywhere from the process's start: during start-up, reconciliation, or trading.
          await sleep(100 + random() * 3000);
        } else {
          await waitFor(context('the daemon to run'), () => daemon.messages(/daemon running/).length > 0, { daemon });
          await sleep(random() * 4000);
        }
        expect(await daemon.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
        if (daemon.messages(/daemon running/).length > 0) runsThatTraded++;
        // The replay never goes back: a restart resumes it at, or after, where the last commit left it.
        const now = replayAt(db);
        expect(later(now, replay), context(`replay at ${now.join(':')} after ${replay.join(':')}`)).toBe(true);
        replay = now;
      }
      expect(runsThatTraded).toBeGreaterThan(0);

      // The market goes flat and no new order is placed: the journal catches up with the exchange and stays.
      writeFileSync(join(dir, 'KILL'), '');
      const final = new DaemonProcess({ ...env, PAPER_DATA: flat });
      await waitFor(context('the last daemon to run'), () => final.messages(/daemon running/).length > 0, {
        daemon: final,
      });
      // A row left PENDING by a kill is resolved once the engine's grace for late orders (about a minute) is over.
      const settled = await paperAuditSettled(context('the journal to agree with the paper exchange'), db, final);
      expect(final.messages(/paper account resumed/)).toHaveLength(1);
      expect(await final.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const audit = auditPaperDb(db);

      expect(audit.problems, context('audit after the last stop')).toEqual([]);
      expect(audit.fills).toBe(settled.fills);
      expect(audit.fills).toBeGreaterThanOrEqual(4);
      // The strategy's opening orders were never placed twice across every run: its state and the account went
      // on. (A kill between two intents of one tick loses the later ones: the state saved with the first says
      // they were decided, so no restart decides them again.)
      const rows = journal(db);
      for (const tag of ['market', 'limit', 'stop', 'oco'])
        for (const instance of ['churn-a', 'churn-b', 'churn-c'])
          expect(
            rows.filter((r) => r.tag === tag && r.instance === instance).length,
            context(`${instance} ${tag}`),
          ).toBeLessThanOrEqual(1);
      expect(rows.filter((r) => r.tag === 'market').length, context('opening orders')).toBeGreaterThan(0);
    },
    180_000 + KILLS * 10_000,
  );
});
