/**
 * At least once, and deduplicable, through a real kill -9: a paper daemon's webhook POST is taken by the
 * receiver and never answered (it is in flight) when the daemon is killed; the next start sends it again with
 * the same id (body and Idempotency-Key), and every fill of both runs reaches the receiver, which keeps each
 * once by dropping the ids it has seen.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IDEMPOTENCY_HEADER } from '../../src/notify/webhook.js';
import { Receiver } from '../notify/stand-ins.js';
import { DaemonProcess, everyOrderFile, lockstepPaperEnv, readDb, waitFor } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-notify-crash');

type Body = { id: string; notifications: { id: string; kind: string }[] };

describe('webhook notifications across a kill -9', () => {
  it('sends the POST that was in flight again with the same id, and every fill at least once', async () => {
    const hook = await Receiver.start();
    const db = join(dir, 'bot.db');
    const fillSeqs = () =>
      readDb(db, (d) => d.prepare('SELECT rowid FROM fills ORDER BY rowid').pluck().all() as number[]);
    const env = await lockstepPaperEnv(
      dir,
      { 'churn.json': everyOrderFile('churn', { churn: 100_000 }) },
      { period: 7, count: 2_000 },
      { NOTIFY_WEBHOOK_URL: `${hook.url}/hook`, NOTIFY_WEBHOOK_SECRET: 'crash-secret', NOTIFY_WEBHOOK_EVENTS: 'fill' },
    );
    try {
      // Run 1: the receiver takes every POST and answers none.
      hook.status = () => 'hold';
      const first = new DaemonProcess(env);
      await waitFor('a webhook POST in flight', () => hook.received.length > 0, { daemon: first });
      await waitFor('more fills behind it', () => fillSeqs().length >= 3, { daemon: first });
      expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
      const inFlight = hook.received.map((r) => r.json as Body);
      const heldIds = new Set(inFlight.map((b) => b.id));
      expect(hook.answers).toEqual([]);
      const firstRunFills = fillSeqs();

      // Run 2: the receiver answers; the daemon stops cleanly, having told everything.
      hook.status = () => 204;
      const held = hook.received.length;
      const second = new DaemonProcess(env);
      await waitFor(
        'the held notification delivered again',
        () => hook.received.slice(held).some((r) => heldIds.has((r.json as Body).id)),
        { daemon: second },
      );
      await waitFor('fills of the second run', () => fillSeqs().length >= firstRunFills.length + 2, { daemon: second });
      expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });

      const delivered = hook.received.slice(held);
      for (const r of delivered) {
        const body = r.json as Body;
        expect(r.headers[IDEMPOTENCY_HEADER]).toBe(body.id);
        expect(body.notifications.map((n) => n.id)).toEqual([body.id]);
      }
      // The receiver's view after dropping repeats by id: each fill of both runs exactly once.
      const kept = new Set(delivered.map((r) => (r.json as Body).id));
      const told = [...kept].map((id) => Number(/-f(\d+)$/.exec(id)?.[1])).sort((a, b) => a - b);
      expect(told).toEqual(fillSeqs());
      for (const id of heldIds) expect(kept.has(id)).toBe(true);
    } finally {
      await hook.close();
    }
  }, 120_000);
});
