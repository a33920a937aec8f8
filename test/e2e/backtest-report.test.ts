/**
 * report.html and sweep.html in real headless Chromium (Debian's package, driven by playwright-core), opened
 * from disk as a user opens them: no console error, the charts drawn, every closed trade in the table, the
 * walk-forward scatter with one point per window, no time label cut at a chart's edge, and nothing wider than
 * a phone's screen. The pictures of these pages in docs/ are bench/report-pictures.ts's.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import {
  CHROMIUM,
  launchChromium,
  priceScale,
  recordCanvasText,
  scaleProblems,
  sidewaysOverflow,
  timeAxisLabelsCut,
  timeAxisTimes,
} from './chromium.js';
import { writeSlice } from '../support/recording-slice.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { bot, gridConfig, SAMPLE, sliceFlags } from '../backtest/fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('backtest-report');
let browser: Browser;

/** Two days of the sample with two hours left out (a recorder that was down), for the EMA trend's report. */
const HOLE = { from: Date.UTC(2023, 2, 10, 14), to: Date.UTC(2023, 2, 10, 16) };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  const holed = join(dir, 'holed.jsonl.gz');
  await writeSlice(SAMPLE, holed, Date.UTC(2023, 2, 9), Date.UTC(2023, 2, 11), (h) => h, HOLE);
  const trend = join(dir, 'trend.json');
  writeFileSync(
    trend,
    JSON.stringify({
      name: 'trend',
      strategy: 'ema-trend',
      symbol: 'BTCUSDT',
      params: { timeframe: '15m', fast: 4, slow: 8, rsiPeriod: 6, atrPeriod: 6, quoteAmount: '500' },
      risk: { maxOrderNotional: '600' },
    }),
  );
  const run = ['--config', trend, '--data', holed, '--from', '2023-03-09T12:00:00Z', '--out', join(dir, 'trend')];
  expect((await bot(run)).code).toBe(0);
  const config = gridConfig(dir, { spacingPct: '0.3' });
  expect((await bot(sliceFlags(config, join(dir, 'run'), ['--export', 'trades']))).code).toBe(0);
  const walk = ['--sweep', 'levels=3,4', '--walk-forward', '2', '--train', '12h', '--test', '6h', '--workers', '1'];
  expect((await bot(sliceFlags(config, join(dir, 'sweep'), walk))).code).toBe(0);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
});

async function open(file: string, width: number): Promise<{ page: Page; problems: string[]; close(): Promise<void> }> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
  await recordCanvasText(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(pathToFileURL(file).href);
  await page.locator('canvas').first().waitFor();
  return { page, problems, close: () => context.close() };
}

describe.skipIf(!existsSync(CHROMIUM))('the backtest pages in Chromium', () => {
  it('report.html: charts, every closed trade, and usable at phone width', async () => {
    const file = join(dir, 'run', 'report.html');
    const summary = JSON.parse(readFileSync(join(dir, 'run', 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.trades.length).toBeGreaterThan(0);
    for (const width of [1366, 390]) {
      const { page, problems, close } = await open(file, width);
      expect(await page.locator('h2:has-text("Trades (") + .scroll tbody tr').count()).toBe(summary.trades.length);
      expect(await page.locator('table.metrics th', { hasText: 'Longest drawdown' }).count()).toBe(1);
      expect(await timeAxisLabelsCut(page, '#chart')).toEqual([]);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(problems).toEqual([]);
      await close();
    }
  });

  it("report.html: candles on a time axis linear in time, the strategy's indicators, entries and exits, and an equity pane showing only its figures", async () => {
    const file = join(dir, 'trend', 'report.html');
    const data = JSON.parse(
      readFileSync(file, 'utf8').match(/<script type="application\/json" id="report-data">(.*?)<\/script>/s)![1]!,
    ) as { symbols: { chart: { start: number; step: number; candles: unknown[] }; fills: unknown[] }[] };
    const { chart, fills } = data.symbols[0]!;
    // From the run's start (the warm-up's candles are not drawn), one slot per minute, the hole left empty.
    expect(chart.start).toBe(Date.UTC(2023, 2, 9, 12));
    expect(chart.step).toBe(60_000);
    const empty = chart.candles.flatMap((c, k) => (c === null ? [chart.start + k * chart.step] : []));
    expect(empty.length).toBeGreaterThanOrEqual(120);
    expect(empty.every((t) => t >= HOLE.from && t < HOLE.to)).toBe(true);
    expect(fills.length).toBeGreaterThan(0);
    for (const width of [1366, 390]) {
      const { page, problems, close } = await open(file, width);
      const legend = await page.locator('#chart-legend [data-line]').allTextContents();
      expect(legend).toEqual([
        'trend fast (ema 15m)',
        'trend slow (ema 15m)',
        'trend rsi (rsi 15m) (pane below)',
        'trend atr (atr 15m) (pane below)',
        'buy and hold',
        'equity',
        'drawdown % (pane below)',
      ]);
      // The time labels, read as times, lie on one line across the hole.
      const times = await timeAxisTimes(page, '#chart', chart.start);
      expect(times.length).toBeGreaterThan(2);
      const [a, b] = [times[0]!, times[times.length - 1]!];
      const pxPerMs = (b.x - a.x) / (b.time - a.time);
      expect(times.filter((t) => Math.abs(a.x + (t.time - a.time) * pxPerMs - t.x) > 2)).toEqual([]);
      // Every pane's scale (price, RSI, ATR, equity beside buy and hold, drawdown) shows its figures alone, whole,
      // none covered by a series' name ('buy and hold' over '12000.00'); a short pane has two.
      for (let pane = 0; pane < 5; pane++)
        expect(scaleProblems(await priceScale(page, '#chart', pane), [], 2), `pane ${pane}`).toEqual([]);
      expect(await timeAxisLabelsCut(page, '#chart')).toEqual([]);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(problems).toEqual([]);
      await close();
    }
  }, 60_000);

  it('sweep.html: the walk-forward scatter, stitched equity and picks, usable at phone width', async () => {
    const file = join(dir, 'sweep', 'sweep.html');
    for (const width of [1366, 390]) {
      const { page, problems, close } = await open(file, width);
      expect(await page.locator('svg.scatter circle').count()).toBeLessThanOrEqual(2);
      expect(await page.locator('#oos canvas').count()).toBeGreaterThan(0);
      await expect.poll(() => page.locator('pre.table').textContent()).toMatch(/walk-forward efficiency/);
      for (const chart of ['#chart', '#oos']) expect(await timeAxisLabelsCut(page, chart)).toEqual([]);
      expect(await sidewaysOverflow(page)).toBe(0);
      expect(problems).toEqual([]);
      await close();
    }
  });
});
