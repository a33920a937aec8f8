/**
 * The dashboard's charts in the venue's time: a daemon on paper on a recording replayed at 10x (its clock the
 * recording's, not the wall's) serves the page in headless Chromium, and the price chart and the PnL chart show
 * times inside the recording's range (an hour of data twelve hours of the day away from the wall's, so a wall
 * time on either axis cannot pass for one of the recording's).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium, recordCanvasText, timeAxis } from './chromium.js';
import { DaemonProcess, everyOrderFile, fillCount, http, lockstepPaperEnv, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const HOUR = 3_600_000;
const dir = tempDir('e2e-dashboard-venue-time');
const db = join(dir, 'bot.db');
/** An hour of recording, on a day years back, starting twelve hours of the day from the wall's hour now. */
const start = Date.UTC(2023, 5, 15) + ((new Date().getUTCHours() + 12) % 24) * HOUR;
const end = start + HOUR;
let daemon: DaemonProcess;
let browser: Browser;
let url: string;

beforeAll(async () => {
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  const env = await lockstepPaperEnv(
    dir,
    { 'swing.json': everyOrderFile('swing-trader', { churn: 40 }) },
    { period: 23, count: 3_600, start },
    { API_PORT: String(port), PAPER_SPEED: '10' },
  );
  // Replayed at its recorded pace (10x), on the recording's clock: not in lockstep (whose clock is the wall's).
  daemon = new DaemonProcess({ ...env, PAPER_LOCKSTEP: 'false' });
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  await waitFor('some fills', () => fillCount(db) >= 6, { daemon });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop('SIGTERM');
});

/** hh:mm or hh:mm:ss as milliseconds into a day. */
const timeOfDay = (text: string) => {
  const [h = 0, m = 0, s = 0] = text.split(':').map(Number);
  return ((h * 60 + m) * 60 + s) * 1000;
};

describe.skipIf(!existsSync(CHROMIUM))('the dashboard on paper on a recording', () => {
  it('shows the recording’s time on the price chart and the PnL chart, not the wall’s', async () => {
    const status = (await http(`${url}/api/v1/status`)).body as {
      clock: { venue: string; wall: string; venueClock: string };
    };
    expect(status.clock.venueClock).toBe('data');
    const venue = Date.parse(status.clock.venue);
    expect(venue).toBeGreaterThanOrEqual(start);
    expect(venue).toBeLessThanOrEqual(end);

    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    await recordCanvasText(context);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url);
    const chart = page.locator('.symbol-chart[data-symbol="BTCUSDT"]');
    await chart.locator('canvas').first().waitFor();
    await page.locator('#equity canvas').first().waitFor();
    await expect.poll(() => chart.getAttribute('data-markers')).not.toBe('0');
    // A few minutes of the recording's candles (the chart is read again as they close).
    await expect
      .poll(async () => Number(await chart.getAttribute('data-slots')), { timeout: 60_000 })
      .toBeGreaterThan(4);
    // The page says whose time it is, from the daemon's clock: the recording's, and the wall's beside it.
    expect(await page.locator('#time-note').textContent()).toBe(
      '; on paper on a recording, that is the recording’s time',
    );
    expect(await page.locator('#footer').textContent()).toMatch(
      /^status at venue \d{4}-06-1[56] [\d:]{8} UTC \(the recording's time\) · wall /,
    );
    // The first and last prices shown are the recording's.
    for (const edge of ['data-from', 'data-to']) {
      const at = Date.parse((await chart.getAttribute(edge)) ?? '');
      expect(at, edge).toBeGreaterThanOrEqual(start);
      expect(at, edge).toBeLessThanOrEqual(end);
    }
    // Every time on both axes is in the recording's hour of the day (the wall's is twelve hours away).
    const from = start % (24 * HOUR);
    for (const selector of ['.symbol-chart[data-symbol="BTCUSDT"]', '#equity']) {
      const times = (await timeAxis(page, selector)).labels
        .map((l) => l.text)
        .filter((t) => /^\d{2}:\d{2}(:\d{2})?$/.test(t));
      expect(times.length, selector).toBeGreaterThan(2);
      const outside = times.filter((t) => timeOfDay(t) < from || timeOfDay(t) > from + HOUR);
      expect(outside, `${selector}: ${times.join(' ')} in ${new Date(start).toISOString()} + 1 h`).toEqual([]);
    }
    expect(problems).toEqual([]);
    await context.close();
  }, 60_000);
});
