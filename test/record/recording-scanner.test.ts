import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { RECORDING_FORMAT } from '../../src/record/recording-format.js';
import { readRecordingBatches } from '../../src/record/recording-reader.js';
import { scanRecording } from '../../src/record/recording-scanner.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { tempDir } from '../support/temp-dir.js';
import { columnValues } from '../../src/backtest/number-column.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('spot-bot-record');
});

type Row = [string, number, number, number, number, number, number];

/** What the object reader gives, in the columns' terms (the conversions tick-data.ts made before the scanner). */
async function viaReader(file: string, options: { from?: number; to?: number } = {}): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of readRecordingBatches(file, { ...options, warn: () => undefined }))
    for (const t of batch)
      rows.push([
        t.s,
        t.t,
        Number(t.p),
        Number(t.h ?? NaN),
        Number(t.l ?? NaN),
        Number(t.vb ?? NaN),
        Number(t.vq ?? NaN),
      ]);
  return rows;
}

/** The scanner's ticks, windowed as loadTicks windows them: [0, stop) at or after `from`. */
async function viaScanner(file: string, options: { from?: number; to?: number; readAll?: boolean } = {}) {
  const names: string[] = [];
  const rows: Row[] = [];
  const result = await scanRecording(
    file,
    {
      symbol: (t) => names.push(t.s) - 1,
      push: (s, ...values) => rows.push([names[s] as string, ...values]),
    },
    options,
  );
  const from = options.from ?? -Infinity;
  return { rows: rows.slice(0, result.stop).filter((r) => r[1] >= from), result };
}

/** Values compared with Object.is: NaN equals NaN, -0 differs from 0. */
function same(a: Row[], b: Row[]): boolean {
  return a.length === b.length && a.every((row, i) => row.every((v, k) => Object.is(v, b[i]![k])));
}

/** A JSON number text for v in one of the ways a writer might spell it. */
const spelled = (v: number, style: number): string => {
  if (!Number.isFinite(v)) return '0';
  switch (style % 5) {
    case 0:
      return JSON.stringify(v);
    case 1:
      return v.toExponential();
    case 2:
      return v.toExponential().toUpperCase().replace('E', 'E+').replace('+-', '-').replace('++', '+');
    case 3:
      return Number.isInteger(v) && Math.abs(v) < 1e15 ? `${v}.000` : JSON.stringify(v);
    default:
      return Math.abs(v) < 1e21 ? v.toFixed(Math.min(20, 3 + (style % 17))).replace(/^-0\.0+$/, '-0.0') : '1';
  }
};

const numberText = fc.oneof(
  fc.tuple(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.nat()).map(([v, s]) => spelled(v, s)),
  fc
    .tuple(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 0, max: 8 }))
    .map(([m, k]) => (k === 0 ? `${m}` : `${Math.floor(m / 10 ** k)}.${String(m % 10 ** k).padStart(k, '0')}`)),
  // Long mantissas, where a naive conversion rounds twice.
  fc
    .tuple(fc.stringMatching(/^[1-9][0-9]{14,19}$/), fc.integer({ min: 0, max: 19 }))
    .map(([d, k]) => (k === 0 ? d : `${d.slice(0, -k) || '0'}.${d.slice(-k)}`)),
  fc.constantFrom('0', '-0', '-0.0', '0.1', '1e-7', '123456789012345678901234567890', '0.30000000000000004'),
);
const ws = fc.constantFrom('', ' ', '\t', ' \r ');
const symbolText = fc.constantFrom('"BTCUSDT"', '"ETHUSDT"', '"BTC\\u0055SDT"', '"ÉTHÜSD"');
const optional = fc.oneof(numberText, fc.constant('null'), fc.constant('"12.5"'), fc.constant('true'));
const extra = fc.constantFrom('{"a":[1,{"b":null}],"c":"x\\"y"}', '[]', '"pairs"', 'false', '{}', '-1.5e-3');

/** One ticker line with keys in any order, extra keys, optional keys missing or of other types. */
const tickerLine = fc
  .record({
    s: symbolText,
    p: fc.oneof({ weight: 40, arbitrary: numberText }, { weight: 1, arbitrary: fc.constant('"23000.5"') }),
    t: fc.integer({ min: 1_600_000_000_000, max: 1_700_000_000_000 }).map((t) => `${t}`),
    h: fc.option(optional, { nil: undefined }),
    l: fc.option(optional, { nil: undefined }),
    vb: fc.option(optional, { nil: undefined }),
    vq: fc.option(optional, { nil: undefined }),
    x: fc.option(extra, { nil: undefined }),
    b: fc.option(fc.constantFrom('"BTC"', 'null'), { nil: undefined }),
    bi: fc.option(fc.constantFrom('1', 'null'), { nil: undefined }),
  })
  .chain((fields) => {
    const entries = Object.entries(fields).filter((e): e is [string, string] => e[1] !== undefined);
    return fc.tuple(fc.shuffledSubarray(entries, { minLength: entries.length }), fc.array(ws, { minLength: 4 }));
  })
  .map(([entries, spaces]) => {
    const sp = (i: number) => spaces[i % spaces.length] as string;
    return `${sp(0)}{${entries.map(([k, v], i) => `${sp(i + 1)}"${k}"${sp(i)}:${sp(i + 2)}${v}`).join(',')}${sp(3)}}${sp(1)}`;
  });

const HEADER = JSON.stringify({ format: RECORDING_FORMAT, version: 2, symbol: 'BTCUSDT', source: 'test' });

