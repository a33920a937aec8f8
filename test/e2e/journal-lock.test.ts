/**
 * One daemon per journal, with real processes: a second daemon on the same database is refused at once, naming
 * the holder, before it touches the journal, the paper account or the venue, while the first trades on; the
 * read-only commands still work beside the holder; and kill -9 of the holder lets the next daemon start at once
 * (the OS drops the lock with the process: nothing stale to clean up). The journal is one by identity: a
 * daemon through a symlink is refused by the lock beside the real file, one through a hard link by the lease
 * inside the journal; after kill -9 a daemon through the hard link takes the lease over at once (its holder's
 * process is gone from this host), and a lease left by a holder on another machine is taken over once it has
 * expired, not before.
 */
import { linkSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import Database from 'better-sqlite3';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonProcess, everyOrderFile, journal, lockstepPaperEnv, readDb, waitFor } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-journal-lock');

const starts = (db: string) =>
  readDb(db, (d) => d.prepare("SELECT count(*) FROM events WHERE kind = 'daemon-started'").pluck().get() as number);
const paperOrders = (db: string) =>
  readDb(db, (d) => d.prepare('SELECT count(*) FROM paper_orders').pluck().get() as number);

/** A churning paper daemon in a folder of its own (under `dir` when given a name), once it has placed `placed` orders. */
async function tradingDaemon(folder: string | undefined, placed: number) {
  const base = folder === undefined ? dir : mkdtempSync(join(dir, folder));
  const db = join(base, 'bot.db');
  const env = await lockstepPaperEnv(base, { 'churn.json': everyOrderFile('churn', { churn: 1000 }) }, { count: 2000 });
  const first = new DaemonProcess(env);
  await waitFor('the first daemon to trade', () => journal(db).length >= placed, { daemon: first });
  return { base, db, env, first };
}

describe('one daemon per journal', () => {
  it('refuses a second daemon naming the holder while the first trades on; kill -9 frees it at once', async () => {
    const { db, env, first } = await tradingDaemon(undefined, 5);

    const startsBefore = starts(db);
    const paperBefore = paperOrders(db);
    const second = new DaemonProcess(env);
    expect(await waitFor('the second daemon to exit', () => second.exit)).toEqual({
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
    await waitFor('the next daemon to trade', () => journal(db).length > placedBefore, { daemon: third });
    expect(third.messages(/holding the journal's lock/)).toHaveLength(1);
    expect(starts(db)).toBe(startsBefore + 1);
    expect(await third.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('refuses a daemon through a symlink or a hard link; after kill -9 the hard link takes the lease over at once', async () => {
    const { base, db, env, first } = await tradingDaemon('identity-', 3);
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    const symlink = join(elsewhere, 'link.db');
    symlinkSync(db, symlink);
    const hardLink = join(elsewhere, 'alias.db');
    linkSync(db, hardLink);
    const refusedLine = async (path: string) => {
      const d = new DaemonProcess({ ...env, DB_PATH: path });
      expect(await waitFor(`the daemon on ${path} to exit`, () => d.exit)).toEqual({
        code: 1,
        signal: null,
      });
      const said = d.lines.filter((l) => l.trim() !== '');
      expect(said).toHaveLength(1);
      return JSON.parse(said[0]!) as { msg: string; holder: { pid: number } };
    };
    const bySymlink = await refusedLine(symlink);
    expect(bySymlink.holder.pid).toBe(first.child.pid);
    expect(bySymlink.msg).toMatch(
      new RegExp(`^not started: ${symlink} is in use by another bot: pid ${first.child.pid} on host `),
    );
    const byHardLink = await refusedLine(hardLink);
    expect(byHardLink.holder.pid).toBe(first.child.pid);
    expect(byHardLink.msg).toMatch(
      /\(its lease in the journal has a heartbeat \d+ s old and expires at .* unless renewed\)/,
    );
    // The first trades on.
    const placed = journal(db).length;
    await waitFor('the first daemon to place more orders', () => journal(db).length > placed, { daemon: first });

    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
    const next = new DaemonProcess({ ...env, DB_PATH: hardLink });
    const before = journal(hardLink).length;
    await waitFor('the daemon through the hard link to trade', () => journal(hardLink).length > before, {
      daemon: next,
    });
    expect(
      next.messages(/journal lease taken over: the lease of pid \d+ on host .*: that process is gone from this host/),
    ).toHaveLength(1);
    expect(await next.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 180_000);

  it('takes over a lease left by a holder on another machine once it has expired, not before', async () => {
    const { db, env, first } = await tradingDaemon('expiry-', 3);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    // A daemon on another machine (a network filesystem) holds the journal, heartbeating, then dies: its lease
    // stays. Here the test writes its row and its heartbeats.
    const ttlMs = 4_000;
    let heartbeat = Date.now();
    const d = new Database(db);
    const beat = () => {
      heartbeat = Date.now();
      d.prepare(
        "INSERT OR REPLACE INTO journal_lease (id, token, pid, host, container, since, heartbeat, ttl_ms) VALUES (1, 'elsewhere', 1, 'node-b', 'pod trading/bot-0', '2026-01-01T00:00:00.000Z', ?, ?)",
      ).run(heartbeat, ttlMs);
      d.pragma('wal_checkpoint(PASSIVE)');
    };
    beat();
    const beating = setInterval(beat, 1_000);
    const early = new DaemonProcess(env);
    expect(await waitFor('the early start to exit', () => early.exit)).toEqual({
      code: 1,
      signal: null,
    });
    expect(early.lines.join('\n')).toContain(
      'is in use by another bot: pid 1 on host node-b (pod trading/bot-0) since',
    );
    // The other machine dies: no heartbeat from now on.
    clearInterval(beating);
    d.close();
    // Once the lease has expired (its heartbeat plus its time to live, on the wall clock both daemons read).
    await waitFor('the lease to expire', () => Date.now() > heartbeat + ttlMs);
    const later = new DaemonProcess(env);
    const placed = journal(db).length;
    await waitFor('the later start to trade', () => journal(db).length > placed, { daemon: later });
    expect(
      later.messages(
        /journal lease taken over: the lease of pid 1 on host node-b \(pod trading\/bot-0\) since .* expired \d+ s ago/,
      ),
    ).toHaveLength(1);
    expect(await later.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 180_000);
});
