/**
 * The dashboard in real headless Chromium (Debian's package, driven by playwright-core): a daemon on paper
 * serves it. The page asks for the token once and loads with no console error; it shows every leg of an OCO on
 * the card and on the chart, whose price scale fits the candles and names the legs resting far outside the swing
 * at its edge, or takes them all in when asked, and shows nothing but its own figures (none covered by a line's
 * label); its buttons
 * (after a confirmation) pause an instance, cancel one order, turn stop-buy on and off, exit a position
 * and force an entry through the control API, as the journal records, saying what was sent or why not; it follows the live stream
 * (no polling) and polls when the stream cannot be had; its closed trades and profit tables and equity per
 * quote asset are the API's; no time label is cut at a chart's edge; nothing is wider than a phone, nor cut out
 * of sight on it; after a restart the chart still shows the fills made before it (docs/dashboard*.png are
 * `npm start`'s, made by `npm run bench:dashboard -- --screenshots`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CHROMIUM,
  hiddenOverflow,
  launchChromium,
  priceAxisLabels,
  priceScale,
  recordCanvasText,
  scaleProblems,
  sidewaysOverflow,
  timeAxisLabelsCut,
} from './chromium.js';
import {
  DaemonProcess,
  everyOrderFile,
  http,
  fillCount,
  journal,
  lockstepPaperEnv,
  readDb,
  waitFor,
} from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const TOKEN = 'dashboard-token-8c41e07f';
const dir = tempDir('e2e-dashboard');
const db = join(dir, 'bot.db');
let daemon: DaemonProcess;
let env: NodeJS.ProcessEnv;
let browser: Browser;
let url: string;
const api = (path: string, options: Parameters<typeof http>[1] = {}) =>
  http(`${url}${path}`, { token: TOKEN, ...options });

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  env = await lockstepPaperEnv(
    dir,
    {
      'grid.json': everyOrderFile('swing-trader', { churn: 100_000 }),
      'brackets.json': everyOrderFile('brackets', { near: 20_000 }),
      // A position to exit, an OCO bracket 5 % either side and a LIMIT BUY 5 % below: far outside the swing.
      'exiter.json': JSON.stringify({
        name: 'exiter',
        strategy: 'exit-target',
        symbol: 'BTCUSDT',
        schedule: '* * * * * *',
        params: { dips: false },
      }),
    },
    { period: 23, count: 3_000 },
    { API_PORT: String(port), API_TOKEN: TOKEN },
  );
  daemon = new DaemonProcess(env);
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  await waitFor(
    'some fills and closed trades',
    () => fillCount(db) >= 12 && journal(db).some((r) => r.tag === 'bracket' && r.status === 'OPEN'),
    { daemon },
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop('SIGTERM');
});

interface Opened {
  context: BrowserContext;
  page: Page;
  problems: string[];
  /** Every control API path the page asked for, in order. */
  requests: string[];
}

async function open(width: number, options: { noStream?: boolean; scale?: number } = {}): Promise<Opened> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    deviceScaleFactor: options.scale ?? 1,
  });
  await recordCanvasText(context);
  const page = await context.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('request', (r) => {
    const path = new URL(r.url()).pathname;
    if (path.startsWith('/api/')) requests.push(path);
  });
  if (options.noStream === true) await page.route('**/api/v1/stream', (route) => route.abort());
  else
    page.on('requestfailed', (r) => {
      // The stream is cut when the page closes: not a problem.
      if (!r.url().endsWith('/api/v1/stream'))
        problems.push(
          `${new Date().toISOString()} ${r.method()} ${r.url()}: ${r.failure()?.errorText ?? 'failed'} ${JSON.stringify(r.headers())}`,
        );
    });
  await page.goto(url);
  // Asked once for the token, kept in the tab's session.
  await page.locator('#token-input').fill(TOKEN);
  await page.locator('#token-form button[type=submit]').click();
  await page.locator('article.instance[data-instance="exiter"]').waitFor();
  return { context, page, problems, requests };
}

const card = (page: Page, instance: string) => page.locator(`article.instance[data-instance="${instance}"]`);

async function confirm(page: Page): Promise<void> {
  await page.locator('#confirm-dialog[open]').waitFor();
  await page.locator('#confirm-ok').click();
}

