/**
 * `bot import-candles` over several pairs at once (issue 41): each file's symbol from its name, each pair's rules
 * from one --pair-config file (the config endpoint's list or whole answer), a span cut with --from/--to whose first
 * tickers still count the candles before it in their 24-hour figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run as importCandles, symbolInName } from '../../src/cli/import-candles.js';
import { readRecordingHeader } from '../../src/record/recording-reader.js';
import { capture } from '../support/command-output.js';
import { tempDir } from '../support/temp-dir.js';
import { readAll } from '../record/fixtures.js';

const HEADER = 'open_time,open,high,low,close,volume';

/** `minutes` one-minute candles from 2023-04-09 23:58 UTC, each of volume 1 at `price`. */
function candles(dir: string, name: string, price: string, minutes = 4): string {
  const rows = Array.from({ length: minutes }, (_, i) => {
    const t = new Date(Date.UTC(2023, 3, 9, 23, 58 + i)).toISOString().replace('T', ' ').replace('.000Z', '+00:00');
    return `${t},${price},${price},${price},${price},1`;
  });
  const file = join(dir, name);
  writeFileSync(file, [HEADER, ...rows, ''].join('\n'));
  return file;
}

const entry = (symbol: string, base: string, tickSize: number) => ({
  symbol,
  status: 'TRADING',
  baseAsset: base,
  baseAssetPrecision: 1,
  quoteAsset: 'USDT',
  quotePrecision: 4,
  orderTypes: ['LIMIT', 'MARKET'],
  filters: [{ filterType: 'PRICE_FILTER', minPrice: tickSize, maxPrice: 1000, tickSize }],
});

describe('import-candles of several pairs', () => {
  it('tells a file symbol by its name, and only when one part of it is a pair', () => {
    expect(symbolInName('/x/binance-ETHUSDT-1m-20230402_20230422.csv')).toBe('ETHUSDT');
    expect(symbolInName('SOLUSDT.csv')).toBe('SOLUSDT');
    expect(symbolInName('candles-2023.csv')).toBeUndefined();
    expect(symbolInName('BTCUSDT-vs-ETHUSDT.csv')).toBeUndefined();
  });

  it('writes one recording per symbol, each with its rules from one --pair-config answer, cut to --from/--to', async () => {
    const dir = tempDir('import-pairs');
    const xrp = candles(dir, 'binance-XRPUSDT-1m.csv', '0.5');
    const ada = candles(dir, 'binance-ADAUSDT-1m.csv', '0.4');
    const eth = candles(dir, 'binance-ETHUSDT-1m.csv', '1800');
    const config = join(dir, 'config.json');
    // The config endpoint's whole answer; ETHUSDT, a shipped pair, may go without an entry.
    writeFileSync(
      config,
      JSON.stringify({ status: 'ok', data: [entry('XRPUSDT', 'XRP', 0.0001), entry('ADAUSDT', 'ADA', 0.0001)] }),
    );
    const out = join(dir, 'rec');
    mkdirSync(out);
    const r = await capture(importCandles, [
      '--pair-config',
      config,
      '--from',
      '2023-04-10',
      '--to',
      '2023-04-10T00:01:00Z',
      '--out',
      out,
      xrp,
      ada,
      eth,
    ]);
    expect(r.code, r.err.join('\n')).toBe(0);
    expect(r.out).toHaveLength(3);
    for (const [symbol, price, tick] of [
      ['XRPUSDT', 0.5, 0.0001],
      ['ADAUSDT', 0.4, 0.0001],
      ['ETHUSDT', 1800, 0.01],
    ] as const) {
      const file = join(out, `${symbol}-2023-04-10.jsonl.gz`);
      const header = await readRecordingHeader(file);
      expect(header?.symbol).toBe(symbol);
      expect(header?.pair?.filters[0]).toMatchObject({ tickSize: tick });
      const tickers = await readAll(file);
      // One candle (00:00) written; the two before --from count in its 24-hour volume, the one at --to is left out.
      expect(tickers.map((t) => t.t)).toEqual([0, 15_000, 30_000, 45_000].map((o) => Date.UTC(2023, 3, 10) + o));
      expect(tickers.map((t) => t.p)).toEqual([price, price, price, price]);
      expect(tickers[0]?.vb).toBe(2);
      expect(tickers[3]?.vb).toBe(3);
    }
  });

  it('names what it cannot do: a file without a symbol in its name, one set of rule flags for several pairs, a pair missing from the config', async () => {
    const dir = tempDir('import-pairs');
    const plain = candles(dir, 'candles.csv', '1');
    const sol = candles(dir, 'SOLUSDT.csv', '20');
    const xrp = candles(dir, 'XRPUSDT.csv', '0.5');
    const unnamed = await capture(importCandles, ['--out', dir, plain]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.err.join('\n')).toMatch(/cannot tell the symbol of .*candles\.csv from its name .*give --symbol/);
    const flags = await capture(importCandles, [
      '--out',
      dir,
      '--tick-size',
      '0.01',
      '--base-precision',
      '2',
      sol,
      xrp,
    ]);
    expect(flags.code).toBe(2);
    expect(flags.err.join('\n')).toMatch(/the files are of SOLUSDT, XRPUSDT: .*--pair-config FILE/);
    const config = join(dir, 'one.json');
    writeFileSync(config, JSON.stringify([entry('XRPUSDT', 'XRP', 0.0001)]));
    const missing = await capture(importCandles, ['--out', dir, '--pair-config', config, sol, xrp]);
    expect(missing.code).toBe(2);
    expect(missing.err.join('\n')).toMatch(/one\.json holds no entry for SOLUSDT \(it has XRPUSDT\)/);
  });
});
