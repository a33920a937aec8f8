/**
 * A declared stop-loss held on the exchange across a literal kill -9: a paper daemon (a real process, paper on
 * the live prices of an upstream exchange) buys, and once the entry has filled the engine places the stop on
 * the paper exchange. The daemon is killed with SIGKILL; while it is down the price falls through the stop.
 * Restarted, the exchange-held stop fills at the first live price, and the journal shows exactly one exit
 * sell: the held stop, filled once; no tick-based exit was sent beside it.
 */
import { describe, expect, it } from 'vitest';
import { auditPaperDb, paperAuditSettled } from '../chaos/paper-audit.js';
import { DaemonProcess, heldStopOnPaper, paperLiveUpstream, readDb, waitFor } from './daemon-process.js';

const suite = paperLiveUpstream('e2e-held-exit-', 20_000);
const { db, price } = suite;

/** The held stop as the paper exchange holds it. */
const paperStop = () => heldStopOnPaper(db);

describe('a declared stop-loss held on the exchange, through kill -9', () => {
  it('fills while the daemon is down and is the one exit sell after the restart', async () => {
    const env = suite.env({
      'guarded.json': JSON.stringify({
        name: 'guarded',
        strategy: 'stop-guarded',
        symbol: 'BTCUSDT',
        schedule: '* * * * * *',
      }),
    });

    // Run 1: the entry fills, then the stop goes on the paper exchange (2 % under the entry); then kill -9.
    const first = new DaemonProcess(env);
    const held = await waitFor('the stop held on the paper exchange', () => paperStop(), { daemon: first });
    expect(held.status).toBe('NEW');
    const stop = Number(held.stop_price);
    expect(stop).toBeGreaterThan(19_500);
    expect(stop).toBeLessThan(19_700);
    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // While it is down the price falls through the stop (above the stop's limit, 0.5 % under it).
    price(stop - 20);

    // Run 2: the first live price triggers and fills the held stop; the journal records that one sell.
    const second = new DaemonProcess(env);
    await waitFor('the held stop to fill', () => paperStop()?.status === 'FILLED', { daemon: second });
    await paperAuditSettled('the journal to agree with the paper exchange', db, second);
    // A few more ticks under the stop: nothing else is sold.
    price(stop - 40);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    expect(auditPaperDb(db).problems).toEqual([]);
    const rows = readDb(db, (d) =>
      d.prepare("SELECT side, type, tag, status FROM orders WHERE instance = 'guarded' ORDER BY seq").all(),
    );
    expect(rows).toEqual([
      { side: 'BUY', type: 'MARKET', tag: 'entry', status: 'FILLED' },
      { side: 'SELL', type: 'STOP_LIMIT', tag: 'exit:stop-loss', status: 'FILLED' },
    ]);
    const fills = readDb(db, (d) =>
      d.prepare("SELECT side, price, qty FROM fills WHERE instance = 'guarded' ORDER BY time").all(),
    ) as { side: string; price: string; qty: string }[];
    expect(fills.map((f) => f.side)).toEqual(['BUY', 'SELL']);
    expect(Number(fills[1]!.price)).toBe(stop - 20);
    const events = readDb(db, (d) => d.prepare("SELECT kind FROM events WHERE instance = 'guarded'").pluck().all());
    expect(events.filter((k) => k === 'held-exit-filled')).toHaveLength(1);
    expect(events.filter((k) => k === 'exit-triggered')).toHaveLength(0);
  }, 120_000);
});
