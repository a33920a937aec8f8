/**
 * Loading several recordings into one series (tick-data.ts): files in time order keep the columns as read (no
 * copy), overlapping ticks squeezed out in place; files given out of order are merged by time into a copy.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { loadTicks, releaseColumns, type TickData } from '../../src/backtest/tick-data.js';
import { SAMPLE, tempDir } from './fixtures.js';

const columns = (data: TickData) => Object.values(data.columns).map((c: Float64Array | Uint16Array) => Array.from(c));
/** Whether the columns are the loader's own growable memory (not a copy made to merge). */
const asRead = (data: TickData) => (data.columns.price.buffer as SharedArrayBuffer & { growable: boolean }).growable;

describe('loading several recordings', () => {
  it('merges one pair’s files in time order without a copy, dropping what the next file repeats', async () => {
    const dir = tempDir('tick-data-');
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
    const buffers = new Set(Object.values(data.columns).map((c: Float64Array | Uint16Array) => c.buffer));
    expect(data.length).toBeGreaterThan(0);
    releaseColumns(data);
    expect(data.length).toBe(0);
    expect(data.files).toBe(files);
    for (const column of Object.values(data.columns) as (Float64Array | Uint16Array)[]) {
      expect(column.length).toBe(0);
      expect(buffers.has(column.buffer)).toBe(false);
    }
  });
});
