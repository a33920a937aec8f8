/**
 * Open orders on the account that this bot did not place (another bot's, a person's): told as a count, in
 * one log line, one notified event and a line in `status`, never one line per order; the journal holds a
 * bounded number of them and closes those the venue no longer lists (issue 27, issue 28).
 */
import { describe, expect, it } from 'vitest';
import { EXTERNAL_REPORT_MS, MAX_EXTERNAL_ROWS } from '../../src/engine/external-orders.js';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { buildStatusView, statusJson, statusTable } from '../../src/status/status-view.js';
import { captureLogger } from '../support/capture-logger.js';
import { buyEveryTick, Harness, instance, strategy } from './harness.js';

let h: Harness;
const ANOTHER_BOT = /another bot may be trading this account/i;

/** An order placed on the account by someone else (straight on the venue, not through the engine). */
function placeElsewhere(h: Harness, price = '50', quantity = '0.01'): Promise<OrderRecord> {
  return h.venue.inner.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', price, quantity });
}

function status(h: Harness) {
  const view = buildStatusView(h.store, { now: h.clock.now(), killSwitchFile: `${h.dir}/no-kill-switch` });
  return { text: statusTable(view), json: statusJson(view) };
}

const idle = strategy({});

describe('open orders of another owner', () => {
  it('at start: one warning, one notified event, a line in status; said again at the next start', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    const theirs = [await placeElsewhere(h), await placeElsewhere(h, '51'), await placeElsewhere(h, '52')];
    await h.start([instance('a', idle)], { logger: log.logger });

    expect(log.messages(ANOTHER_BOT)).toEqual([
      'another bot may be trading this account: 3 open order(s) on it were not placed by this bot (BTCUSDT 3); ' +
        '3 journaled as external orders (no strategy owns them)',
    ]);
    const warnings = log.lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 40);
    expect(warnings).toHaveLength(1);
    expect(h.events('external-orders').map((e) => e.data)).toEqual([
      { total: 3, symbols: { BTCUSDT: 3 }, journaled: 3, untracked: 0 },
    ]);
    for (const o of theirs)
      expect(h.store.orders.byExchangeId(o.displayingId)).toMatchObject({ external: true, status: 'OPEN' });
    const { text, json } = status(h);
    expect(text).toMatch(
      /ANOTHER BOT MAY BE TRADING THIS ACCOUNT: 3 open order\(s\) not placed by this bot \(BTCUSDT 3\)/,
    );
    expect(json.foreignOrders).toMatchObject({ total: 3, symbols: { BTCUSDT: 3 }, journaled: 3, untracked: 0 });

    // Journaled now, but still another owner's: the next start says so again.
    const again = captureLogger();
    await h.restart([instance('a', idle)], { logger: again.logger });
    expect(again.messages(ANOTHER_BOT)).toHaveLength(1);
    expect(h.events('external-orders')).toHaveLength(2);
  });

  it('says nothing when every open order is the bot’s own', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    await h.start([instance('a', buyEveryTick)], { logger: log.logger });
    await h.tick(100);
    await h.tick(100);
    await h.restart([instance('a', buyEveryTick)], { logger: log.logger });
    await h.tick(100);
    await h.engine!.refresh();
    expect(log.messages(ANOTHER_BOT)).toEqual([]);
    expect(h.events('external-orders')).toEqual([]);
    expect(status(h).json.foreignOrders).toBeNull();
  });

  it('while running: told when they appear, again only when more appear a minute on, and once when none are left', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    await h.start([instance('a', idle)], { logger: log.logger });
    expect(log.messages(ANOTHER_BOT)).toEqual([]);

    // A symbol with no live rows is not read by the orders poll: the refresh reads it.
    const first = await placeElsewhere(h);
    await h.tick(100);
    expect(log.messages(ANOTHER_BOT)).toEqual([]);
    await h.engine!.refresh();
    expect(log.messages(ANOTHER_BOT)).toEqual([matching('another bot may be trading this account: 1 open order(s)')]);

    // More within the minute: counted, not told; the same count later: not told.
    const more = [await placeElsewhere(h, '51'), await placeElsewhere(h, '52')];
    await h.tick(100);
    await h.tick(100);
    expect(log.messages(ANOTHER_BOT)).toHaveLength(1);
    // The venue reports no change, so no orders poll runs: the refresh (each minute) tells the growth.
    h.clock.advance(EXTERNAL_REPORT_MS);
    await h.tick(100);
    await h.engine!.refresh();
    expect(log.messages(ANOTHER_BOT)).toEqual([
      matching('1 open order'),
      matching('another bot may be trading this account: 3 open order(s)'),
    ]);
    h.clock.advance(EXTERNAL_REPORT_MS);
    await h.tick(100);
    await h.engine!.refresh();
    expect(log.messages(ANOTHER_BOT)).toHaveLength(2);

    // Cancelled by their owner: the rows close as the venue says, and one line says none are left.
    for (const o of [first, ...more]) await h.venue.inner.cancelOrder('BTCUSDT', o.displayingId);
    await h.tick(100);
    for (const o of [first, ...more])
      expect(h.store.orders.byExchangeId(o.displayingId)).toMatchObject({ status: 'CANCELED' });
    expect(log.messages(/no open orders of another owner left/)).toHaveLength(1);
    await h.engine!.refresh();
    await h.tick(100);
    expect(log.messages(/no open orders of another owner left/)).toHaveLength(1);
    expect(h.events('external-orders').map((e) => e.data.total)).toEqual([1, 3, 0]);
    expect(status(h).json.foreignOrders).toBeNull();
    expect(status(h).text).not.toMatch(ANOTHER_BOT);
  });

  it('a start that finds none left clears what the last run told', async () => {
    h = new Harness();
    h.price(100);
    const theirs = await placeElsewhere(h);
    await h.start([instance('a', idle)]);
    await h.engine!.stop();
    await h.venue.inner.cancelOrder('BTCUSDT', theirs.displayingId);
    await h.restart([instance('a', idle)]);
    expect(h.events('external-orders').map((e) => e.data.total)).toEqual([1, 0]);
    expect(status(h).json.foreignOrders).toBeNull();
  });

  it(`20,000 at start: one line, at most ${MAX_EXTERNAL_ROWS} journaled, the rest counted; rows the venue no longer lists close as CANCELED`, async () => {
    h = new Harness({ balances: { USDT: '100000000', BTC: '2' } });
    h.price(100);
    const theirs: OrderRecord[] = [];
    for (let i = 0; i < 20_000; i++) theirs.push(await placeElsewhere(h, String(10 + (i % 50))));
    const log = captureLogger();
    await h.start([instance('a', idle)], { logger: log.logger });

    expect(log.messages(ANOTHER_BOT)).toEqual([
      'another bot may be trading this account: 20000 open order(s) on it were not placed by this bot ' +
        `(BTCUSDT 20000); ${MAX_EXTERNAL_ROWS} journaled as external orders (no strategy owns them); ` +
        `${20_000 - MAX_EXTERNAL_ROWS} beyond the first ${MAX_EXTERNAL_ROWS} are counted, not journaled (not followed)`,
    ]);
    expect(log.lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 40)).toHaveLength(1);
    const journaled = () => h.store.orders.active().filter((o) => o.external);
    expect(journaled()).toHaveLength(MAX_EXTERNAL_ROWS);
    expect(h.events('external-orders').map((e) => e.data)).toEqual([
      { total: 20_000, symbols: { BTCUSDT: 20_000 }, journaled: MAX_EXTERNAL_ROWS, untracked: 19_000 },
    ]);
    const { text, json } = status(h);
    expect(json.foreignOrders).toMatchObject({ total: 20_000, journaled: MAX_EXTERNAL_ROWS, untracked: 19_000 });
    expect(text.split('\n').filter((l) => l.includes('(external)')).length).toBeLessThanOrEqual(21);

    // Polls while they stay: nothing more is told, and nothing more is journaled.
    await h.tick(100);
    await h.tick(100);
    expect(log.messages(ANOTHER_BOT)).toHaveLength(1);
    expect(journaled()).toHaveLength(MAX_EXTERNAL_ROWS);

    // The journaled ones vanish: from open orders and from history (an exchange keeping only recent history).
    const tracked = journaled();
    for (const row of tracked) {
      await h.venue.inner.cancelOrder('BTCUSDT', row.exchangeId as string);
      h.venue.historyForgets.add(row.exchangeId as string);
    }
    await h.tick(100);
    for (const row of tracked)
      expect(h.store.orders.get(row.localId)).toMatchObject({ status: 'CANCELED', matchMethod: 'vanished' });
    // The room they left is taken by the next of the ones only counted so far.
    expect(journaled()).toHaveLength(MAX_EXTERNAL_ROWS);
    expect(log.messages(ANOTHER_BOT)).toHaveLength(1);
  }, 120_000);
});

function matching(text: string): string {
  return expect.stringContaining(text) as string;
}
