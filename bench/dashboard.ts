/**
 * `npm run bench:dashboard`: how long the page takes to load and how much it downloads, on what `npm start`
 * serves (the daemon on paper with the shipped strategy files, no token on loopback), in headless Chromium
 * (Debian's, as the page tests use it). Each of ROUNDS rounds (default 5) opens the page in a fresh browser
 * context (an empty cache, as a first visit) at 1366 px and at 390 px, and times from the navigation's start:
 * DOMContentLoaded, the first instance card shown, the first chart drawn (its canvas painted with candles) and
 * the load event; it sums what the page downloaded (the browser's Resource Timing: bytes on the wire and bodies
 * decoded, by kind; the live stream left out, it never ends). Medians are printed with the machine's load.
 * `--screenshots` also writes docs/dashboard.png (1366 px) and docs/dashboard-phone.png (390 px at 2x: the page's
 * top, its price chart, equity and PnL, closed trades and profit, side by side), once a trade has closed: about ten
 * minutes at npm start's pace on the sample, a few with PAPER_SPEED=600 (the same page, sooner). PICTURES_DIR
 * writes them elsewhere than docs/.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../test/e2e/chromium.js';
import { DaemonProcess, daemonEnv, ROOT, waitFor } from '../test/e2e/daemon-process.js';
import { freePort } from '../test/support/free-port.js';
import { deadline, until } from '../test/support/until.js';

const ROUNDS = Number(process.env.ROUNDS ?? '5');
const SCREENSHOTS = process.argv.includes('--screenshots');

interface Load {
  domContentLoaded: number;
  firstCard: number;
  chartDrawn: number;
  load: number;
  requests: number;
  transferKB: number;
  decodedKB: number;
  byKind: Record<string, number>;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};

/** A resource's kind for the table: the page, its scripts and styles, the API's JSON. */
function kind(url: string): string {
  const path = new URL(url).pathname;
  if (path.startsWith('/api/')) return 'api';
  if (path.endsWith('.js')) return 'script';
  if (path.endsWith('.css')) return 'style';
  return path === '/' || path.endsWith('.html') ? 'document' : 'other';
}

/**
 * Waits until the canvas at `selector` is painted (the chart library sized it). Polled with evaluate: the page's
 * Content-Security-Policy refuses the eval waitForFunction polls a string with.
 */
async function painted(page: Page, selector: string): Promise<void> {
  await until(
    `${selector} painted`,
    () => page.evaluate<boolean>(`(document.querySelector(${JSON.stringify(selector)})?.width ?? 0) > 0`),
    { every: 50, giveUp: deadline(60_000) },
  );
}

