/**
 * Loading several recordings into one series (tick-data.ts): files in time order keep the columns as read (no
 * copy), overlapping ticks squeezed out in place; files given out of order are merged by time into a copy.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadTicks, releaseColumns, type TickData } from '../../src/backtest/tick-data.js';
import { SAMPLE } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { columnArrays, columnStorage } from '../support/tick-columns.js';
import { columnValues, type NumberColumn } from '../../src/backtest/number-column.js';

const columns = columnArrays;
/** Whether the columns are the loader's own growable memory (not a copy made to merge). */
const asRead = (data: TickData) =>
  (data.columns.price.values.buffer as SharedArrayBuffer & { growable: boolean }).growable;

describe('loading several recordings', () => {
  it('merges one pair’s files in time order without a copy, dropping what the next file repeats', async () => {
    const dir = tempDir('tick-data');
    const [header, ...tickers] = gunzipSync(readFileSync(SAMPLE)).toString('utf8').trim().split('\n');
    const part = (name: string, lines: string[]) => {
      const file = join(dir, `BTCUSDT-${name}.jsonl.gz`);
      writeFileSync(file, gzipSync(`${[header, ...lines].join('\n')}\n`));
      return file;
    };
    // b repeats a's last ticker (same time: the files stay in time order), b5 its last 5 (earlier than a's end).
    const a = part('a', tickers.slice(0, 40_000));
    const b = part('b', tickers.slice(39_999, 80_000));
    const b5 = part('b5', tickers.slice(39_995, 80_000));
    const c = part('c', tickers.slice(80_000));
    const whole = await loadTicks([SAMPLE]);
    const warnings: string[] = [];
    const inOrder = await loadTicks([a, b, c], { warn: (m) => warnings.push(m) });
    expect(inOrder.length).toBe(whole.length);
    expect(columns(inOrder)).toEqual(columns(whole));
    expect(warnings).toEqual([`${b}: skipped 1 tickers not later than the ticker before them in another file`]);
    expect(asRead(inOrder)).toBe(true);
    // Overlapping by more than a tie, the files are sorted by time, and what is kept is still in the order read:
    // squeezed in place. Given out of order, they are merged by time into a copy.
    for (const [files, copied] of [
      [[a, b5, c], false],
      [[c, a, b], true],
    ] as const) {
      warnings.length = 0;
      const merged = await loadTicks(files, { warn: (m) => warnings.push(m) });
      expect(columns(merged)).toEqual(columns(whole));
      const skipped = files.includes(b5) ? `${b5}: skipped 5` : `${b}: skipped 1`;
      expect(warnings).toEqual([expect.stringContaining(skipped)]);
      expect(asRead(merged)).toBe(!copied);
    }
  });
});

describe('releasing the columns', () => {
  it('leaves the data with no ticks and no hold on the loaded (shared) buffers, its files as they were', async () => {
    const data = await loadTicks([SAMPLE]);
    const files = data.files;
    const buffers = new Set(columnStorage(data).map((c) => c.buffer));
    expect(data.length).toBeGreaterThan(0);
    releaseColumns(data);
    expect(data.length).toBe(0);
    expect(data.files).toBe(files);
    for (const column of columnStorage(data)) {
      expect(column.length).toBe(0);
      expect(buffers.has(column.buffer)).toBe(false);
    }
  });
});

