import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExchangeClient } from '../../src/exchange/client.js';
import type { WireTicker } from '../../src/wire/schemas.js';
import { Recorder, marketWatchFetcher, runEvery } from '../../src/record/recorder.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { checkPaperData } from '../../src/app/paper-data.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { run as checkConfig } from '../../src/cli/check-config.js';
import { run as record, recordChoice, symbolsOnMarket } from '../../src/cli/record.js';
import type { PairFigures } from '../../src/config/pair-list.js';
import { capture } from '../support/command-output.js';
import type { PairConfig } from '../../src/ports/venue-records.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { fullTicker, readAll } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { trackChild } from '../support/child-processes.js';

/**
 * A market watch on 127.0.0.1 serving whatever `tickers` holds (and the config endpoint `configs`, 404 while it is
 * undefined); `failNext` answers errors instead. `queries` holds every request's query, `paths` its path and query.
 */
class MarketWatchServer {
  tickers: WireTicker[] = [];
  configs: PairConfig[] | undefined;
  failNext = 0;
  readonly queries: string[] = [];
  readonly paths: string[] = [];
  private readonly waiters: { count: number; resolve: () => void }[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      this.queries.push(url.search);
      this.paths.push(url.pathname + url.search);
      for (const w of this.waiters.filter((w) => this.queries.length >= w.count)) w.resolve();
      if (url.pathname === '/api/v3/spot/config' && this.configs !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'ok', data: this.configs }));
      } else if (url.pathname !== '/api/v3/spot/market_watch') {
        res.writeHead(404).end();
      } else if (this.failNext > 0) {
        this.failNext--;
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ statusCode: 400, message: 'market watch is resting', error: 'Bad Request' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'ok', data: this.tickers }));
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once the server has answered `count` requests in all. */
  served(count: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.queries.length >= count) resolve();
      else this.waiters.push({ count, resolve });
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server!.close(() => resolve()));
  }
}

let dir: string;
let server: MarketWatchServer;
let client: ExchangeClient;
let logs: string[];
let now: number;
const clock = { now: () => now };

beforeEach(async () => {
  dir = tempDir('spot-bot-record');
  server = new MarketWatchServer();
  await server.start();
  client = new ExchangeClient({ baseUrl: server.url, rateLimit: false, retry: { maxAttempts: 1 } });
  logs = [];
  now = Date.UTC(2024, 4, 31, 23, 59, 50);
});
afterEach(async () => {
  await client.close();
  await server.stop();
});

function recorder(symbols = ['BTCUSDT', 'BTCUSDC']): Recorder {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(chunk.toString());
      done();
    },
  });
  return new Recorder({ symbols, dir, fetchTickers: marketWatchFetcher(client), clock, logger: pino(sink) });
}

const day1 = (name: string) => path.join(dir, name, '2024-05-31.jsonl.gz');
const day2 = (name: string) => path.join(dir, name, '2024-06-01.jsonl.gz');

/**
 * Runs `bot record ARGS --every 100ms` into `dir` on the server until it has answered `requests` requests in all,
 * then stops it with SIGTERM, which must end it with exit 0.
 */
async function recordUntilServed(args: string[], requests: number): Promise<void> {
  const cli = path.resolve('src/cli.ts');
  const flags = [...args, '--every', '100ms', '--out', dir, '--base-url', server.url];
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', cli, 'record', ...flags], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn' },
    }),
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await Promise.race([server.served(requests), exited]);
  child.kill('SIGTERM');
  expect(await exited, stderr).toBe(0);
}

