/**
 * The daily summary at its UTC time, on timers the test moves: recorded once as an event from the status
 * read model (PnL, fills, fees, open orders, position of the UTC day) and sent like any other notification.
 * On paper on recordings its time and day are the venue's (the recording's), not the wall's (issue 20).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/app/env.js';
import { nextSummaryTime } from '../../src/notify/daily-summary.js';
import { notificationsFromEnv } from '../../src/notify/setup.js';
import { openStore, type Store } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { ManualTimers, Receiver } from './stand-ins.js';
import { captureLogger } from '../support/capture-logger.js';

const DAY = Date.UTC(2024, 0, 1);
const HOUR = 3_600_000;

let store: Store;
let hook: Receiver;
beforeEach(async () => {
  store = openStore({ path: ':memory:', clock: { now: () => DAY } });
  hook = await Receiver.start();
});
afterEach(async () => {
  store.close();
  await hook.close();
});

function fill(key: string, side: 'BUY' | 'SELL', price: string, fee: string, time: number) {
  store.orders.insert(orderRow({ localId: key, instance: 'grid', seq: time, side, status: 'FILLED' }));
  store.fills.insert({
    fillKey: key,
    orderLocalId: key,
    instance: 'grid',
    symbol: 'BTCUSDT',
    side,
    price,
    qty: '1',
    fee,
    feeAsset: 'USDT',
    feeIn: 'quote',
    time,
    source: 'trade',
    delivered: true,
    recordedAt: time,
  });
}

/** A webhook that takes the daily summary only, at 18:00 UTC, sent at once. */
function summaryEnv() {
  return parseEnv({
    NOTIFY_WEBHOOK_URL: `${hook.url}/hook`,
    NOTIFY_WEBHOOK_SECRET: 'secret',
    NOTIFY_WEBHOOK_EVENTS: 'daily-summary',
    NOTIFY_GROUP_MS: '0',
    NOTIFY_DAILY_SUMMARY: '18:00',
  });
}

describe('the daily summary', () => {
  it('is due at the next HH:MM UTC', () => {
    expect(nextSummaryTime(DAY + 10 * HOUR, 18 * 60)).toBe(DAY + 18 * HOUR);
    expect(nextSummaryTime(DAY + 18 * HOUR, 18 * 60)).toBe(DAY + 42 * HOUR);
    expect(nextSummaryTime(DAY + 10 * HOUR, 0)).toBe(DAY + 24 * HOUR);
  });

  it('is recorded once at its time from the status read model, and sent', async () => {
    const timers = new ManualTimers(DAY + 10 * HOUR);
    store.events.record(DAY + 9 * HOUR, undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 1 });
    fill('f-1', 'BUY', '100', '0.1', DAY - HOUR);
    fill('f-2', 'SELL', '110', '0.11', DAY + 11 * HOUR);
    fill('f-3', 'BUY', '105', '0.2', DAY + 12 * HOUR);
    store.orders.insert(orderRow({ localId: 'o-1', instance: 'grid', seq: 99, status: 'OPEN' }));
    const env = summaryEnv();
    const notifications = notificationsFromEnv(env, { store, logger: captureLogger().logger, mode: 'live', timers });
    const deadline = Date.now() + 10_000;
    while (hook.received.length === 0 && Date.now() < deadline) {
      timers.advance(HOUR);
      await new Promise((r) => setTimeout(r, 10));
    }
    await notifications?.stop(1000);

    const summaries = store.events.list({ kinds: ['daily-summary'] });
    expect(summaries).toHaveLength(1);
    expect(summaries[0]?.time).toBe(DAY + 18 * HOUR);
    expect(summaries[0]?.data).toEqual({
      at: DAY + 18 * HOUR,
      day: '2024-01-01',
      instances: [
        {
          instance: 'grid',
          state: 'unknown',
          realisedToday: '9.69',
          realisedPnl: '9.59',
          fills: 2,
          fees: { USDT: '0.31' },
          openOrders: 1,
          position: { quantity: '1', averagePrice: '105' },
        },
      ],
    });
    expect(hook.received).toHaveLength(1);
    expect((hook.received[0]?.json as { text: string }).text).toBe(
      'LIVE · daily summary 2024-01-01\ngrid: PnL 9.69 · 2 fills fees 0.31 USDT · 1 open · pos 1 @ 105',
    );
  });

  it("on paper on recordings, is due at the venue's HH:MM and sums the venue's day, while delivery keeps the wall's time", async () => {
    // The venue's clock is the recording's (1 January 2024), the wall's is years later; both move an hour a step.
    const venue = new ManualTimers(DAY + 10 * HOUR);
    const wall = new ManualTimers(Date.UTC(2026, 10, 26, 10));
    fill('f-1', 'BUY', '100', '0.1', DAY + 11 * HOUR);
    fill('f-2', 'SELL', '110', '0.11', DAY + 12 * HOUR);
    const env = summaryEnv();
    const notifications = notificationsFromEnv(env, {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wall,
      venueClock: venue,
    });
    const deadline = Date.now() + 10_000;
    while (hook.received.length === 0 && Date.now() < deadline) {
      venue.advance(HOUR);
      wall.advance(HOUR);
      await new Promise((r) => setTimeout(r, 10));
    }
    await notifications?.stop(1000);

    const summaries = store.events.list({ kinds: ['daily-summary'] });
    expect(summaries.map((s) => [s.time, (s.data as { day: string }).day])).toEqual([[DAY + 18 * HOUR, '2024-01-01']]);
    expect((summaries[0]?.data as { instances: { fills: number }[] }).instances.map((i) => i.fills)).toEqual([2]);
    expect((hook.received[0]?.json as { text: string }).text).toMatch(/^PAPER · daily summary 2024-01-01\n/);
    // What the notifier journals (the sent record) is in the venue's time too.
    const sent = store.events.list({ kinds: ['notification-sent'] });
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((e) => e.time < DAY + 10 * HOUR || e.time >= DAY + 24 * HOUR)).toEqual([]);
  });
});
