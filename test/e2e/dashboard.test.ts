/**
 * The dashboard in real headless Chromium (Debian's package, driven by playwright-core): a daemon on paper
 * serves it; the page asks for the token once, loads with no console error, shows the instance and a price
 * chart, and its pause button (after the confirmation) pauses the instance, as the database records. Writes
 * docs/dashboard.png for the README when SCREENSHOT=1.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, launchChromium, recordCanvasText, timeAxisLabelsCut } from './chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess, everyOrderFile, freePort, readDb, ROOT, waitFor, lockstepPaperEnv } from './daemon-process.js';

const TOKEN = 'dashboard-token-8c41e07f';
const dir = mkdtempSync(join(tmpdir(), 'e2e-dashboard-'));
const db = join(dir, 'bot.db');
let daemon: DaemonProcess;
let browser: Browser;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  daemon = new DaemonProcess(
    await lockstepPaperEnv(
      dir,
      {
        'grid.json': everyOrderFile('swing-trader', { churn: 100_000 }),
        'brackets.json': everyOrderFile('brackets', { near: 20_000 }),
      },
      { period: 23, count: 3_000 },
      { API_PORT: String(port), API_TOKEN: TOKEN },
    ),
  );
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  await waitFor(
    'some fills',
    () => readDb(db, (d) => d.prepare('SELECT COUNT(*) FROM fills').pluck().get() as number) >= 8,
    {
      daemon,
      ms: 60_000,
    },
  );
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('the dashboard', () => {
  it.skipIf(!existsSync(CHROMIUM))(
    'loads with no console error, shows the instances and a chart, and pauses an instance from its button',
    async () => {
      const context = await browser.newContext({ viewport: { width: 1366, height: 900 }, deviceScaleFactor: 1 });
      await recordCanvasText(context);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
      await page.goto(url);
      // Asked once for the token, kept in the tab's session.
      await page.locator('#token-input').fill(TOKEN);
      await page.locator('#token-form button[type=submit]').click();
      await page.locator('article.instance[data-instance="swing-trader"] .badge[data-state="running"]').waitFor();
      await page.locator('article.instance[data-instance="brackets"]').waitFor();
      await page.locator('.symbol-chart[data-symbol="BTCUSDT"] canvas').first().waitFor();
      await page.locator('#equity canvas').first().waitFor();
      await page.locator('#fills tbody tr td.num').first().waitFor();
      await expect.poll(() => page.locator('#ready').textContent()).toBe('ready');
      for (const chart of ['.symbol-chart[data-symbol="BTCUSDT"]', '#equity'])
        expect(await timeAxisLabelsCut(page, chart)).toEqual([]);
      expect(await page.locator('#mode').textContent()).toBe('PAPER');
      // The paper account's history across restarts: this is its first daemon run.
      expect(await page.locator('#paper dd[data-fact="daemon runs"]').textContent()).toBe('1');
      expect(await page.evaluate('sessionStorage.length')).toBe(1);

      if (process.env.SCREENSHOT === '1') {
        // A minute of prices makes a chart worth looking at.
        await page.waitForTimeout(60_000);
        await page.mouse.move(1, 1);
        await page.screenshot({ path: join(ROOT, 'docs/dashboard.png') });
        const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
        const small = await phone.newPage();
        await small.goto(url);
        await small.locator('#token-input').fill(TOKEN);
        await small.locator('#token-form button[type=submit]').click();
        await small.locator('article.instance').first().waitFor();
        await small.waitForTimeout(2500);
        await small.screenshot({ path: join(ROOT, '.tmp/dashboard-phone.png'), fullPage: true });
        await phone.close();
      }

      await page.locator('article.instance[data-instance="swing-trader"] button[data-action="pause"]').click();
      await page.locator('#confirm-dialog[open]').waitFor();
      await page.locator('#confirm-ok').click();
      await waitFor('the pause in the database', () =>
        readDb(db, (d) =>
          d.prepare("SELECT 1 FROM events WHERE instance = 'swing-trader' AND kind = 'paused'").pluck().get(),
        ),
      );
      await page.locator('article.instance[data-instance="swing-trader"] .badge[data-state="paused"]').waitFor();
      await page.locator('article.instance[data-instance="swing-trader"] button[data-action="resume"]').waitFor();
      const action = readDb(db, (d) =>
        d.prepare("SELECT data FROM events WHERE kind = 'operator' ORDER BY id DESC LIMIT 1").pluck().get(),
      ) as string;
      expect(JSON.parse(action)).toMatchObject({ action: 'pause', instance: 'swing-trader', source: 'api 127.0.0.1' });
      expect(problems).toEqual([]);
      await context.close();
    },
    180_000,
  );
});
