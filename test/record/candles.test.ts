import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { WireTicker } from '../../src/wire/schemas.js';
import { CandleFileError, importCandles, walkCandle, type Candle } from '../../src/record/candles.js';
import { dec } from '../../src/market/decimal.js';
import { readRecordingHeader } from '../../src/record/recording-reader.js';
import { SPEC_TICKER_KEYS, readAll } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { assetsOf } from '../../src/cli/import-candles.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('spot-bot-record');
});

const HEADER = 'open_time,open,high,low,close,volume';

function csv(name: string, rows: string[], header = HEADER): string {
  const file = path.join(dir, name);
  writeFileSync(file, [header, ...rows, ''].join('\n'));
  return file;
}

async function importRows(rows: string[], symbol = 'BTCUSDT'): Promise<WireTicker[]> {
  const result = await importCandles({ symbol, files: [csv('c.csv', rows)], outDir: dir, assets: assetsOf(symbol) });
  return readAll(result.file);
}

const candle = (open: string, high: string, low: string, close: string): Candle => ({
  openTime: 0,
  open,
  high,
  low,
  close,
  volume: dec(1),
});

describe('candle walk', () => {
  it('visits open, the nearer extreme, the other extreme, close', () => {
    expect(walkCandle(candle('100', '101', '90', '95'))).toEqual(['100', '101', '90', '95']); // down, high nearer
    expect(walkCandle(candle('100', '110', '99', '105'))).toEqual(['100', '99', '110', '105']); // up, low nearer
    expect(walkCandle(candle('100', '110', '99.5', '95'))).toEqual(['100', '99.5', '110', '95']); // down, low nearer
    expect(walkCandle(candle('100', '100.5', '90', '105'))).toEqual(['100', '100.5', '90', '105']); // up, high nearer
  });

  it('breaks a tie by the candle direction: an up candle dips first, a down candle rises first', () => {
    expect(walkCandle(candle('100', '105', '95', '102'))).toEqual(['100', '95', '105', '102']);
    expect(walkCandle(candle('100', '105', '95', '98'))).toEqual(['100', '105', '95', '98']);
    expect(walkCandle(candle('0.3', '0.4', '0.2', '0.35'))).toEqual(['0.3', '0.2', '0.4', '0.35']); // exact, no float noise
  });

  it('writes four tickers per candle at +0/15/30/45 s in walk order, with every spec key', async () => {
    const tickers = await importRows([
      '2023-03-01 00:00:00+00:00,100,110,99,105,2',
      '2023-03-01 00:01:00+00:00,105,106,90,95,3',
    ]);
    const t0 = Date.UTC(2023, 2, 1);
    expect(tickers.map((t) => [t.t - t0, t.p])).toEqual([
      [0, 100],
      [15_000, 99],
      [30_000, 110],
      [45_000, 105],
      [60_000, 105],
      [75_000, 106],
      [90_000, 90],
      [105_000, 95],
    ]);
    for (const t of tickers) for (const key of SPEC_TICKER_KEYS) expect(t).toHaveProperty(key);
    expect(tickers[0]).toMatchObject({ s: 'BTCUSDT', b: 'BTC', q: 'USDT', bi: 1, qi: 2, u: false, lbl: '' });
    expect(tickers[6]).toMatchObject({ hy: 110, ly: 90, py: 90, pw: 90 });
  });
});

describe('rolling 24-hour values', () => {
  it('track high, low and volume over the trailing day, across the window boundary', async () => {
    const tickers = await importRows([
      '2023-03-01 00:00:00+00:00,100,200,50,150,1.5',
      '2023-03-01 12:00:00+00:00,150,160,140,155,2.25',
      '2023-03-02 00:00:00+00:00,155,158,152,156,4', // first candle leaves the window here
      '2023-03-02 12:00:00+00:00,156,157,151,153,0.125', // second leaves here
    ]);
    const at = (candle: number, step: number) => tickers[candle * 4 + step]!;
    // Within the first candle the window holds only what it has walked so far; its volume counts at close.
    expect([at(0, 0).h, at(0, 0).l, at(0, 0).vb]).toEqual([100, 100, 0]);
    expect([at(0, 1).h, at(0, 1).l]).toEqual([100, 50]);
    expect([at(0, 3).h, at(0, 3).l, at(0, 3).vb]).toEqual([200, 50, 1.5]);
    expect([at(1, 0).h, at(1, 0).l, at(1, 3).vb]).toEqual([200, 50, 3.75]);
    // 24 h after the first candle opened it is out: high/low/volume come from candles two and three only.
    expect([at(2, 0).h, at(2, 0).l, at(2, 0).vb]).toEqual([160, 140, 2.25]);
    expect([at(2, 3).h, at(2, 3).l, at(2, 3).vb]).toEqual([160, 140, 6.25]);
    expect([at(3, 0).h, at(3, 0).l, at(3, 0).vb]).toEqual([158, 152, 4]);
    expect([at(3, 3).h, at(3, 3).l, at(3, 3).vb]).toEqual([158, 151, 4.125]);
    // Quote volume: volume × (high + low + close) / 3, rounded to 8 decimals.
    expect(at(0, 3).vq).toBe(200); // 1.5 × 400 / 3
    expect(at(3, 3).vq).toBe(Number(dec(4).times(466).div(3).toDecimalPlaces(8).plus('19.20833333').toFixed()));
  });

  it('keeps the monotonic window right over a full day of one-minute candles', async () => {
    const start = Date.UTC(2023, 2, 1);
    const rows: string[] = [];
    const highs: number[] = [];
    for (let i = 0; i < 1500; i++) {
      const high = 1000 + ((i * 7919) % 1009); // pseudo-random, exact integers
      highs.push(high);
      const time = new Date(start + i * 60_000).toISOString().replace('T', ' ').replace('.000Z', '+00:00');
      rows.push(`${time},${high - 1},${high},${high - 2},${high - 1},1`);
    }
    const tickers = await importRows(rows);
    for (const i of [0, 100, 1439, 1440, 1441, 1499]) {
      const window = highs.slice(Math.max(0, i - 1439), i + 1);
      expect(tickers[i * 4 + 3]!.h).toBe(Math.max(...window));
      expect(tickers[i * 4 + 3]!.vb).toBe(window.length);
    }
  });
});