describe('recorder', () => {
  it('appends each symbol’s tickers, every key kept, skipping unchanged ones and unrequested symbols', async () => {
    const rec = recorder();
    const a = fullTicker(now - 5000, 67000.5, 'BTCUSDT');
    const b = fullTicker(now - 4000, 67010, 'BTCUSDC');
    server.tickers = [a, b, fullTicker(now, 3000, 'ETHUSDT')];
    expect(await rec.poll()).toBe(2);
    expect(await rec.poll()).toBe(0); // the exchange's tickers have not moved
    const a2 = fullTicker(now + 1000, 67001, 'BTCUSDT');
    server.tickers = [a2, b];
    expect(await rec.poll()).toBe(1);
    await rec.close();
    expect(await readAll(day1('BTCUSDT'))).toEqual([a, a2]);
    expect(await readAll(day1('BTCUSDC'))).toEqual([b]);
    expect(rec.status).toMatchObject({ written: 3, unchanged: 3, failedPolls: 0, lastTickerTime: now + 1000 });
    expect(server.queries.every((q) => q === '')).toBe(true); // several symbols: one call for all pairs
  });

  it('asks for a single symbol by name', async () => {
    server.tickers = [fullTicker(now)];
    await recorder(['BTCUSDT']).poll();
    expect(server.queries).toEqual(['?symbol=BTCUSDT']);
  });

  it('rotates to a new file at UTC midnight (by the ticker’s time) and closes the old one', async () => {
    const rec = recorder(['BTCUSDT']);
    const before = fullTicker(Date.UTC(2024, 4, 31, 23, 59, 58));
    const after = fullTicker(Date.UTC(2024, 5, 1, 0, 0, 3));
    server.tickers = [before];
    await rec.poll();
    server.tickers = [after];
    now += 15_000;
    await rec.poll();
    // The old day is complete gzip (member ended) while the recorder still runs.
    expect(gunzipSync(readFileSync(day1('BTCUSDT'))).toString()).toContain(`"t":${before.t}`);
    await rec.close();
    expect(await readAll(day1('BTCUSDT'))).toEqual([before]);
    expect(await readAll(day2('BTCUSDT'))).toEqual([after]);
  });

  it('closes a day file past midnight even when no new ticker comes', async () => {
    const rec = recorder(['BTCUSDT']);
    server.tickers = [fullTicker(now)];
    await rec.poll();
    now += 60_000; // past midnight, same ticker
    await rec.poll();
    expect(() => gunzipSync(readFileSync(day1('BTCUSDT')))).not.toThrow();
    await rec.close();
  });

  it('logs a failed poll and records again at the next one', async () => {
    const rec = recorder(['BTCUSDT']);
    server.failNext = 1;
    server.tickers = [fullTicker(now)];
    expect(await rec.poll()).toBe(0);
    expect(rec.status.failedPolls).toBe(1);
    expect(logs.join('')).toContain('market watch poll failed');
    expect(await rec.poll()).toBe(1);
    await rec.close();
    expect(await readAll(day1('BTCUSDT'))).toEqual([fullTicker(now)]);
  });

  it('after a restart does not write again the ticker the file already ends with', async () => {
    server.tickers = [fullTicker(now)];
    const first = recorder(['BTCUSDT']);
    await first.poll();
    await first.close();
    const second = recorder(['BTCUSDT']);
    expect(await second.poll()).toBe(0);
    server.tickers = [fullTicker(now + 1)];
    expect(await second.poll()).toBe(1);
    await second.close();
    expect((await readAll(day1('BTCUSDT'))).map((t) => t.t)).toEqual([now, now + 1]);
  });

  it('stops via CLI on SIGTERM with its files flushed and closed', async () => {
    server.tickers = [fullTicker(Date.now())];
    await recordUntilServed(['--symbols', 'BTCUSDT'], 3);
    const files = await import('node:fs/promises').then((fs) => fs.readdir(path.join(dir, 'BTCUSDT')));
    expect(files).toHaveLength(1);
    const text = gunzipSync(readFileSync(path.join(dir, 'BTCUSDT', files[0]!))).toString(); // strict: member ended
    expect(text.trim().split('\n')).toHaveLength(2); // header and the one unchanging ticker
  });
});

