/**
 * The composition root in process: which adapters each environment gets, and how start-up fails. Paper on
 * live data is checked against an upstream that records every endpoint called: only public ones, ever.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/app/daemon.js';
import { parseEnv } from '../../src/app/env.js';
import { ConfigError } from '../../src/errors.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { DEMO_CREDENTIALS, startSimServer } from '../../src/sim/sim-server.js';
import { buildStatusView, statusJson, statusTable } from '../../src/status/status-view.js';
import { openStore } from '../../src/store/store.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { everyOrderFile, TEST_STRATEGIES, waitFor, writeSwingRecording } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-compose');
const config = join(dir, 'config');
const recording = join(dir, 'swing.jsonl.gz');
let n = 0;

beforeAll(async () => {
  mkdirSync(config);
  writeFileSync(join(config, 'one.json'), everyOrderFile('one'));
  await writeSwingRecording(recording, { period: 7 });
});

/** A logger whose lines the test can read. */
function captureLogger() {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as never) });
  return { logger, lines, text: () => lines.map((l) => l.msg).join('\n') };
}

/** A validated environment on a database of its own (or on `db`). */
function env(vars: Record<string, string>, db = join(dir, `db-${++n}.db`)) {
  return parseEnv({
    DB_PATH: db,
    CONFIG_DIR: config,
    STRATEGIES_DIR: TEST_STRATEGIES,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    ORDERS_POLL: '* * * * * *',
    // No HTTP listener: the default 8080 would collide with whatever else holds it.
    API_PORT: '0',
    ...vars,
  });
}

/** What the daemon recorded of its clock at its last start, and the times of the fills it recorded. */
function clockAndFillTimes(path: string): { clock: unknown; fills: number[] } {
  const store = openStore({ path, clock: wallClock });
  try {
    return {
      clock: store.events.list({ kinds: ['daemon-started'] }).at(-1)?.data.clock,
      fills: store.db.prepare('SELECT time FROM fills').pluck().all() as number[],
    };
  } finally {
    store.close();
  }
}

function fillCount(path: string): number {
  const store = openStore({ path, clock: wallClock });
  try {
    return store.db.prepare('SELECT COUNT(*) FROM fills').pluck().get() as number;
  } finally {
    store.close();
  }
}