/** The latest operator action the journal holds. */
const lastAction = () =>
  JSON.parse(
    readDb(db, (d) =>
      d.prepare("SELECT data FROM events WHERE kind = 'operator' ORDER BY id DESC LIMIT 1").pluck().get(),
    ) as string,
  ) as Record<string, unknown>;

/** How far the document is wider than the window (0: nothing to scroll sideways). */
/** The value of an attribute on every element the locator finds. */
const attributes = async (locator: Locator, name: string) =>
  Promise.all((await locator.all()).map((l) => l.getAttribute(name)));

describe.skipIf(!existsSync(CHROMIUM))('the dashboard', () => {
  let main: Opened;

  it('loads with no console error: instances, charts with no cut label, equity per quote, trades, profit', async () => {
    main = await open(1366);
    const { page } = main;
    await card(page, 'swing-trader').locator('.badge[data-state="running"]').waitFor();
    await page.locator('.symbol-chart[data-symbol="BTCUSDT"] canvas').first().waitFor();
    await page.locator('#equity canvas').first().waitFor();
    await page.locator('#fills tbody tr td.num').first().waitFor();
    await expect.poll(() => page.locator('#ready').textContent()).toBe('ready');
    expect(await page.locator('#mode').textContent()).toBe('PAPER');
    expect(await page.locator('#venue').textContent()).toBe('simulated exchange (paper)');
    // No logo over the data: the charting library's credit is a link in the footer, not its badge on a chart.
    expect(await page.locator('#tv-attr-logo, .chart a[href*="tradingview"]').count()).toBe(0);
    expect(await page.locator('footer a[href="https://www.tradingview.com/"]').count()).toBe(1);
    // A lockstep replay keeps the wall's time (status.clock): the charts' times are not the recording's.
    expect(await page.locator('#time-note').textContent()).toBe('');
    expect(await page.locator('#footer').textContent()).toMatch(
      /^status at \d{4}-\d\d-\d\d [\d:]{8} UTC \(venue time\)/,
    );
    // The paper account's history across restarts: this is its first daemon run.
    expect(await page.locator('#paper dd[data-fact="daemon runs"]').textContent()).toBe('1');
    expect(await page.evaluate('sessionStorage.length')).toBe(1);
    for (const chart of ['.symbol-chart[data-symbol="BTCUSDT"]', '#equity'])
      expect(await timeAxisLabelsCut(page, chart)).toEqual([]);
    // Names and latest PnL in the legend, nothing but the scale's own figures on the PnL chart's price scale.
    for (const name of ['brackets', 'exiter', 'swing-trader'])
      expect(await page.locator(`#equity-legend [data-instance="${name}"]`).textContent()).toMatch(/^\S+ -?[\d.,]+$/);
    expect((await priceAxisLabels(page, '#equity')).filter((label) => /[a-z]/i.test(label))).toEqual([]);
    expect(scaleProblems(await priceScale(page, '#equity'), [])).toEqual([]);

    // Figures are the API's decimal text (already rounded to the pair), thousands grouped, never re-rounded
    // through a float: the newest fill shown reads exactly as the API gives it (the row and its fill's key read
    // at once: new fills keep coming).
    const newest = await page.evaluate<string[]>(`(() => {
      const row = document.querySelector('#fills tbody tr[data-fill]');
      return [row.dataset.fill, ...[...row.querySelectorAll('td.num')].map((td) => td.textContent)];
    })()`);
    const fill = (
      (await api('/api/v1/fills?limit=500')).body as { fills: { fillKey: string; price: string; quantity: string }[] }
    ).fills.find((f) => f.fillKey === newest[0]);
    const grouped = (text: string) => text.replace(/^(-?\d+)/, (int) => int.replace(/\B(?=(\d{3})+(?!\d))/g, ','));
    expect(fill, `fill ${newest[0]}`).toBeDefined();
    expect(newest.slice(1, 3)).toEqual([grouped(fill!.price), grouped(fill!.quantity)]);

    // Equity per quote asset: the three instances trade BTCUSDT, so one row, in USDT.
    await page.locator('#quotes tr[data-quote="USDT"] td[data-figure="equity"]').waitFor();
    expect(await page.locator('#quotes tbody tr').count()).toBe(1);
    const equity = await page.locator('#quotes tr[data-quote="USDT"] td[data-figure="equity"]').textContent();
    expect(Number(equity?.replace(/,/g, ''))).toBeGreaterThan(9_000);

    // The closed trades are the API's (the newest 50), and the profit table has today's row in USDT.
    await page.locator('#trades tbody tr[data-trade]').first().waitFor();
    const shown = (await attributes(page.locator('#trades tbody tr[data-trade]'), 'data-trade')).map(Number);
    const trades = (await api('/api/v1/trades?limit=500')).body as { trades: { id: number }[] };
    const known = new Set(trades.trades.map((t) => t.id));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.filter((id) => !known.has(id))).toEqual([]);
    // Each says whether it was long or short, as the API does (a SELL of what was not bought opens a short lot).
    const direction = new Map(
      ((await api('/api/v1/trades?limit=500')).body as { trades: { id: number; direction: string }[] }).trades.map(
        (t) => [t.id, t.direction],
      ),
    );
    const sides = await page.evaluate<
      [number, string][]
    >(`[...document.querySelectorAll('#trades tbody tr[data-trade]')]
      .map((r) => [Number(r.dataset.trade), r.querySelector('[data-figure="direction"]').textContent])`);
    expect(sides.filter(([id, side]) => direction.has(id) && direction.get(id) !== side)).toEqual([]);
    await page.locator('#profit tbody tr[data-period]').first().waitFor();
    expect(await page.locator('#profit tbody tr[data-period] td:nth-child(2)').first().textContent()).toBe('USDT');
    await page.locator('#periods button[data-period="month"]').click();
    await expect
      .poll(() => page.locator('#profit tbody tr[data-period] td:first-child').first().textContent())
      .toMatch(/^\d{4}-\d{2}$/);
    expect(main.problems).toEqual([]);
  }, 60_000);

  it('shows every leg of an OCO on the card and on the chart: far legs named at its edge, all on it when asked', async () => {
    const { page } = main;
    const oco = card(page, 'exiter').locator('li[data-order-type="OCO"]');
    await oco.waitFor();
    expect(await attributes(oco.locator('[data-leg]'), 'data-leg')).toEqual(['limit', 'stop', 'stop-limit']);
    const orders = (await api('/api/v1/orders?instance=exiter')).body as {
      orders: { type: string; price: string | null; stopPrice: string | null; limitPrice: string | null }[];
    };
    const bracket = orders.orders.find((o) => o.type === 'OCO');
    const dip = orders.orders.find((o) => o.type === 'LIMIT');
    const prices = [bracket?.price, bracket?.stopPrice, bracket?.limitPrice, dip?.price].map(Number);
    expect(prices.every((p) => p > 0)).toBe(true);
    const chart = '.symbol-chart[data-symbol="BTCUSDT"]';
    // The legs rest 5 % and 6 % from a price that swings 1.5 %: the scale fits the candles, and each leg is named at
    // the edge it lies past (the take-profit above, the stops and the dip below).
    await page.locator(`${chart} [data-edge="above"] [data-leg-price="${bracket?.price}"]`).first().waitFor();
    for (const p of [bracket?.stopPrice, bracket?.limitPrice, dip?.price])
      await page.locator(`${chart} [data-edge="below"] [data-leg-price="${p}"]`).first().waitFor();
    await expect.poll(async () => scaleProblems(await priceScale(page, chart), [])).toEqual([]);
    // Asked for, the scale takes in every leg, however far it rests, and its own figures stay readable.
    await page.locator(`${chart} button[data-scale]`).click();
    for (const p of prices)
      await page.locator(`${chart} [data-legend="price"] [data-leg-price="${p}"]`).first().waitFor();
    await expect.poll(async () => scaleProblems(await priceScale(page, chart), prices)).toEqual([]);
    await page.locator(`${chart} button[data-scale]`).click();
  }, 60_000);

  it('fits a phone: nothing wider than the screen, the cards one under the other', async () => {
    const phone = await open(390, { scale: 2 });
    await phone.page.locator('#trades tbody tr').first().waitFor();
    await phone.page.locator('.symbol-chart canvas').first().waitFor();
    expect(await sidewaysOverflow(phone.page)).toBe(0);
    // Each card's buttons stay together on one line (a narrow card puts them under its name, not one of them).
    for (const instance of ['brackets', 'exiter', 'swing-trader']) {
      // Measured in one turn of the page: a live update re-rendering the card between two buttons is no gap.
      const tops = await phone.page.evaluate<number[]>(
        `[...document.querySelectorAll('article.instance[data-instance="${instance}"] header button')].map((b) => Math.round(b.getBoundingClientRect().top))`,
      );
      expect(tops.length, instance).toBeGreaterThan(0);
      expect(new Set(tops).size, `${instance}: buttons at ${tops.join(', ')}`).toBe(1);
    }
    // Every leg named (on the chart or at its edge) and the chart's figures readable on a narrow chart; nothing
    // overflows out of sight (a table wider than the card says it scrolls).
    const legs = await attributes(
      phone.page.locator('.symbol-chart[data-symbol="BTCUSDT"] [data-leg-price]'),
      'data-leg-price',
    );
    expect(legs.length).toBeGreaterThan(3);
    await expect
      .poll(async () => scaleProblems(await priceScale(phone.page, '.symbol-chart[data-symbol="BTCUSDT"]'), []))
      .toEqual([]);
    expect(await hiddenOverflow(phone.page)).toEqual([]);
    expect(phone.problems).toEqual([]);
    await phone.context.close();
  });

  it('pauses an instance and cancels one order from their buttons, after a confirmation', async () => {
    const { page } = main;
    await card(page, 'swing-trader').locator('button[data-action="pause"]').click();
    await confirm(page);
    await card(page, 'swing-trader').locator('.badge[data-state="paused"]').waitFor();
    await card(page, 'swing-trader').locator('button[data-action="resume"]').waitFor();
    expect(lastAction()).toMatchObject({ action: 'pause', instance: 'swing-trader', source: 'api 127.0.0.1' });

    const dip = journal(db).find((r) => r.tag === 'dip' && r.status === 'OPEN');
    expect(dip).toBeDefined();
    await card(page, 'exiter').locator(`button[data-cancel="${dip?.local_id}"]`).click();
    await confirm(page);
    await waitFor('the cancel in the journal', () =>
      journal(db).some((r) => r.local_id === dip?.local_id && r.status === 'CANCELED'),
    );
    await page.locator('[data-flash="ok"]', { hasText: 'cancel' }).waitFor();
    await card(page, 'exiter').locator(`li[data-order="${dip?.local_id}"]`).waitFor({ state: 'detached' });
    expect(lastAction()).toMatchObject({ action: 'cancel', order: dip?.local_id });
  });

  it('turns stop-buy on and off from its button, shown in the banner', async () => {
    const { page } = main;
    await page.locator('#stop-buy').click();
    await confirm(page);
    await expect.poll(() => page.locator('#stop-buy').textContent()).toMatch(/Stop-buy ON/);
    await page.locator('.state-alert', { hasText: 'Stop-buy on' }).waitFor();
    const on = (await api('/api/v1/status')).body as { stopBuy: { on: boolean } };
    expect(on.stopBuy.on).toBe(true);
    await page.locator('#stop-buy').click();
    await confirm(page);
    await expect.poll(() => page.locator('#stop-buy').textContent()).toBe('Stop-buy');
    expect(lastAction()).toMatchObject({ action: 'stop-buy', on: false });
  });

  it('exits a position from its button: a bad limit price is refused with the field named, then at market', async () => {
    const { page } = main;
    const exitButton = card(page, 'exiter').locator('button[data-action="exit"]');
    const logged = main.problems.length;
    await exitButton.click();
    await page.locator('#exit-dialog[open]').waitFor();
    await page.locator('#exit-price').fill('twenty');
    await page.locator('#exit-ok').click();
    const refused = page.locator('[data-flash="error"]');
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/body\.price.*E_BAD_REQUEST|E_BAD_REQUEST.*body\.price/s);
    expect(journal(db).filter((r) => r.tag === 'exit')).toEqual([]);
    // The browser logs the refused request itself: that line is expected, any other is not.
    main.problems.push(...main.problems.splice(logged).filter((p) => !p.includes('status of 400 (Bad Request)')));

    await exitButton.click();
    await page.locator('#exit-dialog[open]').waitFor();
    await page.locator('#exit-ok').click();
    const answer = page.locator('[data-flash="ok"]', { hasText: 'exit' });
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.textContent()).toMatch(/SELL/);
    await waitFor('the exit SELL filled', () =>
      journal(db).some((r) => r.tag === 'exit' && r.type === 'MARKET' && r.status === 'FILLED'),
    );
    expect(journal(db).filter((r) => r.tag === 'exit')).toHaveLength(1);
    // Paused, its bracket cancelled, and nothing left to exit: the button is gone.
    await card(page, 'exiter').locator('.badge[data-state="paused"]').waitFor();
    await card(page, 'exiter').locator('li[data-order-type="OCO"]').waitFor({ state: 'detached' });
    await exitButton.waitFor({ state: 'detached' });
    expect(lastAction()).toMatchObject({ action: 'exit', instance: 'exiter', type: 'MARKET' });
    expect(main.problems).toEqual([]);
  }, 60_000);

  it('forces an entry from its button: a LIMIT BUY spending the amount typed, tagged force-entry', async () => {
    const { page } = main;
    await card(page, 'brackets').locator('button[data-action="entry"]').click();
    await page.locator('#entry-dialog[open]').waitFor();
    await page.locator('#entry-price').fill('1000');
    await page.locator('#entry-amount').fill('25');
    expect(await page.locator('#entry-form input[value="limit"]').isChecked()).toBe(true);
    await page.locator('#entry-ok').click();
    const answer = page.locator('[data-flash="ok"]', { hasText: 'force-entry' });
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.textContent()).toMatch(
      /force-entry: sent LIMIT BUY 0\.025 at 1000(\.0+)? BTCUSDT as brackets-\d+/,
    );
    const rows = journal(db).filter((r) => r.tag === 'force-entry');
    expect(rows.map((r) => [r.instance, r.side, r.type, Number(r.price)])).toEqual([
      ['brackets', 'BUY', 'LIMIT', 1000],
    ]);
    expect(lastAction()).toMatchObject({ action: 'force-entry', instance: 'brackets', type: 'LIMIT' });
    expect(main.problems).toEqual([]);
  }, 60_000);

  it('follows the live stream: a change made elsewhere shows without the page asking for the status', async () => {
    const { page, requests } = main;
    await expect.poll(() => page.locator('#footer').getAttribute('data-updates')).toBe('live');
    const from = requests.length;
    expect((await api('/api/v1/instances/brackets/pause', { method: 'POST', body: {} })).status).toBe(200);
    await card(page, 'brackets').locator('.badge[data-state="paused"]').waitFor({ timeout: 10_000 });
    expect(requests.slice(from).filter((p) => p === '/api/v1/status')).toEqual([]);
    expect(main.problems).toEqual([]);
  });

  it('polls when the stream cannot be had, and says so', async () => {
    const polled = await open(1366, { noStream: true });
    const { page, requests } = polled;
    await expect.poll(() => page.locator('#footer').getAttribute('data-updates'), { timeout: 15_000 }).toBe('polling');
    expect(await page.locator('#footer').textContent()).toMatch(/polling every 2 s \(no live stream/);
    expect((await api('/api/v1/instances/brackets/resume', { method: 'POST', body: {} })).status).toBe(200);
    await card(page, 'brackets').locator('.badge[data-state="running"]').waitFor({ timeout: 10_000 });
    expect(requests.filter((p) => p === '/api/v1/status').length).toBeGreaterThan(1);
    await polled.context.close();
  });

  it('shows the fills from before a restart on the chart, at their time', async () => {
    await daemon.stop('SIGTERM');
    const before = (await readDb(db, (d) =>
      d.prepare("SELECT MAX(time) FROM fills WHERE symbol = 'BTCUSDT'").pluck().get(),
    )) as number;
    daemon = new DaemonProcess(env);
    await waitFor('the control API again', () => daemon.messages(/control API and dashboard on/).length > 0, {
      daemon,
    });
    const { page, problems, context } = await open(1366);
    const chart = page.locator('.symbol-chart[data-symbol="BTCUSDT"]');
    await chart.locator('canvas').first().waitFor();
    const fills = (
      (await api('/api/v1/fills?limit=50')).body as { fills: { symbol: string; time: string }[] }
    ).fills.filter((f) => f.symbol === 'BTCUSDT');
    const oldest = fills.map((f) => f.time).sort()[0] as string;
    // Some of the fills shown are from before the restart: the chart's candles (kept across it) reach back to them,
    // and every fill is marked on it.
    expect(Date.parse(oldest)).toBeLessThanOrEqual(before);
    await expect.poll(() => chart.getAttribute('data-markers')).toBe(String(fills.length));
    expect(await chart.getAttribute('data-earlier-fills')).toBe('0');
    expect(Date.parse((await chart.getAttribute('data-from')) ?? '')).toBeLessThanOrEqual(Date.parse(oldest));
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
