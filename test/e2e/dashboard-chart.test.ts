/**
 * The page's price chart in headless Chromium, from a daemon on paper on a day and a half of the sample's BTC candles
 * with two hours left out (a recorder that was down), replayed from the second day (the first warms up the
 * strategies' candles and the chart's): the EMA trend's declared indicators (its EMAs over the candles, its RSI and
 * ATR in panes of their own) and the DCA's exit bracket, 5 % under and 3 % over its entry. The time axis is linear in
 * time across the hole (its labels read as times lie on one line), the hole is empty slots; the price scale fits the
 * candles, the bracket's far legs are named at the chart's edges until "Show all orders" stretches the scale over
 * them; no figure is cut at an edge; a phone shows the same with nothing overflowing out of sight.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSlice } from '../support/recording-slice.js';
import { ema } from '../../src/strategy/api.js';
import {
  CHROMIUM,
  hiddenOverflow,
  launchChromium,
  priceScale,
  recordCanvasText,
  timeAxisLabelsCut,
  timeAxisTimes,
} from './chromium.js';
import { DaemonProcess, daemonEnv, fillCount, http, ROOT, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const HOUR = 3_600_000;
const FROM = Date.UTC(2023, 2, 8);
const HOLE = { from: Date.UTC(2023, 2, 8, 14), to: Date.UTC(2023, 2, 8, 16) };
const REPLAY_FROM = Date.UTC(2023, 2, 9);
const dir = tempDir('e2e-dashboard-chart');
const db = join(dir, 'bot.db');
const CHART = '.symbol-chart[data-symbol="BTCUSDT"]';
let daemon: DaemonProcess;
let browser: Browser;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const recording = join(dir, 'btc.jsonl.gz');
  await writeSlice(
    join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz'),
    recording,
    FROM,
    REPLAY_FROM + 12 * HOUR,
    (h) => h,
    HOLE,
  );
  const config = join(dir, 'config');
  mkdirSync(config);
  const file = (name: string, strategy: string, params: object, schedule = '*/5 * * * * *') =>
    writeFileSync(
      join(config, `${name}.json`),
      JSON.stringify({ name, strategy, symbol: 'BTCUSDT', schedule, params, risk: { maxOrderNotional: '100' } }),
    );
  // Indicators on 15-minute candles: a short warm-up, so the day before the replay fills it.
  file('trend', 'ema-trend', {
    timeframe: '15m',
    fast: 4,
    slow: 8,
    rsiPeriod: 6,
    atrPeriod: 6,
    quoteAmount: '50',
  });
  file(
    'dca',
    'dca',
    {
      quoteAmount: '25',
      intervalMinutes: 60,
      orderType: 'MARKET',
      maxBuys: 2,
      budgetQuote: '100',
      exit: { takeProfitPct: '3', stopLossPct: '5', stopLimitPct: '0.5' },
    },
    '0 * * * * *',
  );
  daemon = new DaemonProcess(
    daemonEnv({
      DB_PATH: db,
      CONFIG_DIR: config,
      KILL_SWITCH_FILE: join(dir, 'KILL'),
      PAPER_DATA: recording,
      PAPER_FROM: new Date(REPLAY_FROM).toISOString(),
      PAPER_SPEED: '60',
      API_PORT: String(port),
    }),
  );
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  await waitFor('the DCA bought and its bracket rests', () => fillCount(db) >= 1, { daemon });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop('SIGTERM');
});

async function open(width: number): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
  await recordCanvasText(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  await page.goto(url);
  await page.locator(`${CHART} canvas`).first().waitFor();
  // The bracket is on the page and the chart was drawn with the orders of that status.
  await expect.poll(() => page.locator(`${CHART}[data-below]`).getAttribute('data-below')).not.toBe('0');
  return { page, problems, close: () => context.close() };
}

const attr = (page: Page, name: string) => page.locator(CHART).getAttribute(name);