describe('candle CSV import', () => {
  it('names the output after symbol and days, with a header saying where it came from', async () => {
    const file = csv('binanceus-X.csv', ['2023-03-01 00:00:00+00:00,1,1,1,1,0', '2023-03-21 23:59:00+00:00,1,1,1,1,0']);
    const result = await importCandles({ symbol: 'BTCUSDC', files: [file], outDir: dir, assets: assetsOf('BTCUSDC') });
    expect(path.basename(result.file)).toBe('BTCUSDC-2023-03-01_21.jsonl.gz');
    expect(result).toMatchObject({ candles: 2, tickers: 8 });
    const header = await readRecordingHeader(result.file);
    expect(header).toMatchObject({ symbol: 'BTCUSDC', source: 'candles' });
    expect(header?.provenance).toContain('binanceus-X.csv');
    expect((await readAll(result.file))[0]).toMatchObject({ b: 'BTC', q: 'USDC', bi: 1, qi: 3 });
  });

  it('writes prices and volumes as exact decimals, exponent input included', async () => {
    const tickers = await importRows(['2023-03-01 00:00:00+00:00,0.1,0.3,0.1,0.2,9e-05']);
    expect(tickers.map((t) => t.p)).toEqual([0.1, 0.1, 0.3, 0.2]);
    expect(tickers[3]!.vb).toBe(0.00009);
    expect(tickers[3]!.vq).toBe(0.000018); // 0.00009 × 0.6 / 3
  });

  it('continues one series across several files and rejects time going back between them', async () => {
    const a = csv('a.csv', ['2023-03-01 00:00:00+00:00,1,2,1,2,1']);
    const b = csv('b.csv', ['2023-03-01 00:01:00+00:00,2,3,2,3,1']);
    const result = await importCandles({ symbol: 'BTCUSDT', files: [a, b], outDir: dir, assets: assetsOf('BTCUSDT') });
    expect((await readAll(result.file)).at(-1)).toMatchObject({ h: 3, l: 1, vb: 2 });
    await expect(
      importCandles({ symbol: 'BTCUSDT', files: [b, a], outDir: dir, assets: assetsOf('BTCUSDT') }),
    ).rejects.toThrow(`${a}:2: open_time`);
  });

  it.each([
    ['a bad header', 'time,open,high,low,close,volume', [], ':1: expected the header'],
    [
      'a bad number',
      HEADER,
      ['2023-03-01 00:00:00+00:00,1,2,1,x,1'],
      ":2: close: expected a non-negative decimal, found 'x'",
    ],
    ['a bad time', HEADER, ['2023-03-01,1,2,1,2,1'], ':2: open_time: expected a time like'],
    ['a missing column', HEADER, ['2023-03-01 00:00:00+00:00,1,2,1,2'], ':2: expected 6 columns, found 5'],
    [
      'a non-increasing time',
      HEADER,
      ['2023-03-01 00:01:00+00:00,1,2,1,2,1', '2023-03-01 00:01:00+00:00,1,2,1,2,1'],
      ':3: open_time 2023-03-01 00:01:00+00:00 is not at least one minute after',
    ],
    ['a high below the close', HEADER, ['2023-03-01 00:00:00+00:00,1,2,1,3,1'], ':2: low 1 and high 2 do not bound'],
  ])('rejects %s, naming the file and the line', async (_what, header, rows, message) => {
    const file = csv('bad.csv', rows, header);
    const err = await importCandles({
      symbol: 'BTCUSDT',
      files: [file],
      outDir: dir,
      assets: assetsOf('BTCUSDT'),
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CandleFileError);
    expect((err as CandleFileError).message).toContain(`${file}${message}`);
  });

  it('derives base and quote from the symbol, with overrides and clear errors', () => {
    expect(assetsOf('BTCUSDT')).toEqual({ base: 'BTC', quote: 'USDT', baseId: 1, quoteId: 2 });
    expect(assetsOf('BTCUSDC')).toEqual({ base: 'BTC', quote: 'USDC', baseId: 1, quoteId: 3 });
    expect(assetsOf('XBTZ', { base: 'XBT', quote: 'Z', baseId: 7, quoteId: 8 })).toEqual({
      base: 'XBT',
      quote: 'Z',
      baseId: 7,
      quoteId: 8,
    });
    // No id to guess: the built-in ids, else one derived from the code, never a built-in's or another code's.
    expect(assetsOf('ETHUSDT')).toMatchObject({ baseId: 4, quoteId: 2 });
    const usd = assetsOf('BTCUSD').quoteId;
    const eur = assetsOf('BTCEUR').quoteId;
    expect(usd).toBeGreaterThan(4);
    expect(eur).toBeGreaterThan(4);
    expect(usd).not.toBe(eur);
    expect(() => assetsOf('ABCXYZ')).toThrow('give --base and --quote');
  });
});