describe('composition', () => {
  it('paper without keys: the embedded simulated exchange on the recording, through the signed client', async () => {
    const e = env({ PAPER_DATA: recording, PAPER_LOCKSTEP: 'true' });
    const log = captureLogger();
    const daemon = await Daemon.start({ env: e, logger: log.logger });
    try {
      expect(daemon.plan).toEqual({ mode: 'paper', data: 'recording', speed: 60, lockstep: true });
      expect(daemon.setup.sim?.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(daemon.setup.files).toEqual([recording]);
      expect(log.text()).toContain('PAPER TRADING on recorded data');
      expect(log.text()).toContain('one: every-order on BTCUSDT, schedule * * * * * *, paper');
      // The account is the simulator's demo account, reached over HTTP with signed requests.
      const balances = await daemon.setup.client.balance();
      expect(Object.keys(balances).length).toBeGreaterThan(0);
    } finally {
      await daemon.stop();
    }
  });

  describe('paper with EXCHANGE_BASE_URL: live prices, local fills', () => {
    const calls: string[] = [];
    let upstream: Server;
    let url: string;
    let price = 20_000;

    beforeAll(async () => {
      // The "exchange": public market data with its own asset ids; anything private is refused and noted.
      const pair = { ...DEFAULT_PAIRS[0]!, baseAssetId: 101, quoteAssetId: 102 };
      upstream = createServer((req, res) => {
        const path = (req.url ?? '').split('?')[0]!;
        calls.push(`${req.method} ${path}`);
        const ok = (data: unknown) => res.end(JSON.stringify({ status: 'ok', data }));
        res.setHeader('content-type', 'application/json');
        if (path === '/api/v3/spot/market_watch') {
          price += 10;
          return ok([{ s: 'BTCUSDT', p: price, t: Date.now(), b: 'BTC', q: 'USDT', bi: 101, qi: 102 }]);
        }
        if (path === '/api/v3/spot/config') return ok([pair]);
        res.statusCode = 401;
        res.end(JSON.stringify({ statusCode: 401, message: 'private: not for a paper run', error: 'Unauthorized' }));
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => upstream.close(() => resolve())));

    it('feeds the live market watch into the local exchange and never calls a private endpoint upstream', async () => {
      // Keys set but MODE unset: still paper, and the keys go nowhere.
      const e = env({ EXCHANGE_BASE_URL: url, EXCHANGE_API_KEY: 'real-key', EXCHANGE_API_SECRET: 'real-secret' });
      const log = captureLogger();
      const wallBefore = Date.now();
      const daemon = await Daemon.start({ env: e, logger: log.logger });
      try {
        expect(daemon.plan).toEqual({ mode: 'paper', data: 'live', upstream: url, keysIgnored: true });
        expect(log.text()).toContain(`PAPER TRADING on live prices from ${url}`);
        expect(log.text()).toContain('API keys are set but unused: set MODE=live to trade for real');
        await waitFor('a fill on the local exchange', () => fillCount(e.DB_PATH) > 0);
      } finally {
        await daemon.stop();
      }
      // Paper on live prices runs on the wall clock (issue 20): its fills are dated now.
      const { clock, fills } = clockAndFillTimes(e.DB_PATH);
      expect(clock).toBe('wall');
      expect(fills.filter((t) => t < wallBefore || t > Date.now())).toEqual([]);
      expect(calls.length).toBeGreaterThan(0);
      expect([...new Set(calls)].sort()).toEqual(['GET /api/v3/spot/config', 'GET /api/v3/spot/market_watch']);
    });
  });

  it('live runs on the wall clock: its fills are dated now (issue 20: the live path is unchanged)', async () => {
    const sim = await startSimServer({ engine: new MatchingEngine({ clock: wallClock }) });
    sim.engine.onPrice('BTCUSDT', 20_000, Date.now());
    const e = env({
      MODE: 'live',
      EXCHANGE_BASE_URL: sim.url,
      EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
      EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
    });
    const wallBefore = Date.now();
    try {
      const daemon = await Daemon.start({ env: e, logger: captureLogger().logger });
      try {
        expect(daemon.plan.mode).toBe('live');
        await waitFor('a live fill', () => fillCount(e.DB_PATH) > 0);
      } finally {
        await daemon.stop();
      }
    } finally {
      await sim.close();
    }
    const { clock, fills } = clockAndFillTimes(e.DB_PATH);
    expect(clock).toBe('wall');
    expect(fills.length).toBeGreaterThan(0);
    expect(fills.filter((t) => t < wallBefore || t > Date.now())).toEqual([]);
  });

  it('live without keys is refused, naming each missing variable', () => {
    let problems: readonly string[] = [];
    try {
      parseEnv({ MODE: 'live', EXCHANGE_BASE_URL: 'http://127.0.0.1:1' });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      'EXCHANGE_API_KEY: required when MODE=live',
      'EXCHANGE_API_SECRET: required when MODE=live',
    ]);
  });

  it('live with a wrong secret stops at once on the authentication failure: no retry, nothing left open', async () => {
    const sim = await startSimServer();
    try {
      const e = env({
        MODE: 'live',
        EXCHANGE_BASE_URL: sim.url,
        EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
        EXCHANGE_API_SECRET: 'wrong',
      });
      const log = captureLogger();
      await expect(Daemon.start({ env: e, logger: log.logger })).rejects.toMatchObject({ code: 'E_AUTH' });
      expect(log.text()).not.toMatch(/retrying/);
      expect(log.text()).not.toContain('wrong');
      // The database was closed, and the failed start left it as it was: not there.
      expect(existsSync(e.DB_PATH)).toBe(false);
    } finally {
      await sim.close();
    }
  });

  it('an unreachable venue is retried with backoff, each failure logged, until a shutdown aborts the wait', async () => {
    const e = env({
      MODE: 'live',
      EXCHANGE_BASE_URL: 'http://127.0.0.1:9',
      EXCHANGE_API_KEY: 'k',
      EXCHANGE_API_SECRET: 's',
      EXCHANGE_RETRY_ATTEMPTS: '1',
    });
    const log = captureLogger();
    const abort = new AbortController();
    const started = Daemon.start({ env: e, logger: log.logger, signal: abort.signal });
    await waitFor(
      'two failed attempts',
      () => log.lines.filter((l) => /\(attempt \d\).*retrying in/.test(l.msg)).length >= 2,
    );
    abort.abort(new Error('SIGTERM'));
    await expect(started).rejects.toThrow('SIGTERM');
    const [firstTry] = log.lines.filter((l) => /attempt 1/.test(l.msg));
    expect(firstTry?.msg).toMatch(/^cannot start the engine .* \(attempt 1\): .*ECONNREFUSED.*; retrying in 1\.0 s$/);
  });

  it('keeps live and paper apart: a paper database is refused live; a paper run resumes the previous one', async () => {
    const paper = env({ PAPER_DATA: recording, PAPER_LOCKSTEP: 'true' });
    const first = await Daemon.start({ env: paper, logger: captureLogger().logger });
    await waitFor('a paper fill', () => fillCount(paper.DB_PATH) > 0);
    await first.stop();
    const sim = await startSimServer();
    try {
      const live = env(
        {
          MODE: 'live',
          EXCHANGE_BASE_URL: sim.url,
          EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
          EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
        },
        paper.DB_PATH,
      );
      await expect(Daemon.start({ env: live, logger: captureLogger().logger })).rejects.toThrow(
        /DB_PATH: .* holds paper trading; a live run needs its own database/,
      );
      await expect(
        Daemon.start({ env: { ...live, PAPER_FRESH: true }, logger: captureLogger().logger }),
      ).rejects.toThrow(/PAPER_FRESH \(or --fresh\): starts a new paper account, and this is MODE=live/);
    } finally {
      await sim.close();
    }
    const base = paper.DB_PATH.split('/').pop()!.replace(/\.db$/, '');
    const archives = () => readdirSync(dir).filter((f) => new RegExp(`^${base}\\.\\d{4}-.*\\.db$`).test(f));
    const paperOrders = () => {
      const store = openStore({ path: paper.DB_PATH, clock: wallClock });
      try {
        return store.paper.summary()?.orders ?? 0;
      } finally {
        store.close();
      }
    };

    // A plain restart resumes the same account: nothing archived, the exchange's orders still there.
    const before = paperOrders();
    expect(before).toBeGreaterThan(0);
    const log = captureLogger();
    const second = await Daemon.start({ env: paper, logger: log.logger });
    await second.stop();
    expect(log.text()).toMatch(/paper account resumed from .*; PAPER_FRESH=true starts a new one/);
    expect(log.text()).toMatch(/the replay resumes where the previous run stopped/);
    expect(archives()).toEqual([]);
    expect(paperOrders()).toBeGreaterThanOrEqual(before);
    // Status shows the account across both runs.
    const resumed = openStore({ path: paper.DB_PATH, clock: wallClock });
    try {
      const view = buildStatusView(resumed, { wallNow: Date.now(), killSwitchFile: join(dir, 'KILL') });
      expect(view.paper).toMatchObject({ data: 'recording', runs: 2, funding: { USDT: '10000' } });
      expect(view.paper!.orders).toBeGreaterThanOrEqual(before);
      expect(statusTable(view)).toMatch(
        /^paper account: since .* on recorded data, 2 run\(s\); \d+ orders \(\d+ open\), \d+ fills/m,
      );
      expect(statusJson(view).paper).toMatchObject({ runs: 2, funding: { BTC: '0.5' } });
    } finally {
      resumed.close();
    }

    // PAPER_FRESH archives it (twice here), keeping PAPER_ARCHIVES_KEPT of them.
    const fresh = { ...paper, PAPER_FRESH: true, PAPER_ARCHIVES_KEPT: 1 };
    for (let i = 0; i < 2; i++) {
      const freshLog = captureLogger();
      const run = await Daemon.start({ env: fresh, logger: freshLog.logger });
      await run.stop();
      expect(freshLog.text()).toMatch(/fresh start asked for: the previous paper account was moved to .*\.db/);
      expect(freshLog.text()).toMatch(/new paper account in .*, funded with 10000 USDT, 10000 USDC, 0\.5 BTC/);
    }
    expect(archives()).toHaveLength(1);
    // The new database starts from the fresh run alone.
    const store = openStore({ path: paper.DB_PATH, clock: wallClock });
    const starts = store.events.list({ kinds: ['daemon-started'] }).length;
    store.close();
    expect(starts).toBe(1);
  });

  it('moves aside a paper journal from before the exchange kept its state', async () => {
    const paper = env({ PAPER_DATA: recording, PAPER_LOCKSTEP: 'true' });
    const first = await Daemon.start({ env: paper, logger: captureLogger().logger });
    await waitFor('a paper fill', () => fillCount(paper.DB_PATH) > 0);
    await first.stop();
    // What a database of the previous version looks like: a paper journal, no paper exchange.
    const old = openStore({ path: paper.DB_PATH, clock: wallClock });
    old.db.exec(
      'DELETE FROM paper_fills; DELETE FROM paper_orders; DELETE FROM paper_balances; DELETE FROM paper_counts; DELETE FROM paper_accounts; DELETE FROM paper_exchange',
    );
    old.close();
    const log = captureLogger();
    const second = await Daemon.start({ env: paper, logger: log.logger });
    await second.stop();
    expect(log.text()).toMatch(
      /held a previous paper run, whose simulated exchange is gone: moved to .*\.db; starting afresh/,
    );
  });
});