describe.skipIf(!existsSync(CHROMIUM))('the price chart', () => {
  it('draws candles on a time axis linear in time, the hole in the data left empty', async () => {
    const { page, problems, close } = await open(1366);
    expect(await page.locator(`${CHART} [data-timeframe]`).getAttribute('data-timeframe')).toBe('1m');
    const from = Date.parse((await attr(page, 'data-from')) ?? '');
    const to = Date.parse((await attr(page, 'data-to')) ?? '');
    const slots = Number(await attr(page, 'data-slots'));
    // A day of minutes (what the daemon keeps), every minute a slot whether a candle opened in it or not.
    expect(slots).toBeGreaterThanOrEqual(1440);
    expect(to - from).toBe((slots - 1) * 60_000);
    expect(from).toBeLessThan(HOLE.from);
    expect(Number(await attr(page, 'data-empty'))).toBeGreaterThanOrEqual(120);
    // The chart as the page drew it: its time labels, read as times, lie on one line (the hole keeps its width).
    const times = await timeAxisTimes(page, CHART, from);
    expect(times.some((t) => t.time < HOLE.from) && times.some((t) => t.time > HOLE.to)).toBe(true);
    const [a, b] = [times[0]!, times[times.length - 1]!];
    const pxPerMs = (b.x - a.x) / (b.time - a.time);
    const off = times.filter((t) => Math.abs(a.x + (t.time - a.time) * pxPerMs - t.x) > 2);
    expect(
      off.map((t) => `${t.text} at ${t.x.toFixed(1)}`),
      times.map((t) => t.text).join(' '),
    ).toEqual([]);
    expect(await timeAxisLabelsCut(page, CHART)).toEqual([]);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it("draws the strategy's declared indicators: the EMAs over the price, RSI and ATR in panes of their own", async () => {
    const { page, problems, close } = await open(1366);
    const lines = async (legend: string) =>
      (await page.locator(`${CHART} [data-legend="${legend}"] [data-line]`).allTextContents()).sort();
    expect(await lines('price')).toEqual(['trend fast (ema 15m)', 'trend slow (ema 15m)']);
    expect(await lines('panes')).toEqual(['trend atr (atr 15m)', 'trend rsi (rsi 15m)']);
    // The API gives the values the page drew: the fast EMA ready once converged on the data's first candles
    // (its warm-up of 15-minute candles from FROM), on every candle after that.
    const chart = (await http(`${url}/api/v1/chart?symbol=BTCUSDT`)).body as {
      start: number;
      step: number;
      candles: unknown[];
      indicators: { name: string; lines: { values: (number | null)[] }[] }[];
    };
    const fast = chart.indicators.find((i) => i.name === 'fast')!.lines[0]!.values;
    const readyAt = FROM + (ema('15m', 4).warmUp + 1) * 15 * 60_000;
    const slot = (j: number) => chart.start + j * chart.step;
    expect(fast.filter((v, j) => v !== null && slot(j) < readyAt - 15 * 60_000)).toEqual([]);
    expect(fast.filter((v, j) => v === null && slot(j) >= readyAt && chart.candles[j] !== null)).toEqual([]);
    expect(fast.filter((v) => v !== null).length).toBeGreaterThan(chart.candles.length / 2);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it('fits the price: far legs named at the edge, until "Show all orders" stretches the scale over every leg', async () => {
    const { page, problems, close } = await open(1366);
    const orders = (await http(`${url}/api/v1/orders?instance=dca`)).body as {
      orders: { type: string; price: string; stopPrice: string; limitPrice: string }[];
    };
    const bracket = orders.orders.find((o) => o.type === 'OCO')!;
    // The take-profit 3 % over the entry and the stop 5 % under it, beyond a day's range of candles.
    await page.locator(`${CHART} [data-edge="below"] [data-leg-price="${bracket.stopPrice}"]`).waitFor();
    await page.locator(`${CHART} [data-edge="below"] [data-leg-price="${bracket.limitPrice}"]`).waitFor();
    const fitted = await scaleRange(page);
    expect(fitted.high).toBeLessThan(Number(bracket.price) * 1.02);
    expect(fitted.low).toBeGreaterThan(Number(bracket.stopPrice));
    await page.locator(`${CHART} button[data-scale]`).click();
    await expect.poll(() => attr(page, 'data-below')).toBe('0');
    await expect.poll(async () => (await scaleRange(page)).low).toBeLessThan(Number(bracket.limitPrice));
    expect((await scaleRange(page)).high).toBeGreaterThan(Number(bracket.price));
    expect(await page.locator(`${CHART} [data-legend="price"] [data-leg-price="${bracket.stopPrice}"]`).count()).toBe(
      1,
    );
    // Its figures still whole: none cut at the scale's top or bottom.
    const scale = await priceScale(page, CHART);
    expect(scale.texts.filter((t) => t.top < 0 || t.bottom > scale.height)).toEqual([]);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);

  it('fits a phone: nothing overflows out of sight, no time label cut', async () => {
    const { page, problems, close } = await open(390);
    await page.locator('#quotes tbody tr[data-quote]').waitFor();
    await page.locator('#trades tbody tr').first().waitFor();
    expect(await hiddenOverflow(page)).toEqual([]);
    expect(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBe(0);
    expect(await timeAxisLabelsCut(page, CHART)).toEqual([]);
    expect(problems).toEqual([]);
    await close();
  }, 60_000);
});

/** The prices the chart's scale shows now, from where its figures are drawn (the scale is linear). */
async function scaleRange(page: Page): Promise<{ low: number; high: number }> {
  const scale = await priceScale(page, CHART);
  const figures = scale.texts
    .map((t) => ({ value: Number(t.text.replace(/,/g, '')), y: (t.top + t.bottom) / 2 }))
    .filter((f) => Number.isFinite(f.value));
  const [first, last] = [figures[0]!, figures[figures.length - 1]!];
  const at = (y: number) => first.value + ((y - first.y) * (last.value - first.value)) / (last.y - first.y);
  return { low: at(scale.height), high: at(0) };
}
