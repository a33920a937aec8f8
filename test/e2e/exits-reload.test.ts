/**
 * A reload through the control API moves the stop the engine holds on the exchange, in a real paper daemon on
 * prices the test moves: the strategy file's exits.stopLossPct goes from 2 to 3 %, POST /api/v1/reload answers
 * once the held STOP_LIMIT at 2 % is cancelled on the paper exchange and one at 3 % placed there; the polls after
 * it place nothing more, and the price falling through the new stop fills that one order, the one exit SELL.
 * The same reload killed -9 between the cancel of the old order and the new one reaching the journal's OPEN
 * leaves, after the restart, exactly one stop held at the new level: the one exit.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditPaperDb, paperAuditSettled } from '../chaos/paper-audit.js';
import {
  DaemonProcess,
  http,
  lastPrice,
  paperLiveUpstream,
  readDb,
  reenterFile,
  waitFor,
  paperOrders,
} from './daemon-process.js';
import { freePort } from '../support/free-port.js';

const TOKEN = 'e2e-exits-reload-token-5b1f';
const suite = paperLiveUpstream('e2e-exits-reload-', 20_000);

/** The held stops as the journal and the paper exchange hold them, oldest first. */
const heldStops = (db: string) =>
  readDb(db, (d) =>
    d
      .prepare(
        `SELECT o.status AS journal, p.status AS paper, p.stop_price AS stop
           FROM orders o LEFT JOIN paper_orders p ON p.id = CAST(o.exchange_id AS INTEGER)
          WHERE o.tag = 'exit:stop-loss' ORDER BY o.seq`,
      )
      .all(),
  ) as { journal: string; paper: string | null; stop: string | null }[];

/** A paper daemon's environment on `on` with its control API on a free port: instance x, exits.stopLossPct 2. */
async function stopAt2(on: typeof suite, extra: Record<string, string> = {}) {
  const port = await freePort();
  const env = {
    ...on.env({ 'x.json': reenterFile({ entries: 1, exits: { stopLossPct: 2 } }) }),
    API_PORT: String(port),
    API_TOKEN: TOKEN,
    ...extra,
  };
  return { port, env };
}

describe('a reload of exits.stopLossPct on a paper daemon', () => {
  it('re-places the held stop at the new level once, through the order path', async () => {
    const { db } = suite;
    const { port, env } = await stopAt2(suite);
    const daemon = new DaemonProcess(env);
    try {
      const [first] = await waitFor(
        'the stop held on the paper exchange',
        () => {
          const rows = heldStops(db);
          return rows[0]?.paper === 'NEW' && rows;
        },
        { daemon },
      );
      // The average entry the engine holds carries the fee taken in BTC (0.1 %).
      const entry =
        Number(readDb(db, (d) => d.prepare("SELECT avg_price FROM orders WHERE tag = 'entry'").pluck().get())) / 0.999;
      expect(Number(first!.stop)).toBeCloseTo(entry * 0.98, -1);
      await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });

      writeFileSync(join(suite.dir, 'config', 'x.json'), reenterFile({ entries: 1, exits: { stopLossPct: 3 } }));
      const reload = await http(`http://127.0.0.1:${port}/api/v1/reload`, { method: 'POST', token: TOKEN });
      expect(reload.status).toBe(200);
      expect(reload.body).toMatchObject({ changed: true, details: { reconfigured: ['x'], exitsChanged: ['x'] } });
      // Answered once the order path is done: the old one cancelled on the paper exchange, the new one there.
      const after = heldStops(db);
      expect(after.map((r) => [r.journal, r.paper])).toEqual([
        ['CANCELED', 'CANCELED'],
        ['OPEN', 'NEW'],
      ]);
      const stop = Number(after[1]!.stop);
      expect(stop).toBeCloseTo(entry * 0.97, -1);

      // The jobs after it (market cycles and orders polls run every second) place nothing more: two new prices
      // seen one after the other are a second of them at least. (test/engine/exits-reload.test.ts drives the
      // polls after a reload one by one.)
      for (const p of [19_950, 19_940]) {
        suite.price(p);
        await waitFor(`the daemon to see ${p}`, () => lastPrice(db) === String(p), { daemon });
      }
      expect(heldStops(db)).toHaveLength(2);

      // Through the new stop (above its limit, 0.5 % under it): that order fills, the one exit SELL.
      suite.price(stop - 10);
      await waitFor('the held stop to fill', () => heldStops(db)[1]?.paper === 'FILLED', { daemon });
      await paperAuditSettled('the journal to agree with the paper exchange', db, daemon);
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    }
    expect(auditPaperDb(db).problems).toEqual([]);
    const sells = paperOrders(db, 'SELL').map(({ type, status }) => ({ type, status }));
    expect(sells).toEqual([
      { type: 'STOP_LIMIT', status: 'CANCELED' },
      { type: 'STOP_LIMIT', status: 'FILLED' },
    ]);
    const changed = readDb(db, (d) =>
      d.prepare("SELECT data FROM events WHERE kind = 'exits-changed'").pluck().all(),
    ) as string[];
    expect(changed.map((j) => JSON.parse(j) as unknown)).toEqual([{ exits: { stopLossPct: 3 }, protections: {} }]);
  }, 120_000);
});

