/**
 * A multi-pair strategy file of twenty pairs on the page, in headless Chromium on a phone's width: the real listener
 * and the operator layer's real queries over a journal (no daemon: only the page and the read model are under
 * test). The file is one card, a row per pair and the total; nothing is wider than the phone nor cut out of sight;
 * a pair's row opens its own card (its buttons), its chart and its PnL line; the PnL chart draws the file's total,
 * not twenty lines. DASHBOARD_GROUPS_SHOT=path keeps a screenshot.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiServer, startApiServer } from '../../src/api/api-server.js';
import { createMetrics } from '../../src/api/daemon-metrics.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import type { OperatorActions } from '../../src/operator/actions.js';
import { simPairConfig } from '../../src/sim/default-market.js';
import { openStore, type Store } from '../../src/store/store.js';
import { CHROMIUM, hiddenOverflow, launchChromium, sidewaysOverflow } from '../e2e/chromium.js';
import { orderRow } from '../store/fixtures.js';
import { captureLogger } from '../support/capture-logger.js';
import { storeQueries } from '../support/store-queries.js';
import { tempDir } from '../support/temp-dir.js';

const BASES = ['BTC', 'ETH', 'SOL', 'XRP', 'ADA', 'DOGE', 'AVAX', 'LINK', 'DOT', 'TRX'];
const MORE = ['MATIC', 'LTC', 'BCH', 'ATOM', 'NEAR', 'FIL', 'APT', 'ARB', 'OP', '1000SATS'];
const SYMBOLS = [...BASES, ...MORE].map((b) => `${b}USDT`);
const FILE = 'usdt-trend';

let store: Store;
let server: ApiServer;
let browser: Browser;

beforeAll(async () => {
  const dir = tempDir('dashboard-groups');
  store = openStore({ path: join(dir, 'bot.db'), clock: { now: () => Date.now() } });
  const now = Date.now();
  store.events.record(now, undefined, 'daemon-started', { mode: 'paper', venue: 'test', pid: process.pid });
  const usdt = { id: 2, code: 'USDT' };
  const rules = Object.fromEntries(
    SYMBOLS.map((symbol, k) => [symbol, pairRulesFrom(simPairConfig({ id: 10 + k, code: symbol.slice(0, -4) }, usdt))]),
  );
  SYMBOLS.forEach((symbol, k) => {
    const instance = `${FILE}/${symbol}`;
    store.events.record(now, instance, 'started', { symbol });
    store.prices.put({ symbol, price: '1000', time: now }, now);
    // Every third pair has a working buy of 0.05 at its last price, 1000: an open trade worth 50.
    if (k % 3 === 0)
      store.orders.insert(
        orderRow({ localId: `o-${k}`, instance, symbol, seq: k + 1, status: 'OPEN', price: '1000', quantity: '0.05' }),
      );
  });
  // Four round trips of 0.05 closed in the last hour: three bought at 990 and sold at 1000 (+0.5 USDT each), one
  // bought at 1010 (-0.5): realised PnL, nothing left held.
  ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT'].forEach((symbol, k) => {
    for (const [side, price, at] of [
      ['BUY', symbol === 'XRPUSDT' ? '1010' : '990', now - 3_600_000 + k * 60_000],
      ['SELL', '1000', now - 1_800_000 + k * 60_000],
    ] as const) {
      const localId = `f-${symbol}-${side}`;
      const order = { localId, instance: `${FILE}/${symbol}`, symbol, side, price, quantity: '0.05' };
      store.orders.insert(
        orderRow({ ...order, seq: 100 + store.orders.all().length, status: 'FILLED', createdAt: at }),
      );
      store.fills.insert({
        fillKey: localId,
        orderLocalId: localId,
        instance: order.instance,
        symbol,
        side,
        price,
        qty: '0.05',
        fee: '0',
        feeAsset: 'USDT',
        feeIn: 'quote',
        source: 'trade',
        delivered: true,
        time: at,
        recordedAt: at,
      });
    }
  });
  store.events.record(now, `${FILE}/DOGEUSDT`, 'paused', { reason: 'by the operator' });
  store.events.record(now, 'grid', 'started', { symbol: 'BTCUSDT' });
  server = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    operator: {
      read: storeQueries(store, dir, { rules }),
      act: {} as OperatorActions,
      build: { version: '0.0.0', revision: undefined },
    },
    now: () => Date.now(),
    wall: wallClock,
    logger: captureLogger().logger,
    token: undefined,
    metrics: createMetrics(),
    metricsBalances: false,
  });
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  store?.close();
});

describe.skipIf(!existsSync(CHROMIUM))('a multi-pair file on the page', () => {
  it('is one card of twenty pair rows and the total, readable on a phone; a row opens its pair', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(server.url);
    const group = page.locator(`article.group[data-group="${FILE}"]`);
    await group.waitFor();
    // The file of one pair keeps its own card; the twenty pairs have none of their own until opened.
    await page.locator('article.instance[data-instance="grid"]').waitFor();
    expect(await page.locator(`#instances > article.instance[data-instance^="${FILE}/"]`).count()).toBe(0);
    const rows = group.locator('tbody tr.pair');
    expect(await rows.locator('.pair-toggle').allTextContents()).toEqual([...SYMBOLS].sort());
    expect(await group.locator('tr.pair[data-instance$="/DOGEUSDT"] [data-state]').textContent()).toBe('paused');
    // Seven pairs hold a trade (every third: its working buy of 0.05 at 1000 is 50 USDT): 350 USDT together.
    expect(await group.locator('tr.pair[data-open-trade="true"]').count()).toBe(7);
    expect(await group.locator('tr.pair[data-instance$="/BTCUSDT"] [data-figure="exposure"]').textContent()).toBe('50');
    const total = group.locator('tfoot tr.total[data-quote="USDT"]');
    expect(await total.locator('[data-figure="exposure"]').textContent()).toBe('350');
    expect(await total.locator('[data-figure="running"]').textContent()).toBe('19/20 run');
    expect(await group.locator('[data-figure="open-trades"]').textContent()).toBe('7');
    if (process.env.DASHBOARD_GROUPS_SHOT)
      await group.screenshot({ path: process.env.DASHBOARD_GROUPS_SHOT, animations: 'disabled' });
    // Readable on a phone: nothing wider than the screen, nothing cut out of sight, every row one line high.
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await hiddenOverflow(page)).toEqual([]);
    // Measured in one turn of the page: a live update re-rendering the card between two rows' measures is no gap.
    const heights = await page.evaluate<number[]>(
      `[...document.querySelectorAll('article.group[data-group="${FILE}"] tbody tr.pair')].map((tr) => tr.getBoundingClientRect().height)`,
    );
    expect(heights).toHaveLength(SYMBOLS.length);
    expect(Math.min(...heights)).toBeGreaterThan(0);
    expect(Math.max(...heights)).toBeLessThan(Math.min(...heights) * 1.5);

    // The PnL chart: the file's total (its pairs added: 3 x 0.5 - 0.5), not twenty pairs' lines.
    const legend = page.locator('#equity-legend');
    await legend.locator(`[data-instance="${FILE} total"]`).waitFor();
    const lines = async () =>
      (await legend.locator('[data-instance]').allTextContents()).filter((t) => t.startsWith(FILE));
    expect(await lines()).toEqual([`${FILE} total 1`]);

    // A row opens its pair's card (its buttons) under it, its chart and its PnL line; again, it closes all three.
    const eth = group.locator('tr.pair[data-instance$="/ETHUSDT"] .pair-toggle');
    await eth.click();
    const card = group.locator(`article.instance[data-instance="${FILE}/ETHUSDT"]`);
    await card.locator('button[data-action="pause"]').waitFor();
    await page.locator('.symbol-chart[data-symbol="ETHUSDT"]').waitFor();
    expect(await eth.getAttribute('aria-expanded')).toBe('true');
    expect(await lines()).toEqual([`${FILE} total 1`, `${FILE}/ETHUSDT 0.5`]);
    if (process.env.DASHBOARD_GROUPS_SHOT)
      await page
        .locator('#equity')
        .locator('..')
        .screenshot({ path: process.env.DASHBOARD_GROUPS_SHOT.replace(/\.png$/, '-pnl.png'), animations: 'disabled' });
    expect(await sidewaysOverflow(page)).toBe(0);
    expect(await hiddenOverflow(page)).toEqual([]);
    await group.locator('tr.pair[data-instance$="/ETHUSDT"] .pair-toggle').click();
    await card.waitFor({ state: 'detached' });
    await page.locator('.symbol-chart[data-symbol="ETHUSDT"]').waitFor({ state: 'detached' });
    expect(await lines()).toEqual([`${FILE} total 1`]);
    // Charted without opening: the pairs holding a trade (and the single file's pair).
    const charted = await Promise.all(
      (await page.locator('.symbol-chart').all()).map((c) => c.getAttribute('data-symbol')),
    );
    expect(charted).toEqual(SYMBOLS.filter((_, k) => k % 3 === 0).sort());
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
