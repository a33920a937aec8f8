/**
 * `bot data export` through the real command (bin/bot.js, its own process): the CSV holds every ticker of the
 * recording, figure for figure; the Arrow file reads back with apache-arrow's reader and the Parquet file with
 * hyparquet, the same rows; a folder of two symbols and a time window; bad flags refused naming the flag, and
 * nothing written then.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { beforeAll, describe, expect, it } from 'vitest';
import { tickerFromWire } from '../../src/wire/schemas.js';
import type { Ticker } from '../../src/ports/venue-records.js';
import { readRecording } from '../../src/record/recording-reader.js';
import { ROOT } from '../e2e/daemon-process.js';
import { writeSlice } from '../support/recording-slice.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('data-export');

const SAMPLES = join(ROOT, 'data/samples');
const FROM = Date.parse('2023-03-08T00:00:00Z');
const TO = Date.parse('2023-03-08T06:00:00Z');
const usdt = join(dir, 'folder', 'BTCUSDT-slice.jsonl.gz');
const usdc = join(dir, 'folder', 'nested', 'BTCUSDC-slice.jsonl.gz');

function bot(...args: string[]) {
  const result = spawnSync(process.execPath, [join(ROOT, 'bin/bot.js'), 'data', 'export', ...args], {
    cwd: dir,
    encoding: 'utf8',
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function tickers(file: string, window: { from?: number; to?: number } = {}): Promise<Ticker[]> {
  const out: Ticker[] = [];
  for await (const t of readRecording(file, window)) out.push(tickerFromWire(t));
  return out;
}

/** A ticker as a row of the table: the columns in order, absent figures null. */
const row = (t: Ticker) => ({
  time: t.time,
  symbol: t.symbol,
  last: t.last,
  high: t.high ?? null,
  low: t.low ?? null,
  baseVolume: t.baseVolume ?? null,
  quoteVolume: t.quoteVolume ?? null,
});

let expected: Ticker[];

beforeAll(async () => {
  mkdirSync(join(dir, 'folder', 'nested'), { recursive: true });
  await writeSlice(join(SAMPLES, 'BTCUSDT-2023-03-01_21.jsonl.gz'), usdt, FROM, TO);
  await writeSlice(join(SAMPLES, 'BTCUSDC-2023-03-01_21.jsonl.gz'), usdc, FROM, TO);
  expected = await tickers(usdt);
  expect(expected.length).toBe(1440);
});

describe('bot data export', () => {
  it('csv: a header and a row per ticker, each figure the recording holds', () => {
    const run = bot('--format', 'csv', '--out', 'slice.csv', usdt);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('1,440 rows of BTCUSDT from 1 file(s) to slice.csv');
    const lines = readFileSync(join(dir, 'slice.csv'), 'utf8').split('\n');
    expect(lines[0]).toBe('time,symbol,last,high,low,baseVolume,quoteVolume');
    expect(lines.at(-1)).toBe('');
    const rows = lines.slice(1, -1).map((l) => l.split(','));
    expect(rows).toHaveLength(expected.length);
    rows.forEach((r, i) => {
      const t = expected[i]!;
      expect([Number(r[0]), r[1], Number(r[2]), Number(r[3]), Number(r[4]), Number(r[5]), Number(r[6])]).toEqual([
        t.time,
        t.symbol,
        t.last,
        t.high,
        t.low,
        t.baseVolume,
        t.quoteVolume,
      ]);
    });
    expect(existsSync(join(dir, 'slice.csv.partial'))).toBe(false);
  });

  it('csv: a folder of two symbols (nested too), within --from/--to, to standard output', async () => {
    const from = '2023-03-08T01:00:00Z';
    const to = '2023-03-08T01:30:00Z';
    const run = bot('--format', 'csv', '--out', '-', '--from', from, '--to', to, join(dir, 'folder'));
    expect(run.code, run.stderr).toBe(0);
    const window = { from: Date.parse(from), to: Date.parse(to) };
    // Files sorted by path: BTCUSDT-slice before nested/BTCUSDC-slice.
    const want = [...(await tickers(usdt, window)), ...(await tickers(usdc, window))];
    const got = run.stdout.trim().split('\n').slice(1);
    expect(got).toHaveLength(240);
    expect(got.map((l) => l.split(',').slice(0, 3).join(','))).toEqual(
      want.map((t) => `${t.time},${t.symbol},${t.last}`),
    );
  });

  it('arrow: the file reads back with apache-arrow, the same rows, time a UTC millisecond timestamp', () => {
    const run = bot('--format', 'arrow', usdt);
    expect(run.code, run.stderr).toBe(0);
    const table = tableFromIPC(readFileSync(join(dir, 'BTCUSDT-slice.arrow')));
    expect(table.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'time:Timestamp<MILLISECOND, UTC>',
      'symbol:Utf8',
      'last:Float64',
      'high:Float64',
      'low:Float64',
      'baseVolume:Float64',
      'quoteVolume:Float64',
    ]);
    expect(table.toArray().map((r: { toJSON(): unknown }) => r.toJSON())).toEqual(expected.map(row));
  });

  it('parquet: the file reads back with hyparquet, the same rows', async () => {
    const run = bot('--format', 'parquet', '--out', 'slice.parquet', usdt);
    expect(run.code, run.stderr).toBe(0);
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(join(dir, 'slice.parquet')) });
    expect(rows).toEqual(expected.map((t) => ({ ...row(t), time: new Date(t.time) })));
  });

  it('refuses bad flags naming the flag, and writes nothing', () => {
    const before = readdirSync(dir).sort();
    const cases: [string[], string][] = [
      [['--format', 'xml', usdt], "--format must be one of csv, arrow, parquet, got 'xml'"],
      [[usdt], '--format is required (csv, arrow, parquet)'],
      [['--forma', 'csv', usdt], 'unknown flag --forma; did you mean --format?'],
      [['--format', 'arrow', '--out', '-', usdt], '--out - (standard output) is for csv only'],
      [
        ['--format', 'csv', '--from', 'yesterday', usdt],
        "--from must be an ISO 8601 time such as 2023-03-10T00:00:00Z, got 'yesterday'",
      ],
      [['--format', 'csv'], 'name at least one recording'],
      [['--format', 'csv', '--out', 'x.jsonl.gz', usdt], '--out x.jsonl.gz would look like a recording'],
      [
        ['--format', 'arrow', '--out', 'missing-dir/x.arrow', usdt],
        '--out missing-dir/x.arrow: there is no folder missing-dir to write it in',
      ],
    ];
    for (const [args, message] of cases) {
      const run = bot(...args);
      expect(run.stderr, args.join(' ')).toContain(`data export: ${message}`);
      expect(run.code, args.join(' ')).toBe(2);
    }
    const missing = bot('--format', 'csv', join(dir, 'nope.jsonl.gz'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('nope.jsonl.gz');
    const none = bot('--format', 'csv', '--out', 'none.csv', '--from', '2024-01-01', usdt);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no ticker to export');
    expect(readdirSync(dir).sort()).toEqual(before);
  });
});
