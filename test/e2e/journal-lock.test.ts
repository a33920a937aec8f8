/**
 * One daemon per journal, with real processes: a second daemon on the same database is refused at once, naming
 * the holder, before it touches the journal, the paper account or the venue, while the first trades on; the
 * read-only commands still work beside the holder; and kill -9 of the holder lets the next daemon start at once
 * (the OS drops the lock with the process: nothing stale to clean up).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DaemonProcess, everyOrderFile, journal, lockstepPaperEnv, readDb, waitFor } from './daemon-process.js';

const dir = mkdtempSync(join(tmpdir(), 'e2e-journal-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const starts = (db: string) =>
  readDb(db, (d) => d.prepare("SELECT count(*) FROM events WHERE kind = 'daemon-started'").pluck().get() as number);
const paperOrders = (db: string) =>
  readDb(db, (d) => d.prepare('SELECT count(*) FROM paper_orders').pluck().get() as number);

describe('one daemon per journal', () => {
  it('refuses a second daemon naming the holder while the first trades on; kill -9 frees it at once', async () => {
    const db = join(dir, 'bot.db');
    const env = await lockstepPaperEnv(
      dir,
      { 'churn.json': everyOrderFile('churn', { churn: 1000 }) },
      { count: 2000 },
    );
    const first = new DaemonProcess(env);
    await waitFor('the first daemon to trade', () => journal(db).length >= 5, { daemon: first, ms: 60_000 });

    const startsBefore = starts(db);
    const paperBefore = paperOrders(db);
    const second = new DaemonProcess(env);
    expect(await waitFor('the second daemon to exit', () => second.exit, { ms: 20_000 })).toEqual({
      code: 1,
      signal: null,
    });
    // One line, naming the holder; nothing about a venue, a journal or a paper account.
    const said = second.lines.filter((l) => l.trim() !== '');
    expect(said).toHaveLength(1);
    const line = JSON.parse(said[0]!) as { msg: string; holder: { pid: number; host: string; since: string } };
    expect(line.holder).toMatchObject({ pid: first.child.pid, host: hostname() });
    expect(line.msg).toBe(
      `not started: ${db} is in use by another bot: pid ${first.child.pid} on host ${hostname()} since ${line.holder.since}; one daemon per journal: stop that one first, or set DB_PATH to another file`,
    );
    expect(Date.parse(line.holder.since)).toBeLessThanOrEqual(Date.now());
    expect(starts(db)).toBe(startsBefore);

    // The first trades on: more orders in its journal and on its paper exchange after the refusal.
    const journalAfterRefusal = journal(db).length;
    await waitFor('the first daemon to place more orders', () => journal(db).length > journalAfterRefusal, {
      daemon: first,
    });
    expect(paperOrders(db)).toBeGreaterThan(paperBefore);

    // The read-only command works beside the holder.
    const status = new DaemonProcess(env, ['status', '--db', db, '--json']);
    expect(await status.exited).toEqual({ code: 0, signal: null });
    expect(JSON.parse(status.lines.join('\n'))).toHaveProperty('instances');

    // kill -9: the next daemon starts at once, with no clean-up in between, and trades.
    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const third = new DaemonProcess(env);
    const placedBefore = journal(db).length;
    await waitFor('the next daemon to trade', () => journal(db).length > placedBefore, { daemon: third, ms: 60_000 });
    expect(third.messages(/holding the journal's lock/)).toHaveLength(1);
    expect(starts(db)).toBe(startsBefore + 1);
    expect(await third.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 120_000);
});