describe('the pairs chosen on the market watch (--all, --quote, --top)', () => {
  /** Four pairs: three of USDT by 24-hour quote volume ETH > BTC > SOL, one of BTC. */
  const market = (t: number): WireTicker[] => [
    { ...fullTicker(t, 67000, 'BTCUSDT'), vq: 4e8 },
    { ...fullTicker(t, 3000, 'ETHUSDT'), vq: 9e8 },
    { ...fullTicker(t, 150, 'SOLUSDT'), vq: 1e8 },
    { ...fullTicker(t, 0.05, 'ETHBTC'), q: 'BTC', vq: 5000 },
  ];
  const figures = (t: number): PairFigures[] =>
    market(t).map((w) => ({ symbol: w.s, quoteAsset: w.q ?? undefined, last: w.p, quoteVolume: w.vq }));

  it('reads one choice from the flags; each wrong combination or value is an error naming the flags', () => {
    expect(recordChoice({ symbols: 'BTCUSDT, ETHUSDT', all: false })).toEqual({ symbols: ['BTCUSDT', 'ETHUSDT'] });
    expect(recordChoice({ all: true })).toEqual({ all: true });
    expect(recordChoice({ quote: 'USDT' })).toEqual({ quote: 'USDT', top: undefined });
    expect(recordChoice({ quote: 'USDT', top: '20' })).toEqual({ quote: 'USDT', top: 20 });
    const wrong = (values: Parameters<typeof recordChoice>[0]) => () => recordChoice(values);
    expect(wrong({ symbols: 'BTCUSDT', all: true })).toThrow('--symbols and --all cannot be combined');
    expect(wrong({ symbols: 'BTCUSDT', quote: 'USDT' })).toThrow('--symbols and --quote cannot be combined');
    expect(wrong({ all: true, quote: 'USDT' })).toThrow('--all and --quote cannot be combined');
    expect(wrong({ symbols: 'BTCUSDT', top: '5' })).toThrow('--top ranks by 24-hour quote volume');
    expect(wrong({ all: true, top: '5' })).toThrow('give --quote too (--quote USDT --top 5)');
    expect(wrong({})).toThrow('give the pairs to record: --symbols BTCUSDT,ETHUSDT, --all, or --quote USDT');
    expect(wrong({ quote: 'usdt' })).toThrow("--quote must be an asset code such as USDT, got 'usdt'");
    for (const top of ['0', '2.5', 'ten'])
      expect(wrong({ quote: 'USDT', top }), top).toThrow(/--top must be (a whole number|a number)/);
  });

  it('resolves --all to every pair, --quote to its pairs ranked by quote volume, --top to the first N', () => {
    const f = figures(now);
    expect(symbolsOnMarket({ all: true }, f, 'x')).toEqual(['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'ETHBTC']);
    expect(symbolsOnMarket({ quote: 'USDT' }, f, 'x')).toEqual(['ETHUSDT', 'BTCUSDT', 'SOLUSDT']);
    expect(symbolsOnMarket({ quote: 'USDT', top: 2 }, f, 'x')).toEqual(['ETHUSDT', 'BTCUSDT']);
    expect(symbolsOnMarket({ quote: 'BTC', top: 2 }, f, 'x')).toEqual(['ETHBTC']);
    expect(() => symbolsOnMarket({ quote: 'EUR' }, f, 'http://h')).toThrow(
      '--quote EUR matches no pair with a price and a 24-hour quote volume on the market watch of http://h (its quote assets: BTC, USDT)',
    );
    expect(() => symbolsOnMarket({ all: true }, [], 'http://h')).toThrow(
      '--all: the market watch of http://h lists no pair',
    );
  });

  it('says so with exit 2 before recording anything when the flags conflict or match nothing', async () => {
    server.tickers = market(now);
    server.configs = [];
    const conflict = await capture(record, ['--symbols', 'BTCUSDT', '--all', '--out', dir]);
    expect(conflict.code).toBe(2);
    expect(conflict.err.join('\n')).toContain('--symbols and --all cannot be combined: give one');
    const none = await capture(record, ['--quote', 'EUR', '--out', dir, '--base-url', server.url]);
    expect(none.code).toBe(2);
    expect(none.err.join('\n')).toContain('--quote EUR matches no pair');
    expect(server.paths.filter((p) => p.startsWith('/api/v3/spot/market_watch'))).toEqual([
      '/api/v3/spot/market_watch',
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('records the top N of a quote asset with their rules, one market-watch request a poll for all of them', async () => {
    const t = Date.now();
    server.tickers = market(t);
    const engine = new MatchingEngine(); // the built-in pairs' rules: BTCUSDT, BTCUSDC, ETHUSDT
    server.configs = engine.pairConfigs();
    // The choice (market watch and config), then the first poll (config and market watch), then the second's.
    await recordUntilServed(['--quote', 'USDT', '--top', '2'], 5);
    expect(readdirSync(dir).sort()).toEqual(['BTCUSDT', 'ETHUSDT']);
    for (const symbol of ['BTCUSDT', 'ETHUSDT']) {
      const [file] = readdirSync(path.join(dir, symbol));
      const [header, ticker] = gunzipSync(readFileSync(path.join(dir, symbol, file!)))
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { symbol?: string; pair?: PairConfig; s?: string });
      expect(header!.symbol).toBe(symbol);
      expect(header!.pair).toEqual(engine.pairConfigs(symbol)[0]);
      expect(ticker!.s).toBe(symbol);
    }
    const watches = server.paths.filter((p) => p.startsWith('/api/v3/spot/market_watch'));
    expect(watches.length).toBeGreaterThanOrEqual(3);
    expect(new Set(watches)).toEqual(new Set(['/api/v3/spot/market_watch'])); // all pairs, never one by one
  });
});

/** Moves the virtual clock to its next timer and fires it (and only it). */
async function fireNextTimer(virtual: VirtualClock): Promise<void> {
  const due = virtual.nextDue();
  if (due !== undefined) await virtual.advanceTo(due);
}

describe('the pair configuration', () => {
  /** The built-in BTCUSDT entry with its PRICE_FILTER's tick size set to `tick`. */
  const configWithTick = (tick: number): PairConfig => {
    const [config] = new MatchingEngine().pairConfigs('BTCUSDT');
    return {
      ...config!,
      filters: config!.filters.map((f) => (f.filterType === 'PRICE_FILTER' ? { ...f, tickSize: tick } : f)),
    };
  };
  /** A recorder reading `configs()` as the config endpoint (a thrown error: the endpoint failing). */
  const recording = (configs: () => PairConfig[]) =>
    new Recorder({
      symbols: ['BTCUSDT'],
      dir,
      fetchTickers: marketWatchFetcher(client),
      fetchPairConfigs: () => Promise.resolve(configs()),
      pairConfigEveryMs: 0,
      clock,
    });
  const lines = (file: string) =>
    gunzipSync(readFileSync(file))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { format?: string; pair?: PairConfig; pairConfig?: PairConfig; t?: number });
  const kinds = (file: string) =>
    lines(file).map((l) =>
      l.format
        ? `header${l.pair ? ` tick ${tickOf(l.pair)}` : ''}`
        : l.pairConfig
          ? `pair tick ${tickOf(l.pairConfig)}`
          : 'ticker',
    );
  const tickOf = (c: PairConfig) => Number(c.filters.find((f) => f.filterType === 'PRICE_FILTER')?.tickSize);

  it('is in a new file’s header, a line of its own when it changes, and again when a restart appends', async () => {
    let current = configWithTick(0.01);
    const rec = recording(() => [current]);
    const poll = async (p: number) => {
      now += 1000;
      server.tickers = [fullTicker(now, p)];
      await rec.poll();
    };
    await poll(67000);
    await poll(67001); // unchanged: no line
    current = configWithTick(5);
    await poll(67002);
    await rec.close();
    const again = recording(() => [current]);
    server.tickers = [fullTicker((now += 1000), 67003)];
    await again.poll();
    await again.close();
    expect(kinds(day1('BTCUSDT'))).toEqual([
      'header tick 0.01',
      'ticker',
      'ticker',
      'pair tick 5',
      'ticker',
      'pair tick 5', // the appended part says which rules it was recorded under
      'ticker',
    ]);
    // The line carries the time from which it holds: the ticker's after it.
    const all = lines(day1('BTCUSDT'));
    expect(all[3]!.t).toBe(all[4]!.t);
  });

  it('comes as a line before the next ticker when the endpoint failed at the file’s start, and replays take it', async () => {
    let failing = true;
    const rec = recording(() => {
      if (failing) throw new Error('config endpoint down');
      return [configWithTick(5)];
    });
    server.tickers = [fullTicker(now, 67000)];
    await rec.poll();
    failing = false;
    server.tickers = [fullTicker((now += 1000), 67001)];
    await rec.poll();
    await rec.close();
    const file = day1('BTCUSDT');
    expect(kinds(file)).toEqual(['header', 'ticker', 'pair tick 5', 'ticker']);
    // Paper, bot sim and the backtest trade the pair by the recorded rules, not the built-in ones (tick 0.01).
    const warnings: string[] = [];
    const checked = await checkPaperData([file], false, (m) => warnings.push(m));
    expect(tickOf(checked.pairs.get('BTCUSDT')!)).toBe(5);
    expect(warnings).toEqual([]);
    expect((await loadTicks([file])).pairs.map(tickOf)).toEqual([5]);
    // check-config --data says the rules are the recording's.
    const checkedConfig = await capture(checkConfig, ['--data', file, 'config/grid-btcusdt.json']);
    expect(checkedConfig.code, checkedConfig.err.join('\n')).toBe(0);
    expect(checkedConfig.out.join('\n')).toContain(`pair rules recorded in ${file}`);
  });

  it('is replayed as first recorded, a later change told once', async () => {
    let current = configWithTick(0.01);
    const rec = recording(() => [current]);
    for (const tick of [0.01, 5, 10]) {
      current = configWithTick(tick);
      server.tickers = [fullTicker((now += 1000), 67000 + tick)];
      await rec.poll();
    }
    await rec.close();
    const warnings: string[] = [];
    const checked = await checkPaperData([day1('BTCUSDT')], false, (m) => warnings.push(m));
    expect(tickOf(checked.pairs.get('BTCUSDT')!)).toBe(0.01);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^PAPER_DATA: .*: the pair configuration of BTCUSDT changes at .*; the replay keeps the first one$/,
    );
    const backtest: string[] = [];
    expect((await loadTicks([day1('BTCUSDT')], { warn: (m) => backtest.push(m) })).pairs.map(tickOf)).toEqual([0.01]);
    expect(backtest).toHaveLength(1);
    expect(backtest[0]).toMatch(/the backtest keeps the first one$/);
  });
});

describe('runEvery', () => {
  it('runs at multiples of the interval, one run at a time, skipping slots missed by a slow run', async () => {
    const virtual = new VirtualClock(1_000_250);
    const starts: number[] = [];
    let finish: () => void = () => undefined;
    const loop = runEvery(
      1000,
      () => {
        starts.push(virtual.now());
        return new Promise<void>((resolve) => (finish = resolve));
      },
      { clock: virtual },
    );
    expect(virtual.nextDue()).toBe(1_001_000);
    await fireNextTimer(virtual);
    expect(virtual.nextDue()).toBeUndefined(); // nothing scheduled while the run is in progress
    virtual.time += 2_500; // the run takes 2.5 intervals
    finish();
    await new Promise((r) => setImmediate(r));
    expect(virtual.nextDue()).toBe(1_004_000);
    await fireNextTimer(virtual);
    const stopping = loop.stop();
    let stopped = false;
    void stopping.then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false); // stop waits for the run in progress
    finish();
    await stopping;
    expect(virtual.nextDue()).toBeUndefined();
    expect(starts).toEqual([1_001_000, 1_004_000]);
  });
});
