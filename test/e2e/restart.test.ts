/**
 * The live path end to end, and restarts: the daemon (a real process, MODE=live) trades on a simulated
 * exchange served from this test process over HTTP, with the demo keys, so the exchange's side survives the
 * daemon's restarts and can be compared with the journal. A clean stop, a restart, a kill -9 mid-run and
 * another restart must leave exactly one order on the exchange per journal row and exactly one fill row per
 * exchange trade: no duplicate orders, no doubled fills, no lost fills.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { DEMO_CREDENTIALS, type SimServer, startSimServer } from '../../src/sim/sim-server.js';
import { DaemonProcess, everyOrderFile, fillKeys, journal, liveEnv, waitFor } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-restart');
const db = join(dir, 'bot.db');
const key = DEMO_CREDENTIALS.apiKey;
let sim: SimServer;
let driver: NodeJS.Timeout | undefined;

/** The exchange's side, read page by page as the client would. */
function simOrderIds(): string[] {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const records = sim.engine.orderHistory(key, { page, pageSize: 100 });
    ids.push(...records.map((r) => String(r.displayingId)));
    if (records.length < 100) return ids.sort();
  }
}

function simTradeIds(): string[] {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const records = sim.engine.tradeHistory(key, { page, pageSize: 100 });
    ids.push(...records.map((r) => r._id));
    if (records.length < 100) return ids.sort();
  }
}

/** Moves the price along a ±1 % swing around 20 000 every 100 ms, as a market would, until stopped. */
function drivePrices(): void {
  let step = 0;
  driver = setInterval(() => {
    step++;
    const price = Math.round(20_000 * (1 + 0.01 * Math.sin((2 * Math.PI * step) / 37)) * 100) / 100;
    sim.engine.onPrice('BTCUSDT', price, Date.now());
  }, 100);
}

beforeAll(async () => {
  sim = await startSimServer({ engine: new MatchingEngine({ clock: wallClock }) });
  sim.engine.onPrice('BTCUSDT', 20_000, Date.now());
  drivePrices();
});

afterAll(async () => {
  clearInterval(driver);
  await sim.close();
});

describe('restarts against an exchange that outlives the daemon (MODE=live on a local simulated exchange)', () => {
  it('continues after SIGTERM and after kill -9 without duplicate orders, doubled or lost fills', async () => {
    const config = join(dir, 'config');
    mkdirSync(config);
    writeFileSync(join(config, 'churn.json'), everyOrderFile('churn', { churn: 1000, near: 20_000 }));
    const env = liveEnv(sim.url, dir, { DB_PATH: db });
    const rowsAtLeast = (daemon: DaemonProcess, n: number) =>
      waitFor(`${n} journal rows`, () => journal(db).length >= n && journal(db).length, { daemon });

    // Run 1: trades, then a clean stop.
    const first = new DaemonProcess(env);
    const afterFirst = await rowsAtLeast(first, 7);
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(first.lines.join('\n')).toContain(`*** LIVE TRADING on ${sim.url}`);

    // Run 2: restarts on the same database, trades on, and is killed without warning.
    const second = new DaemonProcess(env);
    const afterSecond = await rowsAtLeast(second, afterFirst + 3);
    expect(await second.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // Run 3: reconciles what the kill left, trades on; then the market stops and the books must agree.
    const third = new DaemonProcess(env);
    await rowsAtLeast(third, afterSecond + 3);
    clearInterval(driver);
    await waitFor(
      'the journal to settle and agree with the exchange',
      () => {
        const rows = journal(db);
        const unresolved = rows.filter((r) => r.status === 'PENDING' || r.status === 'UNKNOWN');
        return unresolved.length === 0 && fillKeys(db).join() === simTradeIds().join();
      },
      { daemon: third },
    );
    expect(await third.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const rows = journal(db);
    const placed = rows.filter((r) => r.exchange_id !== null);
    // Every order on the exchange has exactly one journal row, and every journal row with an id is on it.
    expect(placed.map((r) => r.exchange_id).sort()).toEqual(simOrderIds());
    // Rows without an exchange id are orders that certainly never reached it.
    for (const r of rows.filter((row) => row.exchange_id === null))
      expect(r.status).toMatch(/^(REJECTED|NOT_SENT|NOT_PLACED)$/);
    // Each exchange trade is one fill row: none doubled, none lost.
    const fills = fillKeys(db);
    expect(new Set(fills).size).toBe(fills.length);
    expect(fills).toEqual(simTradeIds());
    expect(fills.length).toBeGreaterThanOrEqual(4);
    // The strategy's opening orders were placed once, across three runs.
    for (const tag of ['market', 'limit', 'stop', 'oco']) expect(rows.filter((r) => r.tag === tag)).toHaveLength(1);
    // Three daemon starts and a simulated exchange: about 16 s on a loaded machine, twice that under a full suite.
  }, 90_000);
});
