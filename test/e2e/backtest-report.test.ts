/**
 * report.html and sweep.html in real headless Chromium (Debian's package, driven by playwright-core), opened
 * from disk as a user opens them: no console error, the charts drawn, every closed trade in the table, the
 * walk-forward scatter with one point per window, no time label cut at a chart's edge, and nothing wider than
 * a phone's screen. With SCREENSHOT=1 it writes docs/backtest-report.png, docs/sweep-report.png and
 * docs/walk-forward.png (of REPORT_DIR, SWEEP_DIR and WALK_DIR when given: runs over the whole sample, see
 * docs/strategies.md).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, launchChromium, recordCanvasText, timeAxisLabelsCut } from './chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { bot, gridConfig, sliceFlags, tempDir } from '../backtest/fixtures.js';
import { ROOT } from './daemon-process.js';

const dir = tempDir('backtest-report-');
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  const config = gridConfig(dir, { spacingPct: '0.3' });
  expect((await bot(sliceFlags(config, join(dir, 'run'), ['--export', 'trades']))).code).toBe(0);
  const walk = ['--sweep', 'levels=3,4', '--walk-forward', '2', '--train', '12h', '--test', '6h', '--workers', '1'];
  expect((await bot(sliceFlags(config, join(dir, 'sweep'), walk))).code).toBe(0);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
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

/** How far the document is wider than the window (0: nothing to scroll sideways). */
const overflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

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
      expect(await overflow(page)).toBe(0);
      expect(problems).toEqual([]);
      await close();
    }
  });

  it('sweep.html: the walk-forward scatter, stitched equity and picks, usable at phone width', async () => {
    const file = join(dir, 'sweep', 'sweep.html');
    for (const width of [1366, 390]) {
      const { page, problems, close } = await open(file, width);
      expect(await page.locator('svg.scatter circle').count()).toBeLessThanOrEqual(2);
      expect(await page.locator('#oos canvas').count()).toBeGreaterThan(0);
      await expect.poll(() => page.locator('pre.table').textContent()).toMatch(/walk-forward efficiency/);
      for (const chart of ['#chart', '#oos']) expect(await timeAxisLabelsCut(page, chart)).toEqual([]);
      expect(await overflow(page)).toBe(0);
      expect(problems).toEqual([]);
      await close();
    }
  });

  it.runIf(process.env.SCREENSHOT === '1')('writes the pictures for docs/', async () => {
    const report = join(process.env.REPORT_DIR ?? join(dir, 'run'), 'report.html');
    const sweep = join(process.env.SWEEP_DIR ?? join(dir, 'sweep'), 'sweep.html');
    const walk = join(process.env.WALK_DIR ?? join(dir, 'sweep'), 'sweep.html');
    const a = await open(report, 1280);
    await a.page.waitForTimeout(500);
    await a.page.screenshot({
      path: join(ROOT, 'docs/backtest-report.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1280, height: 1500 },
    });
    await a.close();
    const s = await open(sweep, 1280);
    await s.page.waitForTimeout(500);
    await s.page.screenshot({
      path: join(ROOT, 'docs/sweep-report.png'),
      fullPage: true,
      clip: { x: 0, y: 0, width: 1280, height: 910 },
    });
    await s.close();
    const b = await open(walk, 1280);
    const top = (await b.page.locator('h2:has-text("Walk-forward")').boundingBox())?.y ?? 0;
    await b.page.waitForTimeout(500);
    await b.page.screenshot({
      path: join(ROOT, 'docs/walk-forward.png'),
      fullPage: true,
      clip: { x: 0, y: top - 10, width: 1280, height: 1000 },
    });
    await b.close();
  });
});
