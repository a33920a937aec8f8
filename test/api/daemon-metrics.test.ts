/**
 * The daemon's metrics from their first scrape: every series a counter will have is there at 0 (so the first
 * event shows in increase() and alerts), and an instance's symbol label is its configured symbol before it has
 * an order or a fill.
 */
import { expect, it } from 'vitest';
import { createMetrics, type MetricSources } from '../../src/api/daemon-metrics.js';
import { ENDPOINTS } from '../../src/exchange/client.js';
import { D } from '../../src/market/decimal.js';
import type { FillTotal, OrderCount } from '../../src/operator/queries.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS, simPairConfig } from '../../src/sim/default-market.js';
import { openStore } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { parseExposition } from '../support/prometheus-text.js';
import { storeQueries } from '../support/store-queries.js';
import { tempDir } from '../support/temp-dir.js';

/** The sum of the samples of `name` with these labels; undefined when there is no such series. */
function metric(text: string, name: string, labels: Record<string, string>): number | undefined {
  const found = parseExposition(text).samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}

function daemonMetrics(orders: OrderCount[] = [], fills: FillTotal[] = [], status?: MetricSources['read']['status']) {
  const metrics = createMetrics();
  const instance = { instance: 'grid', state: 'running', symbols: [] as string[], position: { quantity: D(0) } };
  const report = { instances: [{ ...instance, realisedPnl: D(0), unrealisedPnl: undefined }] };
  const read = {
    status: status ?? (() => ({ view: { report, holdings: new Map(), groups: [] } })),
    orderCounts: () => orders,
    fillTotals: () => fills,
    engineInstances: () => [{ name: 'grid', symbol: 'BTCUSDT', counters: { refused: 0 } }],
    brakes: () => ({ killSwitch: false, stopBuy: false }),
    balanceFigures: () => [],
    jobs: () => [],
    quoteAsset: () => 'USDT',
    venueRefusals: () => [],
  } as unknown as MetricSources['read'];
  metrics.bind({
    read,
    now: () => 0,
    balances: false,
    ready: () => true,
    build: { version: '0.1.0', revision: undefined },
  });
  return metrics;
}

