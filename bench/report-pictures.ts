/**
 * `npm run bench:report-pictures`: the pictures of docs/ (backtest-report.png, sweep-report.png,
 * walk-forward.png) taken in headless Chromium from report.html and sweep.html. REPORT_DIR, SWEEP_DIR and
 * WALK_DIR name the runs to picture (docs/strategies.md's runs over the whole sample); without them it makes a
 * grid backtest and a walk-forward sweep over two days of the sample first (test/e2e/backtest-report.test.ts
 * checks those pages). PICTURES_DIR writes them elsewhere than docs/. Prints each picture it writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { run as backtest } from '../src/cli/backtest.js';
import { gridConfig, sliceFlags } from '../test/backtest/fixtures.js';
import { launchChromium } from '../test/e2e/chromium.js';
import { ROOT } from '../test/e2e/daemon-process.js';

async function runs(dir: string): Promise<{ report: string; sweep: string; walk: string }> {
  const given = { report: process.env.REPORT_DIR, sweep: process.env.SWEEP_DIR, walk: process.env.WALK_DIR };
  const config = gridConfig(dir, { spacingPct: '0.3' });
  if (given.report === undefined) {
    if ((await backtest(sliceFlags(config, join(dir, 'run')))) !== 0) throw new Error('the backtest failed');
  }
  if (given.sweep === undefined || given.walk === undefined) {
    const walk = ['--sweep', 'levels=3,4', '--walk-forward', '2', '--train', '12h', '--test', '6h', '--workers', '1'];
    if ((await backtest(sliceFlags(config, join(dir, 'sweep'), walk))) !== 0) throw new Error('the sweep failed');
  }
  return {
    report: join(given.report ?? join(dir, 'run'), 'report.html'),
    sweep: join(given.sweep ?? join(dir, 'sweep'), 'sweep.html'),
    walk: join(given.walk ?? join(dir, 'sweep'), 'sweep.html'),
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'report-pictures-'));
  const browser = await launchChromium();
  try {
    const pages = await runs(dir);
    /** Opens `file` 1280 px wide, waits for its charts, and writes `height` px of it (from `top`) as `png`. */
    const picture = async (file: string, png: string, height: number, top?: string) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 });
      const page = await context.newPage();
      await page.goto(pathToFileURL(file).href);
      await page.locator('canvas').first().waitFor();
      const y = top === undefined ? 0 : ((await page.locator(top).boundingBox())?.y ?? 10) - 10;
      // The charts draw on the next frames after their canvas exists.
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
      const path = join(process.env.PICTURES_DIR ?? join(ROOT, 'docs'), png);
      await page.screenshot({ path, fullPage: true, clip: { x: 0, y, width: 1280, height } });
      await context.close();
      console.log(`wrote ${path}`);
    };
    await picture(pages.report, 'backtest-report.png', 1500);
    await picture(pages.sweep, 'sweep-report.png', 910);
    await picture(pages.walk, 'walk-forward.png', 1000, 'h2:has-text("Walk-forward")');
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