async function loadOnce(browser: Browser, url: string, width: number): Promise<{ load: Load; page: Page }> {
  const context = await browser.newContext({
    viewport: { width, height: 900 },
    deviceScaleFactor: width < 500 ? 2 : 1,
  });
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'commit' });
  await page.locator('article.instance').first().waitFor({ timeout: 60_000 });
  const firstCard = await page.evaluate<number>('performance.now()');
  // Its canvas painted: the chart library sized it once the candles came.
  await painted(page, '.symbol-chart canvas');
  const chartDrawn = await page.evaluate<number>('performance.now()');
  await page.waitForLoadState('load');
  const timing = await page.evaluate<{
    domContentLoaded: number;
    load: number;
    entries: { name: string; transfer: number; decoded: number }[];
  }>(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const resources = performance.getEntriesByType('resource').filter((r) => !r.name.endsWith('/api/v1/stream'));
    return {
      domContentLoaded: nav.domContentLoadedEventEnd,
      load: nav.loadEventEnd,
      entries: [nav, ...resources].map((r) => ({ name: r.name, transfer: r.transferSize, decoded: r.decodedBodySize })),
    };
  })()`);
  const byKind: Record<string, number> = {};
  for (const e of timing.entries) byKind[kind(e.name)] = (byKind[kind(e.name)] ?? 0) + e.transfer / 1024;
  const load: Load = {
    domContentLoaded: timing.domContentLoaded,
    firstCard,
    chartDrawn,
    load: timing.load,
    requests: timing.entries.length,
    transferKB: timing.entries.reduce((s, e) => s + e.transfer, 0) / 1024,
    decodedKB: timing.entries.reduce((s, e) => s + e.decoded, 0) / 1024,
    byKind,
  };
  return { load, page };
}

/** Waits for the daemon's first closed trade, then pictures the page at 1366 px and at 390 px. */
async function screenshots(browser: Browser, url: string, daemon: DaemonProcess): Promise<void> {
  const into = process.env.PICTURES_DIR ?? join(ROOT, 'docs');
  await waitFor(
    'a first closed trade',
    async () => {
      const r = await fetch(`${url}api/v1/trades?limit=1`);
      return ((await r.json()) as { trades: unknown[] }).trades.length >= 1;
    },
    { daemon, giveUp: deadline(15 * 60_000) },
  );
  /** The page loaded at `width` with its first closed trade and its charts drawn. */
  const drawn = async (width: number) => {
    const { page } = await loadOnce(browser, url, width);
    await page.locator('#trades tbody tr td.num').first().waitFor({ timeout: 60_000 });
    await painted(page, '#equity canvas');
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    return page;
  };
  const wide = await drawn(1366);
  await wide.screenshot({
    path: join(into, 'dashboard.png'),
    clip: { x: 0, y: 0, width: 1366, height: 1400 },
    fullPage: true,
  });
  await wide.context().close();
  console.log(`wrote ${join(into, 'dashboard.png')}`);

  // The phone: four screens of one page (its top; the price chart; equity and PnL; the closed trades and profit)
  // side by side, each a clip of the page as a phone shows it.
  const phone = await drawn(390);
  const top = async (selector: string) => (await phone.locator(selector).boundingBox())?.y ?? 0;
  const screens: string[] = [];
  const at = [0, await top('section.prices'), await top('section.equity'), await top('section.trades')];
  for (const y of at) {
    const png = await phone.screenshot({
      clip: { x: 0, y: Math.max(0, y - 8), width: 390, height: 844 },
      fullPage: true,
    });
    screens.push(`data:image/png;base64,${png.toString('base64')}`);
  }
  await phone.context().close();
  const sheet = await browser.newContext({
    viewport: { width: at.length * 390 + (at.length + 1) * 16, height: 844 + 32 },
    deviceScaleFactor: 2,
  });
  const page = await sheet.newPage();
  await page.setContent(
    `<body style="margin:0;padding:16px;display:flex;gap:16px;background:#d5d9e0">${screens
      .map((src) => `<img src="${src}" style="width:390px;height:844px;border-radius:12px">`)
      .join('')}</body>`,
  );
  await page.screenshot({ path: join(into, 'dashboard-phone.png') });
  await sheet.close();
  console.log(`wrote ${join(into, 'dashboard-phone.png')}`);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-dashboard-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  // `npm start`'s daemon: paper, the shipped strategy files, the page on loopback without a token.
  const daemon = new DaemonProcess(
    daemonEnv({
      DB_PATH: join(dir, 'bot.db'),
      KILL_SWITCH_FILE: join(dir, 'KILL'),
      API_PORT: String(port),
      // npm start's pace unless asked (the pictures wait for a closed trade: ten minutes at 60).
      ...(process.env.PAPER_SPEED === undefined ? {} : { PAPER_SPEED: process.env.PAPER_SPEED }),
    }),
  );
  let browser: Browser | undefined;
  try {
    // A script has no test timeout to end a wait: each gives up after a minute, saying what it waited for.
    const giveUp = deadline(60_000);
    await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, {
      daemon,
      giveUp,
    });
    // Something to draw: the daemon's first fill.
    await waitFor(
      'a first fill',
      async () => {
        const r = await fetch(`${url}api/v1/fills?limit=1`);
        return ((await r.json()) as { fills: unknown[] }).fills.length >= 1;
      },
      { daemon, giveUp },
    );
    browser = await launchChromium();
    const results: Record<string, Load[]> = { '1366 px': [], '390 px': [] };
    for (let round = 0; round < ROUNDS; round++)
      for (const width of [1366, 390]) {
        const { load, page } = await loadOnce(browser, url, width);
        results[`${width} px`]!.push(load);
        await page.context().close();
        process.stderr.write(`\rround ${round + 1}/${ROUNDS} ${width} px`);
      }
    process.stderr.write('\n');
    const [l1, l5, l15] = loadavg().map((x) => x.toFixed(1));
    console.log(
      `The dashboard (npm start's page), ${ROUNDS} cold loads per width, medians; load average ${l1} ${l5} ${l15}`,
    );
    console.log('width    DOMContentLoaded  first card  chart drawn  load event  requests  transferred  decoded');
    for (const [width, loads] of Object.entries(results)) {
      const m = (f: (l: Load) => number) => median(loads.map(f));
      console.log(
        [
          width.padEnd(8),
          `${m((l) => l.domContentLoaded).toFixed(0)} ms`.padStart(16),
          `${m((l) => l.firstCard).toFixed(0)} ms`.padStart(11),
          `${m((l) => l.chartDrawn).toFixed(0)} ms`.padStart(12),
          `${m((l) => l.load).toFixed(0)} ms`.padStart(11),
          String(m((l) => l.requests)).padStart(9),
          `${m((l) => l.transferKB).toFixed(0)} KB`.padStart(12),
          `${m((l) => l.decodedKB).toFixed(0)} KB`.padStart(8),
        ].join(' '),
      );
    }
    const first = results['1366 px']![0]!;
    console.log(
      `transferred by kind (first load at 1366 px): ${Object.entries(first.byKind)
        .map(([k, kb]) => `${k} ${kb.toFixed(0)} KB`)
        .join(', ')}`,
    );

    if (SCREENSHOTS) await screenshots(browser, url, daemon);
  } finally {
    await browser?.close();
    await daemon.stop('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
