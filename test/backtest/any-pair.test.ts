/**
 * Issue 21, part 1: a pair the project never shipped, with its own rules, from candles (import-candles' flags)
 * and from a recording `bot record` made against the simulated exchange, backtested in its own assets.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { run as checkConfig } from '../../src/cli/check-config.js';
import { run as importCandles } from '../../src/cli/import-candles.js';
import { ExchangeClient } from '../../src/exchange/client.js';
import { Recorder, marketWatchFetcher } from '../../src/record/recorder.js';
import { readRecordingHeader } from '../../src/record/recording-reader.js';
import { checkPaperData } from '../../src/app/paper-data.js';
import { lockstepFeed } from '../../src/sim/feeds.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { replayMarket } from '../../src/sim/pair-market.js';
import { startSimServer, type SimServer } from '../../src/sim/sim-server.js';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { csvRecords } from '../support/csv-records.js';
import { capture } from '../support/command-output.js';
import { bot } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

/** 360 real one-minute BTC/USDT candles (test/fixtures/README.md), imported here as BTCUSD. */
export const CANDLES = 'test/fixtures/binanceus-BTCUSDT-1m-2023-03-10-0000_0559.csv';

/** A grid on `symbol`: its orders' prices show the pair's tick size. */
function gridFile(dir: string, symbol: string): string {
  const file = join(dir, `grid-${symbol}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      name: `grid-${symbol.toLowerCase()}`,
      strategy: 'grid',
      symbol,
      schedule: '*/5 * * * * *',
      params: { levels: 3, spacingPct: '0.37', quantity: '0.001' },
      risk: { maxOrderNotional: '50', maxOpenOrders: 12, maxPosition: '0.01' },
    }),
  );
  return file;
}

/** The limit prices of a backtest's orders.csv. */
function orderPrices(out: string): string[] {
  return csvRecords(join(out, 'orders.csv'))
    .map((o) => o.price!)
    .filter((p) => p !== '');
}

async function importBtcUsd(out: string, rules: string[]) {
  return capture(importCandles, ['--symbol', 'BTCUSD', '--out', out, ...rules, CANDLES]);
}

describe('a pair the project never shipped', () => {
  it('imports with its rules from flags, backtests with fills in its own assets, and its tick size shapes the prices', async () => {
    const dir = tempDir('backtest-test');
    const imported = await importBtcUsd(join(dir, 'fine'), ['--tick-size', '0.01', '--base-precision', '6']);
    expect(imported.code, imported.err.join('\n')).toBe(0);
    const coarseImport = await importBtcUsd(join(dir, 'coarse'), [
      '--tick-size',
      '5',
      '--base-precision',
      '5',
      '--min-notional',
      '10',
    ]);
    expect(coarseImport.code, coarseImport.err.join('\n')).toBe(0);
    const header = await readRecordingHeader(join(dir, 'coarse', 'BTCUSD-2023-03-10.jsonl.gz'));
    expect(header?.pair).toMatchObject({
      symbol: 'BTCUSD',
      baseAsset: 'BTC',
      quoteAsset: 'USD',
      baseAssetPrecision: 5,
    });
    expect(header?.pair?.filters).toContainEqual({ filterType: 'MIN_NOTIONAL', minNotional: '10' });
    // USD got an id of its own, not a built-in asset's (1..4).
    expect(header?.pair?.quoteAssetId).toBeGreaterThan(4);

    const config = gridFile(dir, 'BTCUSD');
    const prices: string[][] = [];
    for (const data of ['fine', 'coarse']) {
      const out = join(dir, `out-${data}`);
      const r = await bot([
        '--config',
        config,
        '--data',
        join(dir, data),
        '--balance',
        'USD=10000,BTC=0',
        '--out',
        out,
      ]);
      expect(r.code, r.err.join('\n')).toBe(0);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
      expect(summary.metrics.fills).toBeGreaterThan(0);
      expect(Object.keys(summary.balances.final)).toEqual(expect.arrayContaining(['BTC', 'USD']));
      expect(summary.balances.initial.USD).toBe('10000');
      prices.push(orderPrices(out));
    }
    const [fine, coarse] = prices as [string[], string[]];
    expect(coarse.length).toBeGreaterThan(0);
    expect(coarse.every((p) => Number(p) % 5 === 0)).toBe(true);
    expect(fine.some((p) => Number(p) % 5 !== 0)).toBe(true);
  });

  it('takes the rules from --pair-config FILE, and refuses a pair without rules with one line saying how', async () => {
    const dir = tempDir('backtest-test');
    const entry = {
      symbol: 'BTCUSD',
      status: 'TRADING',
      baseAsset: 'BTC',
      baseAssetPrecision: 4,
      quoteAsset: 'USD',
      quotePrecision: 1,
      orderTypes: ['LIMIT', 'MARKET'],
      filters: [{ filterType: 'PRICE_FILTER', minPrice: 0.1, maxPrice: 0, tickSize: 0.1 }],
    };
    writeFileSync(join(dir, 'pair.json'), JSON.stringify(entry));
    const ok = await capture(importCandles, [
      '--symbol',
      'BTCUSD',
      '--out',
      join(dir, 'rec'),
      '--pair-config',
      join(dir, 'pair.json'),
      CANDLES,
    ]);
    expect(ok.code, ok.err.join('\n')).toBe(0);
    expect((await readRecordingHeader(join(dir, 'rec', 'BTCUSD-2023-03-10.jsonl.gz')))?.pair).toMatchObject({
      quotePrecision: 1,
      orderTypes: ['LIMIT', 'MARKET'],
    });

    const none = await capture(importCandles, ['--symbol', 'BTCUSD', '--out', join(dir, 'x'), CANDLES]);
    expect(none.code).toBe(2);
    expect(none.err.join('\n')).toMatch(
      /BTCUSD is not a pair the project ships: give its rules .*--tick-size.*--pair-config/,
    );

    // A recording without rules (a version-1 header, as older importers wrote) stops the backtest in one line.
    const config = gridFile(dir, 'BTCUSD');
    const bare = await capture(importCandles, [
      '--symbol',
      'BTCUSD',
      '--out',
      join(dir, 'bare'),
      '--tick-size',
      '1',
      '--base-precision',
      '4',
      CANDLES,
    ]);
    expect(bare.code).toBe(0);
    const file = join(dir, 'bare', 'BTCUSD-2023-03-10.jsonl.gz');
    const { gunzipSync, gzipSync } = await import('node:zlib');
    const lines = gunzipSync(readFileSync(file)).toString().split('\n');
    const h = JSON.parse(lines[0]!) as Record<string, unknown>;
    delete h.pair;
    lines[0] = JSON.stringify({ ...h, version: 1 });
    writeFileSync(file, gzipSync(lines.join('\n')));
    const refused = await bot(['--config', config, '--data', file, '--balance', 'USD=100', '--out', join(dir, 'o')]);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(/no pair rules for BTCUSD in .*bot import-candles --symbol BTCUSD --base CODE/);

    const checked = await capture(checkConfig, ['--data', file, config]);
    expect(checked.code).toBe(1);
    expect(checked.err.join('\n')).toMatch(/symbol BTCUSD: no pair rules for BTCUSD/);
    const good = await capture(checkConfig, ['--data', join(dir, 'rec'), config]);
    expect(good.code, good.err.join('\n')).toBe(0);
    expect(good.out.join('\n')).toMatch(/pair rules recorded in/);
    const other = await capture(checkConfig, ['--data', 'data/samples/BTCUSDC-2023-03-01_21.jsonl.gz', config]);
    expect(other.code).toBe(1);
    expect(other.err.join('\n')).toMatch(/no recording of BTCUSD/);
  });

  it('replays two pairs imported apart on one account: no two assets share an id, each pair pays its own fees', async () => {
    const dir = tempDir('backtest-test');
    // BTC/USD with fees of its own (none), and XBT/USD on the backtest's: three assets, none given an id.
    expect(
      (
        await importBtcUsd(join(dir, 'rec'), [
          '--tick-size',
          '0.01',
          '--base-precision',
          '6',
          '--maker-fee',
          '0',
          '--taker-fee',
          '0',
        ])
      ).code,
    ).toBe(0);
    const eur = await capture(importCandles, [
      ...['--symbol', 'XBTUSD', '--base', 'XBT', '--quote', 'USD', '--tick-size', '0.01', '--base-precision', '6'],
      ...['--out', join(dir, 'rec'), CANDLES],
    ]);
    expect(eur.code, eur.err.join('\n')).toBe(0);
    const ids = [
      await readRecordingHeader(join(dir, 'rec', 'BTCUSD-2023-03-10.jsonl.gz')),
      await readRecordingHeader(join(dir, 'rec', 'XBTUSD-2023-03-10.jsonl.gz')),
    ].flatMap((h) => [h?.pair?.baseAssetId, h?.pair?.quoteAssetId]);
    // USD the same in both, BTC the built-in id, XBT one of its own.
    expect(new Set(ids).size).toBe(3);
    expect(ids[1]).toBe(ids[3]);

    const out = join(dir, 'out');
    const r = await bot([
      ...[
        '--config',
        gridFile(dir, 'BTCUSD'),
        '--config',
        gridFile(dir, 'XBTUSD'),
        '--together',
        '--data',
        join(dir, 'rec'),
      ],
      ...['--balance', 'USD=20000', '--fee', '0.001', '--out', out],
    ]);
    expect(r.code, r.err.join('\n')).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    expect(Object.keys(summary.balances.final).sort()).toEqual(['BTC', 'USD', 'XBT']);
    const fills = csvRecords(join(out, 'fills.csv'));
    const fees = (symbol: string) => fills.filter((f) => f.symbol === symbol).map((f) => Number(f.fee));
    expect(fees('BTCUSD').length).toBeGreaterThan(0);
    expect(fees('BTCUSD').every((fee) => fee === 0)).toBe(true);
    expect(fees('XBTUSD').length).toBeGreaterThan(0);
    expect(fees('XBTUSD').every((fee) => fee > 0)).toBe(true);
  });

  it('refuses --balance of an asset the pairs do not name, listing those they do', async () => {
    const dir = tempDir('backtest-test');
    await importBtcUsd(join(dir, 'rec'), ['--tick-size', '0.01', '--base-precision', '6']);
    const r = await bot([
      '--config',
      gridFile(dir, 'BTCUSD'),
      '--data',
      join(dir, 'rec'),
      '--balance',
      'EUR=5',
      '--out',
      join(dir, 'o'),
    ]);
    expect(r.code).toBe(2);
    expect(r.err.join('\n')).toMatch(/--balance: EUR is not an asset of the pairs replayed \(they have .*USD/);
  });
});

describe('bot record against the simulated exchange with a non-default pair', () => {
  let server: SimServer | undefined;
  let client: ExchangeClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it('records the pair configuration, and a backtest of the recording trades by it', async () => {
    const dir = tempDir('backtest-test');
    await importBtcUsd(join(dir, 'src'), ['--tick-size', '5', '--base-precision', '5']);
    const source = join(dir, 'src', 'BTCUSD-2023-03-10.jsonl.gz');
    const market = replayMarket([], (await checkPaperData([source], false, () => undefined)).pairs, source);
    server = await startSimServer({ engine: new MatchingEngine(market), feed: lockstepFeed({ files: [source] }) });
    client = new ExchangeClient({ baseUrl: server.url, rateLimit: false, retry: { maxAttempts: 1 } });
    const recorder = new Recorder({
      symbols: ['BTCUSD'],
      dir: join(dir, 'recorded'),
      fetchTickers: marketWatchFetcher(client),
      fetchPairConfigs: () => client!.pairConfig(),
    });
    for (let i = 0; i < 60; i++) await recorder.poll();
    await recorder.close();
    const recorded = join(dir, 'recorded', 'BTCUSD', '2023-03-10.jsonl.gz');
    const header = await readRecordingHeader(recorded);
    expect(header?.pair).toMatchObject({ symbol: 'BTCUSD', quoteAsset: 'USD', baseAssetPrecision: 5 });
    expect(header?.pair?.filters).toContainEqual(expect.objectContaining({ filterType: 'PRICE_FILTER', tickSize: 5 }));

    const out = join(dir, 'out');
    const r = await bot([
      '--config',
      gridFile(dir, 'BTCUSD'),
      '--data',
      join(dir, 'recorded'),
      '--balance',
      'USD=1000',
      '--out',
      out,
    ]);
    expect(r.code, r.err.join('\n')).toBe(0);
    const prices = orderPrices(out);
    expect(prices.length).toBeGreaterThan(0);
    expect(prices.every((p) => Number(p) % 5 === 0)).toBe(true);
  });
});