function writeRecording(lines: string[], name = 'r.jsonl.gz'): string {
  const file = path.join(dir, name);
  writeFileSync(file, gzipSync(lines.join('\n') + '\n'));
  return file;
}

describe('recording scanner', () => {
  it('reads exactly what the object reader reads, bit for bit, however the lines are spelled', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(tickerLine, { minLength: 1, maxLength: 40 }),
        fc.boolean(),
        fc.nat(),
        async (lines, withHeader, cut) => {
          const file = writeRecording(withHeader ? [HEADER, ...lines] : lines);
          const failed = (e: Error) => e.message;
          const expected = await viaReader(file).catch(failed);
          const scanned = await viaScanner(file).catch(failed);
          if (typeof expected === 'string' || typeof scanned === 'string') {
            // A line the reader refuses (a string p with a vb of true, …): the same error.
            expect(typeof scanned === 'string' ? scanned : 'read').toBe(expected);
            return;
          }
          expect(same(scanned.rows, expected)).toBe(true);
          expect(scanned.result.complete).toBe(true);
          // A window: the reader stops at the first ticker at or after `to` and drops those before `from`.
          const times = expected.map((r) => r[1]).sort((a, b) => a - b);
          const from = times[cut % times.length]!;
          const to = times[(cut * 7) % times.length]! + 1;
          for (const readAll of [false, true]) {
            const windowed = await viaScanner(file, { from, to, readAll });
            expect(same(windowed.rows, await viaReader(file, { from, to }))).toBe(true);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it('reads lines across the decompressed chunks (128 KB) as the reader does, a line longer than a chunk too', async () => {
    // Lines of varying length, so that chunk ends fall inside lines, inside numbers and right after newlines;
    // one line carries a 300 KB filler key (it spans whole chunks), one is bad.
    const lines = [HEADER];
    for (let k = 0; k < 6000; k++) {
      const filler = k === 2500 ? 'x'.repeat(300_000) : 'y'.repeat((k * 37) % 101);
      lines.push(`{"s":"BTCUSDT","p":${1000 + k / 100},"t":${k + 1},"vb":${k}.5,"f":"${filler}"}`);
    }
    const file = writeRecording(lines);
    const expected = await viaReader(file);
    expect(expected).toHaveLength(6000);
    expect(same((await viaScanner(file)).rows, expected)).toBe(true);
    // A window ending on the lines around the long one and at a few others.
    for (const to of [2500, 2501, 2502, 3333, 5999]) {
      const windowed = await viaScanner(file, { to });
      expect(same(windowed.rows, await viaReader(file, { to })), String(to)).toBe(true);
    }
    // A bad line after the long one is named by its number.
    lines[4000] = lines[4000]!.replace('"p":', '"p":0');
    const bad = writeRecording(lines, 'bad.jsonl.gz');
    const message = await viaScanner(bad).catch((e: Error) => e.message);
    expect(message).toBe(await viaReader(bad).catch((e: Error) => e.message));
    expect(message).toContain(`${bad}:4001`);
  });

  it('hashes the compressed file in the same pass', async () => {
    const file = writeRecording([HEADER, '{"s":"BTCUSDT","p":1,"t":1}']);
    const { result } = await viaScanner(file);
    const { createHash } = await import('node:crypto');
    const { readFileSync } = await import('node:fs');
    expect(result.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
  });

  it('fails on a bad line as the reader does, naming the file and line; past --to it reads on quietly', async () => {
    const good = (t: number) => `{"s":"BTCUSDT","p":1.5,"t":${t}}`;
    for (const bad of [
      '{"s":"BTCUSDT","p":1.5,"t":3,}',
      '{"s":"BTCUSDT","p":01,"t":3}',
      '{"s":"BTCUSDT","t":3}',
      '[1]',
    ]) {
      const file = writeRecording([HEADER, good(1), good(2), bad, good(4)]);
      const reader = await viaReader(file).catch((e: Error) => e.message);
      const scanner = await viaScanner(file).catch((e: Error) => e.message);
      expect(typeof reader).toBe('string');
      expect(scanner).toBe(reader);
      expect(scanner).toContain(`${file}:4`);
      // Stopped before the bad line: no error, and not a complete (cacheable) read.
      const past = await viaScanner(file, { to: 2, readAll: true });
      expect(past.rows.map((r) => r[1])).toEqual([1]);
      expect(past.result.complete).toBe(false);
    }
  });

  it('reads a file cut at any byte as the reader does: the same ticks, the same break or the same error', async () => {
    const lines = [HEADER, ...Array.from({ length: 30 }, (_, i) => `{"s":"BTCUSDT","p":${100 + i}.25,"t":${i},"h":1}`)];
    const whole = gzipSync(lines.join('\n') + '\n');
    for (let cut = 20; cut < whole.length; cut += 7) {
      const file = path.join(dir, `cut-${cut}.jsonl.gz`);
      writeFileSync(file, whole.subarray(0, cut));
      const quiet = { warn: () => undefined };
      const strict = await loadTicks([file], quiet).then(
        (d) => columnValues(d.columns.price),
        (e: Error) => e.message,
      );
      const reader = await viaReader(file).then(
        (rows) => rows.map((r) => r[2]),
        (e: Error) => e.message,
      );
      expect(strict).toEqual(reader);
      const partial = await loadTicks([file], { ...quiet, allowPartial: true });
      const expected: number[] = [];
      for await (const batch of readRecordingBatches(file, { ...quiet, allowPartial: true }))
        expected.push(...batch.map((t) => t.p));
      expect(columnValues(partial.columns.price)).toEqual(expected);
    }
  });
});