/**
 * The reload's re-placement through a kill -9 (BOT_CRASH_AT, the daemon's test hooks): the order at the old level
 * is cancelled and the one at the new level journaled, then the daemon dies before it is sent (after-journal:3)
 * or once the paper exchange took it with the answer not journaled (after-send:3). The file on disk says 3 %:
 * the restart reconciles the new row (never placed, or found on the exchange) and holds one stop at 3 %, once.
 */
describe.each(['after-journal:3', 'after-send:3'])('a reload killed -9 at %s of the new held stop', (point) => {
  const killed = paperLiveUpstream('e2e-exits-reload-kill-', 20_000);
  it('holds exactly one stop at the new level after the restart, and it is the one exit', async () => {
    const { db } = killed;
    const { port, env } = await stopAt2(killed, { RECONCILE_WINDOW_MS: '2000' });
    const first = new DaemonProcess({ ...env, BOT_TEST_HOOKS: '1', BOT_CRASH_AT: point });
    await waitFor('the stop held on the paper exchange', () => heldStops(db)[0]?.paper === 'NEW', { daemon: first });
    await waitFor('the control API', () => first.messages(/control API and dashboard on/).length > 0, {
      daemon: first,
    });
    writeFileSync(join(killed.dir, 'config', 'x.json'), reenterFile({ entries: 1, exits: { stopLossPct: 3 } }));
    // The daemon dies inside the reload: the request gets no answer.
    await http(`http://127.0.0.1:${port}/api/v1/reload`, { method: 'POST', token: TOKEN }).catch(() => undefined);
    await waitFor('the daemon to kill itself', () => first.exit);
    expect(first.exit, first.lines.slice(-20).join('\n')).toEqual({ code: null, signal: 'SIGKILL' });
    const killedAt = heldStops(db);
    expect(killedAt.map((r) => r.journal)).toEqual(['CANCELED', 'PENDING']);
    expect(killedAt[0]!.paper).toBe('CANCELED');

    const entry =
      Number(readDb(db, (d) => d.prepare("SELECT avg_price FROM orders WHERE tag = 'entry'").pluck().get())) / 0.999;
    const second = new DaemonProcess({ ...env, API_PORT: '0' });
    try {
      const live = await waitFor(
        'one stop held at the new level',
        () => {
          const open = heldStops(db).filter((r) => r.paper === 'NEW' && r.journal === 'OPEN');
          return open.length === 1 && open[0];
        },
        { daemon: second },
      );
      expect(Number(live.stop)).toBeCloseTo(entry * 0.97, -1);
      await paperAuditSettled('the journal to agree with the paper exchange', db, second);
      // Polls after it place nothing more: two prices seen one after the other are a second of them at least.
      for (const p of [19_950, 19_940]) {
        killed.price(p);
        await waitFor(`the daemon to see ${p}`, () => lastPrice(db) === String(p), { daemon: second });
      }
      const stops = heldStops(db);
      expect(stops.filter((r) => r.paper === 'NEW')).toHaveLength(1);
      // Through the new stop (above its limit): that order fills, the one exit SELL.
      killed.price(Number(live.stop) - 10);
      await waitFor('the held stop to fill', () => heldStops(db).some((r) => r.paper === 'FILLED'), {
        daemon: second,
      });
      await paperAuditSettled('the journal to agree with the paper exchange', db, second);
    } finally {
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    }
    expect(auditPaperDb(db).problems).toEqual([]);
    const sells = paperOrders(db, 'SELL');
    // The stop at 2 % cancelled, the one at 3 % filled; after-send's reached the exchange before the kill and is
    // the one found there (nothing placed again), after-journal's never left and one was placed at the restart.
    expect(sells.map((s) => [s.type, s.status])).toEqual([
      ['STOP_LIMIT', 'CANCELED'],
      ['STOP_LIMIT', 'FILLED'],
    ]);
    expect(Number(sells[1]!.stop_price)).toBeCloseTo(entry * 0.97, -1);
    const rows = heldStops(db).map((r) => r.journal);
    expect(rows).toEqual(
      point.startsWith('after-send') ? ['CANCELED', 'FILLED'] : ['CANCELED', 'NOT_PLACED', 'FILLED'],
    );
  }, 150_000);
});
