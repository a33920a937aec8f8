/**
 * What `status` shows, from a database built with the store API: instance states and reasons, open orders,
 * today's fills, realised and unrealised PnL at the last recorded price, and the engine-wide brakes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildStatusView, fillJson, statusJson, statusTable } from '../../src/status/status-view.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS, simPairConfig } from '../../src/sim/default-market.js';
import type { ClockReading } from '../../src/ports/clock.js';
import type { FillRow } from '../../src/store/fills.js';
import { newOrderRow, type OrderRow } from '../../src/store/order-journal.js';
import { openStore, type Store } from '../../src/store/store.js';
import { tempDir } from '../support/temp-dir.js';

const NOW = Date.UTC(2024, 4, 2, 12, 0, 0);
const YESTERDAY = NOW - 86_400_000;
const clock: ClockReading = { now: () => NOW };
const BTCUSDT = pairRulesFrom(DEFAULT_PAIRS[0]!);

function fill(over: Partial<FillRow> & Pick<FillRow, 'fillKey' | 'side' | 'price' | 'qty' | 'time'>): FillRow {
  return {
    orderLocalId: 'grid-1',
    instance: 'grid',
    symbol: 'BTCUSDT',
    fee: '0',
    feeAsset: 'USDT',
    feeIn: 'quote',
    source: 'trade',
    delivered: true,
    recordedAt: over.time,
    ...over,
  };
}

let dir: string;
let store: Store;
let killFile: string;

beforeEach(() => {
  dir = tempDir('status-view');
  killFile = join(dir, 'KILL');
  store = openStore({ path: join(dir, 'bot.db'), clock });
  const order = (localId: string, over: Partial<OrderRow>) =>
    store.orders.insert(
      newOrderRow({
        localId,
        instance: 'grid',
        symbol: 'BTCUSDT',
        side: 'BUY',
        type: 'LIMIT',
        status: 'FILLED',
        createdAt: YESTERDAY,
        ...over,
      }),
    );
  order('grid-1', { exchangeId: '1', price: '100', quantity: '2', filledQty: '2' });
  order('grid-2', { exchangeId: '2', side: 'SELL', price: '120', quantity: '1', filledQty: '1' });
  order('grid-3', {
    exchangeId: '3',
    status: 'OPEN',
    price: '90',
    quantity: '0.5',
    tag: 'grid:-1:buy',
    createdAt: NOW - 1000,
  });
  store.orders.insert(
    newOrderRow({
      localId: 'ext-9',
      instance: undefined,
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'LIMIT',
      status: 'OPEN',
      external: true,
      exchangeId: '9',
      price: '150',
      quantity: '0.1',
      createdAt: NOW,
    }),
  );
  // Bought 2 at 100 yesterday, sold 1 at 120 today: realised 20 today, 1 held at 100.
  store.fills.insert(fill({ fillKey: 't1', side: 'BUY', price: '100', qty: '2', time: YESTERDAY }));
  store.fills.insert(
    fill({ fillKey: 't2', orderLocalId: 'grid-2', side: 'SELL', price: '120', qty: '1', time: NOW - 5000 }),
  );
  store.prices.put({ symbol: 'BTCUSDT', price: '110.5', time: NOW - 2000 }, NOW);
  store.prices.put({ symbol: 'BTCUSDT', price: '1', time: NOW - 9000 }, NOW); // older: ignored
  store.events.record(NOW - 60_000, undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 4242 });
  store.events.record(NOW - 59_000, 'grid', 'started', { symbol: 'BTCUSDT' });
  store.events.record(NOW - 59_000, 'dca', 'started', { symbol: 'BTCUSDT' });
  store.events.record(NOW - 30_000, 'dca', 'paused', { reason: 'onTick threw: boom' });
  store.events.record(NOW - 20_000, undefined, 'kill-switch', { on: true });
  store.events.record(NOW - 10_000, undefined, 'circuit-breaker', { state: 'open', until: NOW + 60_000, trips: 1 });
});

afterEach(() => {
  store.close();
});

describe('status view', () => {
  it('reports states, open orders, fills today and PnL at the last recorded price, as JSON', () => {
    const view = buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: (pid) => pid === 4242 });
    const json = statusJson(view);
    expect(json.daemon).toEqual({
      state: 'running',
      pid: 4242,
      mode: 'paper',
      venue: 'embedded',
      since: new Date(NOW - 60_000).toISOString(),
      clock: 'wall',
    });
    expect(json.clock).toEqual({ wall: json.time, venue: json.time, venueClock: 'wall' });
    const grid = json.instances.find((i) => i.instance === 'grid')!;
    expect(grid).toMatchObject({
      state: 'running',
      position: { quantity: '1', averagePrice: '100' },
      realisedPnl: '20',
      realisedToday: '20',
      unrealisedPnl: '10.5',
    });
    expect(grid.openOrders.map((o) => [o.localId, o.price, o.tag])).toEqual([['grid-3', '90', 'grid:-1:buy']]);
    expect(grid.todaysFills.map((f) => f.fillKey)).toEqual(['t2']);
    expect(json.instances.find((i) => i.instance === 'dca')).toMatchObject({
      state: 'paused',
      reason: 'onTick threw: boom',
    });
    expect(json.externalOrders.map((o) => o.localId)).toEqual(['ext-9']);
    expect(json.lastPrices).toEqual([{ symbol: 'BTCUSDT', price: '110.5', time: new Date(NOW - 2000).toISOString() }]);
    expect(json.killSwitch).toMatchObject({ filePresent: false, last: { on: true } });
    expect(json.circuitBreaker).toMatchObject({ state: 'open', until: NOW + 60_000 });
    expect(json.authFailure).toBeNull();
  });

  it('shows the file as the kill switch, an authentication halt until cleared, and the operator actions', () => {
    const view = () => buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true });
    // The last event says on, the file is absent: off.
    expect(statusJson(view()).killSwitch).toMatchObject({ on: false, last: { on: true } });
    expect(statusTable(view())).toContain('kill switch: off');
    store.events.record(NOW - 1000, undefined, 'auth-failed', { call: 'balance', code: 'E_AUTH', message: 'HTTP 401' });
    expect(statusJson(view()).authHalted).toBe(true);
    store.events.record(NOW - 500, undefined, 'auth-cleared', {});
    store.events.record(NOW - 400, undefined, 'operator', {
      action: 'pause',
      instance: 'grid',
      outcome: 'paused',
      source: '127.0.0.1',
    });
    const json = statusJson(view());
    expect(json.authHalted).toBe(false);
    expect(json.recentActions).toEqual([
      {
        id: expect.any(Number) as number,
        time: new Date(NOW - 400).toISOString(),
        instance: null,
        kind: 'operator',
        data: { action: 'pause', instance: 'grid', outcome: 'paused', source: '127.0.0.1' },
      },
    ]);
    const text = statusTable(view());
    expect(text).toContain('authentication: ok (last failure 2024-05-02 11:59:59, cleared');
    expect(text).toContain('2024-05-02 11:59:59  pause grid: paused from 127.0.0.1');
  });

  it('rounds averages and PnL for people: to the pair when its rules are known, else 8 places; never with floats', () => {
    // Bought 1 at 100 and 2 at 101, sold 1 at 100: the average is 100.666… for ever, the realised PnL -0.666….
    store.fills.insert(fill({ fillKey: 'a1', instance: 'avg', side: 'BUY', price: '100', qty: '1', time: YESTERDAY }));
    store.fills.insert(fill({ fillKey: 'a2', instance: 'avg', side: 'BUY', price: '101', qty: '2', time: YESTERDAY }));
    store.fills.insert(
      fill({ fillKey: 'a3', instance: 'avg', side: 'SELL', price: '100', qty: '1', time: NOW - 1000 }),
    );
    store.events.record(NOW - 59_000, 'avg', 'started', { symbol: 'BTCUSDT' });
    // The journal keeps every digit.
    expect(store.fills.positions.tracker('avg').position.averagePrice.toFixed()).toMatch(/^100\.6{40,}/);

    const bare = buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true });
    const row = statusTable(bare)
      .split('\n')
      .find((l) => l.startsWith('avg '))!;
    expect(row).toContain('100.66666667');
    expect(row).toContain('-0.66666667');
    expect(row).not.toMatch(/\d\.\d{9,}/);
    const json = statusJson(bare).instances.find((i) => i.instance === 'avg')!;
    expect(json.position).toEqual({ quantity: '2', averagePrice: '100.66666667' });
    expect(json.realisedPnl).toBe('-0.66666667');

    // With the pair's rules (BTCUSDT: tick 0.01, base precision 6, quote precision 2), as the daemon has them.
    const view = buildStatusView(store, {
      wallNow: NOW,
      killSwitchFile: killFile,
      isAlive: () => true,
      rules: (symbol) => (symbol === 'BTCUSDT' ? BTCUSDT : undefined),
    });
    const daemon = statusJson(view).instances.find((i) => i.instance === 'avg')!;
    expect(daemon.position).toEqual({ quantity: '2', averagePrice: '100.67' });
    expect(daemon.realisedPnl).toBe('-0.67');
    expect(daemon.realisedToday).toBe('-0.67');
    // 2 held at 100.666… valued at the last price, 110.5: 19.666….
    expect(daemon.unrealisedPnl).toBe('19.67');
    expect(
      statusTable(view)
        .split('\n')
        .find((l) => l.startsWith('avg ')),
    ).toMatch(/\s2\s+100\.67\s+221\s+-0\.67\s+-0\.67\s+19\.67$/);

    // `bot status` (another process, no venue): the pair's rules as the daemon's engine last stored them, so
    // the same figures as the daemon's.
    store.pairRules.put([DEFAULT_PAIRS[0]!], NOW);
    const stored = buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true });
    expect(statusJson(stored).instances.find((i) => i.instance === 'avg')).toEqual(daemon);
    expect(statusTable(stored)).toBe(statusTable(view));
  });

  it("gives a fill rounded to its pair for people, and as the journal holds it when asked (precision 'full')", () => {
    // A fee of 0.1 % on 0.001234 BTC at 22,345.67: 0.02757455678 USDT, more places than USDT's 2.
    const f = fill({ fillKey: 'f1', side: 'BUY', price: '22345.67', qty: '0.001234', fee: '0.02757455678', time: NOW });
    expect(fillJson(f, BTCUSDT)).toMatchObject({ price: '22345.67', quantity: '0.001234', fee: '0.03' });
    expect(fillJson(f, BTCUSDT, 'full')).toMatchObject({
      price: '22345.67',
      quantity: '0.001234',
      fee: '0.02757455678',
    });
  });

  it('keeps each pair’s rules as the daemon last stored them: written when they change, unreadable ones not used', () => {
    const read = () =>
      store.db.prepare('SELECT config, updated_at AS at FROM pair_rules WHERE symbol = ?').get('BTCUSDT') as
        { config: string; at: number } | undefined;
    expect(store.pairRules.get('BTCUSDT')).toBeUndefined();
    store.pairRules.put([DEFAULT_PAIRS[0]!], NOW);
    expect(store.pairRules.get('BTCUSDT')).toEqual(BTCUSDT);
    // The same configuration again: nothing written.
    store.pairRules.put([DEFAULT_PAIRS[0]!], NOW + 60_000);
    expect(read()?.at).toBe(NOW);
    // A new tick: written, and read so.
    const finer = { ...DEFAULT_PAIRS[0]!, filters: [{ filterType: 'PRICE_FILTER', tickSize: '0.001' }] };
    store.pairRules.put([finer], NOW + 120_000);
    expect(read()?.at).toBe(NOW + 120_000);
    expect(store.pairRules.get('BTCUSDT')?.tickSize.toFixed()).toBe('0.001');
    // A configuration that does not read (a tick that is not a number): not used, figures to 8 places.
    store.pairRules.put([{ ...finer, filters: [{ filterType: 'PRICE_FILTER', tickSize: 'tiny' }] }], NOW + 180_000);
    expect(store.pairRules.get('BTCUSDT')).toBeUndefined();
  });

  it('prints a table with the reasons, the open orders and the brakes', () => {
    writeFileSync(killFile, '');
    store.events.record(NOW - 1000, undefined, 'auth-failed', { call: 'balance', code: 'E_AUTH', message: 'HTTP 401' });
    const text = statusTable(buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true }));
    expect(text).toContain('daemon: running (pid 4242, paper on embedded) since 2024-05-02 11:59:00');
    expect(text).toContain(`kill switch: ON (file ${killFile} present)`);
    expect(text).toContain('circuit breaker: open until 2024-05-02 12:01:00');
    expect(text).toContain(
      'authentication: FAILED at 2024-05-02 11:59:59: HTTP 401 (trading halted: fix the keys or clock, then kill -USR2 the daemon, clear it through the control API, or restart)',
    );
    expect(text).toMatch(/^grid\s+running\s+1\s+1\s+1\s+100\s+165\.75\s+20\s+20\s+10\.5$/m);
    expect(text).toMatch(/^dca\s+paused\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+-$/m);
    expect(text).toContain('  dca: paused: onTick threw: boom');
    expect(text).toContain('  grid: LIMIT BUY 0.5 @ 90  OPEN  filled 0  [grid:-1:buy]');
    expect(text).toContain('  (external): LIMIT SELL 0.1 @ 150  OPEN');
    expect(text).toContain('last prices: BTCUSDT 110.5 (2024-05-02 11:59:58)');
  });

  it("speaks the recording's time on paper on recordings, and shows it beside the wall's, labelled", () => {
    // The daemon runs two and a half years after the data: "today" is the data's day, not the wall's.
    const wall = Date.UTC(2026, 10, 26, 9, 0, 0);
    store.events.record(wall - 60_000, undefined, 'daemon-started', {
      mode: 'paper',
      venue: 'embedded',
      clock: 'data',
      pid: 4242,
    });
    // `bot status` (another process): the venue's time is when the daemon last wrote its prices (NOW).
    const view = buildStatusView(store, { wallNow: wall, killSwitchFile: killFile, isAlive: () => true });
    const json = statusJson(view);
    expect(json.time).toBe(new Date(NOW).toISOString());
    expect(json.clock).toEqual({ wall: new Date(wall).toISOString(), venue: json.time, venueClock: 'data' });
    const grid = json.instances.find((i) => i.instance === 'grid')!;
    expect([grid.realisedToday, grid.todaysFills.map((f) => f.fillKey)]).toEqual(['20', ['t2']]);
    const text = statusTable(view);
    expect(text.split('\n')[0]).toBe(
      "status at venue 2024-05-02 12:00:00 UTC (the recording's time) · wall 2026-11-26 09:00:00 UTC",
    );
    expect(text).toContain('since 2026-11-26 08:59:00 UTC (wall)');
    expect(text).toMatch(/^grid\s+running\s+1\s+1\s+1\s+100\s+165\.75\s+20\s+20\s+10\.5$/m);
    // The control API gives the daemon's clock; a day of data later, nothing is today's any more.
    const later = buildStatusView(store, { now: NOW + 86_400_000, wallNow: wall, killSwitchFile: killFile });
    expect(statusJson(later).instances.find((i) => i.instance === 'grid')?.realisedToday).toBe('0');
    // Before any price was written, the recording's time is not known and says so.
    const empty = openStore({ path: join(dir, 'empty.db'), clock });
    try {
      empty.events.record(wall, undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', clock: 'data' });
      const first = statusTable(buildStatusView(empty, { wallNow: wall, killSwitchFile: killFile }));
      expect(first.split('\n')[0]).toBe(
        "status at venue: the recording's time is not known yet (no price recorded) · wall 2026-11-26 09:00:00 UTC",
      );
    } finally {
      empty.close();
    }
  });

  it('groups a multi-pair file’s pairs under it: a row per pair and one total (open trades, exposure, PnL)', () => {
    const usdt = { id: 2, code: 'USDT' };
    const rules = new Map(
      [
        BTCUSDT,
        pairRulesFrom(simPairConfig({ id: 4, code: 'ETH' }, usdt)),
        pairRulesFrom(simPairConfig({ id: 9, code: 'XRP' }, usdt)),
      ].map((r) => [r.symbol, r]),
    );
    const pair = (symbol: string) => `trend/${symbol}`;
    for (const symbol of ['BTCUSDT', 'ETHUSDT', 'XRPUSDT'])
      store.events.record(NOW - 50_000, pair(symbol), 'started', { symbol });
    store.events.record(NOW - 40_000, pair('XRPUSDT'), 'paused', { reason: 'by the operator' });
    // BTC holds 0.5 bought at 100 (last 110.5); ETH has a working buy of 1 at 10 (last 12); XRP only dust.
    const order = (localId: string, symbol: string, over: Partial<OrderRow>) =>
      store.orders.insert(
        newOrderRow({
          localId,
          instance: pair(symbol),
          symbol,
          side: 'BUY',
          type: 'LIMIT',
          status: 'FILLED',
          exchangeId: localId,
          createdAt: NOW - 4000,
          ...over,
        }),
      );
    order('trend-1', 'BTCUSDT', { price: '100', quantity: '0.5', filledQty: '0.5' });
    order('trend-2', 'ETHUSDT', { status: 'OPEN', price: '10', quantity: '1' });
    order('trend-3', 'XRPUSDT', { price: '1', quantity: '0.0000001', filledQty: '0.0000001' });
    const at = { time: NOW - 3000, side: 'BUY' as const, price: '100', qty: '0.5' };
    store.fills.insert(fill({ ...at, fillKey: 'tb', instance: pair('BTCUSDT'), orderLocalId: 'trend-1' }));
    store.fills.insert(
      fill({
        ...at,
        fillKey: 'tx',
        instance: pair('XRPUSDT'),
        orderLocalId: 'trend-3',
        symbol: 'XRPUSDT',
        price: '1',
        qty: '0.0000001',
      }),
    );
    store.prices.put({ symbol: 'ETHUSDT', price: '12', time: NOW - 2000 }, NOW);
    store.prices.put({ symbol: 'XRPUSDT', price: '0.5', time: NOW - 2000 }, NOW);
    const view = buildStatusView(store, {
      wallNow: NOW,
      killSwitchFile: killFile,
      isAlive: () => true,
      rules: (symbol) => rules.get(symbol),
    });
    const json = statusJson(view);
    expect(json.groups).toEqual([
      {
        name: 'trend',
        instances: ['trend/BTCUSDT', 'trend/ETHUSDT', 'trend/XRPUSDT'],
        totals: [
          {
            quoteAsset: 'USDT',
            pairs: 3,
            running: 2,
            openTrades: 2,
            openOrders: 1,
            fillsToday: 2,
            // 0.5 x 110.5 + 1 x 12; the dust is not held.
            exposure: '67.25',
            realisedPnl: '0',
            realisedToday: '0',
            unrealisedPnl: '5.25',
          },
        ],
      },
    ]);
    const byName = new Map(json.instances.map((i) => [i.instance, i]));
    expect(['trend/BTCUSDT', 'trend/ETHUSDT', 'trend/XRPUSDT', 'grid'].map((n) => byName.get(n)?.group)).toEqual([
      'trend',
      'trend',
      'trend',
      null,
    ]);
    expect(['trend/BTCUSDT', 'trend/ETHUSDT', 'trend/XRPUSDT'].map((n) => byName.get(n)?.exposure)).toEqual([
      '55.25',
      '12',
      '0',
    ]);
    expect(byName.get('trend/XRPUSDT')?.openTrade).toBe(false);
    // The terminal: the pairs' rows, then the file's total right under its last pair.
    const lines = statusTable(view).split('\n');
    const last = lines.findIndex((l) => l.startsWith('trend/XRPUSDT '));
    expect(lines[last - 2]).toMatch(/^trend\/BTCUSDT\s+running\s+0\s+1\s+0\.5\s+100\s+55\.25\s+0\s+0\s+5\.25$/);
    expect(lines[last + 1]).toMatch(
      /^trend total\s+2\/3 running\s+1\s+2\s+2 held\s+-\s+67\.25 USDT\s+0 USDT\s+0 USDT\s+5\.25 USDT$/,
    );
    // One read model: the same from another process, the rules as the daemon stored them.
    store.pairRules.put(
      [DEFAULT_PAIRS[0]!, simPairConfig({ id: 4, code: 'ETH' }, usdt), simPairConfig({ id: 9, code: 'XRP' }, usdt)],
      NOW,
    );
    expect(
      statusJson(buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true })).groups,
    ).toEqual(json.groups);
  });

  it('tells a clean stop from a daemon that died, and then shows no instance as running', () => {
    const dead = buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => false });
    expect(dead.daemon.state).toBe('ended');
    expect(dead.report.instances.find((i) => i.instance === 'grid')).toMatchObject({
      state: 'stopped',
      reason: 'the daemon ended without a clean stop',
    });
    store.events.record(NOW - 500, undefined, 'daemon-stopped', { pid: 4242, reason: 'SIGTERM' });
    const stopped = statusTable(
      buildStatusView(store, { wallNow: NOW, killSwitchFile: killFile, isAlive: () => true }),
    );
    expect(stopped).toContain('daemon: stopped at 2024-05-02 11:59:59');
  });
});