describe('narrow columns', () => {
  const dir = tempDir('tick-data-narrow');
  const [header] = gunzipSync(readFileSync(SAMPLE)).toString('utf8').split('\n');
  const T0 = Date.UTC(2023, 2, 1);
  /** A recording of these tickers (each t seconds after T0 unless it gives its own time in ms). */
  const recording = (name: string, tickers: { p: number; h?: number; vq?: number; ms?: number }[]) => {
    const file = join(dir, `BTCUSDT-${name}.jsonl.gz`);
    const lines = tickers.map((x, k) =>
      JSON.stringify({ s: 'BTCUSDT', p: x.p, t: x.ms ?? T0 + k * 1000, h: x.h, l: x.p, vb: 1.5, vq: x.vq ?? 0 }),
    );
    writeFileSync(file, gzipSync(`${[header, ...lines].join('\n')}\n`));
    return file;
  };
  const kinds = (data: TickData) =>
    Object.fromEntries(
      Object.entries(data.columns).map(([k, c]: [string, Uint16Array | NumberColumn]) => [
        k,
        c instanceof Uint16Array ? 'u16' : c.narrow,
      ]),
    );
  /** What each ticker's keys parse to, as the columns should read them back (NaN for an absent key). */
  const expected = (tickers: { p: number; h?: number; vq?: number; ms?: number }[]) => ({
    time: tickers.map((x, k) => x.ms ?? T0 + k * 1000),
    price: tickers.map((x) => x.p),
    high: tickers.map((x) => x.h ?? NaN),
    vq: tickers.map((x) => x.vq ?? 0),
  });
  const read = (data: TickData) => ({
    time: columnValues(data.columns.time),
    price: columnValues(data.columns.price),
    high: columnValues(data.columns.high),
    vq: columnValues(data.columns.vq),
  });

  it('keeps prices, times and volumes in four bytes while they are whole numbers of a unit, exactly', async () => {
    const cents = [{ p: 23140.48, h: 23150 }, { p: 23150.77 }, { p: 0.01, h: 23150.77 }, { p: 4, vq: 12 }];
    const data = await loadTicks([recording('cents', cents)]);
    expect(kinds(data)).toEqual({ sym: 'u16', time: true, price: true, high: true, low: true, vb: true, vq: true });
    expect(data.columns.price.values).toBeInstanceOf(Uint32Array);
    expect(data.columns.price.div).toBe(100);
    expect(read(data)).toEqual(expected(cents));
  });

  it('moves a group to a finer unit or to float64 when a value needs it, the values read before unchanged', async () => {
    const cache = join(dir, 'cache');
    // Cents, then a price in ten-thousandths (price, high and low share the finer unit), then a quote volume
    // of 8 places beyond four bytes and a time in milliseconds (wide).
    const mixed = [
      { p: 23140.48, h: 23150.5 },
      { p: 23140.1234 },
      { p: 23141, vq: 48_347_161.310_822_92 },
      { p: 23142.5, ms: T0 + 3000 + 7 },
    ];
    const file = recording('mixed', mixed);
    for (const load of [() => loadTicks([file]), () => loadTicks([file], { cacheDir: cache })]) {
      const data = await load();
      expect(kinds(data)).toEqual({ sym: 'u16', time: false, price: true, high: true, low: true, vb: true, vq: false });
      expect(data.columns.high.div).toBe(10_000);
      expect(read(data)).toEqual(expected(mixed));
    }
    // Read back from the cache (this load) in the units it was written in.
    const warm = await loadTicks([file], { cacheDir: cache });
    expect(read(warm)).toEqual(expected(mixed));
    // A cents file and a finer one, both cached: the second's units do not match the first's, and it is put
    // value by value into the load's (the cents refit), as a load of the recordings puts them.
    const later = mixed.map((x, k) => ({ ...x, ms: T0 + (10 + k) * 1000 }));
    const a = recording('a-cents', [{ p: 1.25 }, { p: 2.5, h: 3 }]);
    const b = recording('b-finer', later);
    const plain = await loadTicks([a, b]);
    await loadTicks([a, b], { cacheDir: cache });
    const cached = await loadTicks([a, b], { cacheDir: cache });
    expect(columnArrays(cached)).toEqual(columnArrays(plain));
    expect(cached.columns.price.div).toBe(10_000);
    expect(columnValues(cached.columns.price)).toEqual([1.25, 2.5, ...later.map((x) => x.p)]);
  });
});
