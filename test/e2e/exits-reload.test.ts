/**
 * A reload through the control API moves the stop the engine holds on the exchange, in a real paper daemon on
 * prices the test moves: the strategy file's exits.stopLossPct goes from 2 to 3 %, POST /api/v1/reload answers
 * once the held STOP_LIMIT at 2 % is cancelled on the paper exchange and one at 3 % placed there; the polls after
 * it place nothing more, and the price falling through the new stop fills that one order, the one exit SELL.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditPaperDb, paperAuditSettled } from '../chaos/paper-audit.js';
import {
  DaemonProcess,
  freePort,
  http,
  lastPrice,
  paperLiveUpstream,
  readDb,
  reenterFile,
  waitFor,
} from './daemon-process.js';

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

describe('a reload of exits.stopLossPct on a paper daemon', () => {
  it('re-places the held stop at the new level once, through the order path', async () => {
    const { db } = suite;
    const port = await freePort();
    const env = {
      ...suite.env({ 'x.json': reenterFile({ entries: 1, exits: { stopLossPct: 2 } }) }),
      API_PORT: String(port),
      API_TOKEN: TOKEN,
    };
    const daemon = new DaemonProcess(env);
    try {
      const [first] = await waitFor(
        'the stop held on the paper exchange',
        () => {
          const rows = heldStops(db);
          return rows[0]?.paper === 'NEW' && rows;
        },
        { daemon, ms: 30_000 },
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
    const sells = readDb(db, (d) =>
      d.prepare("SELECT type, status FROM paper_orders WHERE side = 'SELL' ORDER BY id").all(),
    );
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