it('has every counter series at 0 before its first event: orders, fills, requests, retries, errors', async () => {
  const text = (await daemonMetrics().render()).text;
  for (const name of ['placed', 'rejected', 'filled', 'cancelled'])
    for (const side of ['BUY', 'SELL'])
      for (const type of ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'])
        expect(
          metric(text, `spot_bot_orders_${name}_total`, { bot_instance: 'grid', symbol: 'BTCUSDT', side, type }),
        ).toBe(0);
  for (const side of ['BUY', 'SELL']) {
    expect(metric(text, 'spot_bot_fills_total', { bot_instance: 'grid', symbol: 'BTCUSDT', side })).toBe(0);
    expect(metric(text, 'spot_bot_traded_notional_total', { bot_instance: 'grid', side, quote: 'USDT' })).toBe(0);
  }
  expect(metric(text, 'spot_bot_orders_unknown_outcome', { bot_instance: 'grid', symbol: 'BTCUSDT' })).toBe(0);
  for (const endpoint of ENDPOINTS)
    for (const outcome of ['ok', 'error'])
      expect(metric(text, 'spot_bot_exchange_requests_total', { endpoint, outcome })).toBe(0);
  expect(metric(text, 'spot_bot_exchange_retries_total', { endpoint: 'GET /api/v4/spot/open' })).toBe(0);
  for (const code of ['E_NETWORK', 'E_TIMEOUT', 'E_RATE_LIMIT', 'E_AUTH'])
    expect(metric(text, 'spot_bot_exchange_errors_total', { code })).toBe(0);
  // Before its first order or fill, the instance's symbol is the configured one, never ''.
  expect(text).toMatch(/^spot_bot_position\{bot_instance="grid",symbol="BTCUSDT"\} 0$/m);
  expect(text).toMatch(/^spot_bot_realised_pnl\{bot_instance="grid",symbol="BTCUSDT",quote="USDT"\} 0$/m);
  expect(text).not.toMatch(/symbol=""/);
});

it('counts the journal and the requests over those zeros, and keeps the series of other labels', async () => {
  const rejected = { instance: 'grid', symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', status: 'REJECTED' };
  const metrics = daemonMetrics(
    [{ ...rejected, placed: 0, n: 2 } as OrderCount],
    [{ instance: null, symbol: 'ETHUSDT', side: 'SELL', n: 3, notional: 30 }],
  );
  metrics.exchangeObserver.requested('POST /api/v4/spot/order', false, 0.1, '-1013');
  const text = (await metrics.render()).text;
  expect(metric(text, 'spot_bot_orders_rejected_total', { bot_instance: 'grid', side: 'BUY', type: 'LIMIT' })).toBe(2);
  expect(metric(text, 'spot_bot_orders_rejected_total', { bot_instance: 'grid', side: 'SELL', type: 'LIMIT' })).toBe(0);
  expect(metric(text, 'spot_bot_fills_total', { bot_instance: 'external', symbol: 'ETHUSDT', side: 'SELL' })).toBe(3);
  expect(metric(text, 'spot_bot_fills_total', { bot_instance: 'grid', symbol: 'BTCUSDT', side: 'SELL' })).toBe(0);
  expect(metric(text, 'spot_bot_exchange_errors_total', { code: '-1013' })).toBe(1);
  expect(
    metric(text, 'spot_bot_exchange_requests_total', { endpoint: 'POST /api/v4/spot/order', outcome: 'error' }),
  ).toBe(1);
});

it('shows a multi-pair file: each pair’s exposure, and the file’s pairs, open trades, exposure and PnL together', async () => {
  const store = openStore({ path: ':memory:', clock: { now: () => Date.now() } });
  try {
    const now = Date.now();
    store.events.record(now, undefined, 'daemon-started', { mode: 'paper', venue: 'x', pid: process.pid });
    for (const symbol of ['BTCUSDT', 'ETHUSDT']) store.events.record(now, `trend/${symbol}`, 'started', { symbol });
    store.orders.insert(
      orderRow({ localId: 't-1', instance: 'trend/BTCUSDT', status: 'OPEN', price: '20000', quantity: '0.001' }),
    );
    store.prices.put({ symbol: 'BTCUSDT', price: '20150', time: now }, now);
    const rules = {
      BTCUSDT: pairRulesFrom(DEFAULT_PAIRS[0]!),
      ETHUSDT: pairRulesFrom(simPairConfig({ id: 4, code: 'ETH' }, { id: 2, code: 'USDT' })),
    };
    const read = storeQueries(store, tempDir('metrics-groups'), { rules });
    const text = (await daemonMetrics([], [], read.status).render()).text;
    const pair = { bot_instance: 'trend/BTCUSDT', symbol: 'BTCUSDT', quote: 'USDT' };
    expect(metric(text, 'spot_bot_exposure', pair)).toBe(20.15);
    expect(metric(text, 'spot_bot_exposure', { ...pair, bot_instance: 'trend/ETHUSDT', symbol: 'ETHUSDT' })).toBe(0);
    const group = { bot_group: 'trend', quote: 'USDT' };
    expect(
      ['pairs', 'running_pairs', 'open_trades', 'exposure', 'realised_pnl', 'unrealised_pnl'].map((m) =>
        metric(text, `spot_bot_group_${m}`, group),
      ),
    ).toEqual([2, 2, 1, 20.15, 0, 0]);
    // A file of one pair is no group.
    expect(text).not.toMatch(/bot_group="grid"/);
  } finally {
    store.close();
  }
});

it('shows how far paper on recordings is behind PAPER_SPEED’s pace (0 on any other clock)', async () => {
  const instance = { instance: 'grid', state: 'running', symbols: [] as string[], position: { quantity: D(0) } };
  const report = { instances: [{ ...instance, realisedPnl: D(0), unrealisedPnl: undefined }] };
  const status = (replay?: { lagMs: number; speed: number; behind: boolean }) =>
    (() => ({
      view: { report, holdings: new Map(), groups: [], replay },
    })) as unknown as MetricSources['read']['status'];
  const behind = (await daemonMetrics([], [], status({ lagMs: 44_640_000, speed: 7200, behind: true })).render()).text;
  expect(metric(behind, 'spot_bot_replay_lag_seconds', {})).toBe(44_640);
  const wall = (await daemonMetrics([], [], status()).render()).text;
  expect(metric(wall, 'spot_bot_replay_lag_seconds', {})).toBe(0);
});
