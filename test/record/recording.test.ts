import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import type { WireTicker } from '../../src/wire/schemas.js';
import { RecordingError, type RecordingHeader } from '../../src/record/recording-format.js';
import {
  listRecordingFiles,
  readRecordingHeader,
  readRecordings,
  readSymbolRecordings,
} from '../../src/record/recording-reader.js';
import { RecordingWriter } from '../../src/record/recording-writer.js';
import { SPEC_TICKER_KEYS, fullTicker, header, readAll } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('spot-bot-record');
});

async function write(file: string, tickers: WireTicker[], batch = 1): Promise<void> {
  const writer = await RecordingWriter.open(file, { header: header() });
  for (let i = 0; i < tickers.length; i += batch) await writer.writeTickers(tickers.slice(i, i + batch));
  await writer.close();
}

const T0 = Date.UTC(2024, 0, 2, 3, 4, 5);
const series = (n: number, from = T0) => Array.from({ length: n }, (_, i) => fullTicker(from + i * 1000, 63000 + i));

describe('recording format', () => {
  it('round-trips every key of the ticker, unknown keys included, after a header line', async () => {
    const file = path.join(dir, 'r.jsonl.gz');
    const tickers = series(3);
    await write(file, tickers);
    const headers: RecordingHeader[] = [];
    const back = await readAll(file, { onHeader: (h) => headers.push(h) });
    expect(back).toEqual(tickers);
    for (const key of SPEC_TICKER_KEYS) expect(back[0]).toHaveProperty(key);
    expect(headers).toEqual([header()]);
    expect(await readRecordingHeader(file)).toEqual(header());
  });

  it('reads a headerless file of tickers and numeric-text prices through the ticker schema', async () => {
    const file = path.join(dir, 'plain.jsonl.gz');
    writeFileSync(file, gzipSync('{"s":"X","p":"1.5","t":1,"k":true}\n{"s":"X","p":2,"t":2}\n'));
    expect(await readAll(file)).toEqual([
      { s: 'X', p: 1.5, t: 1, k: true },
      { s: 'X', p: 2, t: 2 },
    ]);
    expect(await readRecordingHeader(file)).toBeUndefined();
  });

  it('appends a new gzip member when a file is reopened, without a second header', async () => {
    const file = path.join(dir, 'r.jsonl.gz');
    const tickers = series(5);
    await write(file, tickers.slice(0, 2));
    const reopened = await RecordingWriter.open(file, { header: header() });
    expect(JSON.parse(reopened.lastLine!)).toEqual(tickers[1]);
    await reopened.writeTickers(tickers.slice(2));
    await reopened.close();
    const raw = readFileSync(file);
    const members = raw.reduce(
      (n, byte, i) => n + (byte === 0x1f && raw[i + 1] === 0x8b && raw[i + 2] === 8 ? 1 : 0),
      0,
    );
    expect(members).toBeGreaterThanOrEqual(2);
    let headers = 0;
    expect(await readAll(file, { onHeader: () => headers++ })).toEqual(tickers);
    expect(headers).toBe(1);
  });

  it('makes each batch readable as soon as it is written (sync flush), before close', async () => {
    const file = path.join(dir, 'open.jsonl.gz');
    const writer = await RecordingWriter.open(file, { header: header() });
    await writer.writeTickers(series(2));
    // Until it is closed the file ends inside its gzip member: a partial read, said once.
    const warnings: string[] = [];
    expect(await readAll(file, { warn: (m) => warnings.push(m), allowPartial: true })).toEqual(series(2));
    expect(warnings).toEqual([
      expect.stringMatching(/open\.jsonl\.gz:4 \(compressed byte \d+\): the gzip data ends early/),
    ]);
    await expect(readAll(file)).rejects.toThrow(
      /open\.jsonl\.gz:4 \(compressed byte \d+\): the gzip data ends early \(truncated\); the 3 lines before it are complete \(--allow-partial uses them\)/,
    );
    await writer.close();
  });

  it('after a crash at any byte returns every complete line and warns once about a torn line', async () => {
    const file = path.join(dir, 'full.jsonl.gz');
    const writer = await RecordingWriter.open(file, { header: header() });
    const tickers = series(6);
    const sizes: number[] = [];
    for (const t of tickers) {
      await writer.writeTickers([t]);
      sizes.push(readFileSync(file).length);
    }
    const whole = readFileSync(file); // the member is still open: as a crashed writer leaves it
    await writer.close();
    const torn = path.join(dir, 'torn.jsonl.gz');
    let tornLines = 0;
    for (let cut = sizes[0]!; cut <= whole.length; cut++) {
      writeFileSync(torn, whole.subarray(0, cut));
      const warnings: string[] = [];
      const back = await readAll(torn, { warn: (m) => warnings.push(m), allowPartial: true });
      const complete = sizes.filter((s) => s <= cut).length;
      expect(back.length === complete || back.length === complete + 1).toBe(true);
      expect(back).toEqual(tickers.slice(0, back.length));
      // The member is never finished, so every cut is a partial read, said once with where it breaks.
      expect(warnings).toEqual([
        expect.stringMatching(/torn\.jsonl\.gz:\d+ \(compressed byte \d+\): the gzip data ends early/),
      ]);
      if (cut < whole.length) tornLines++;
      await expect(readAll(torn)).rejects.toThrow(`torn.jsonl.gz:${back.length + 2} (compressed byte ${cut})`);
    }
    expect(tornLines).toBeGreaterThan(0);
  });

  it('skips a torn last line with one warning naming file and line', async () => {
    const file = path.join(dir, 'tail.jsonl.gz');
    const lines = series(2).map((t) => JSON.stringify(t));
    writeFileSync(file, gzipSync(`${lines[0]}\n${lines[1]!.slice(0, 40)}`));
    const warnings: string[] = [];
    expect(await readAll(file, { warn: (m) => warnings.push(m), allowPartial: true })).toEqual(series(1));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(`${file}:2: a torn last line (40 characters, no newline): used the 1 complete lines`);
    await expect(readAll(file)).rejects.toThrow(`${file}:2: a torn last line (40 characters, no newline); the 1 lines`);
  });

  it('repairs a torn file before appending, so the appended member stays readable', async () => {
    const file = path.join(dir, 'crash.jsonl.gz');
    const writer = await RecordingWriter.open(file, { header: header() });
    const tickers = series(4);
    await writer.writeTickers(tickers.slice(0, 2));
    const crashed = readFileSync(file);
    await writer.close();
    writeFileSync(file, crashed.subarray(0, crashed.length - 3)); // torn inside the second line's flush
    const warnings: string[] = [];
    const reopened = await RecordingWriter.open(file, { header: header(), warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([expect.stringContaining('repaired a torn recording')]);
    const kept = reopened.lastLine === JSON.stringify(tickers[1]) ? 2 : 1;
    await reopened.writeTickers(tickers.slice(2));
    await reopened.close();
    const read: string[] = [];
    expect(await readAll(file, { warn: (m) => read.push(m) })).toEqual([
      ...tickers.slice(0, kept),
      ...tickers.slice(2),
    ]);
    expect(read).toEqual([]);
  });

  it('fails on a malformed line before the end, naming the file and the line', async () => {
    const file = path.join(dir, 'bad.jsonl.gz');
    const good = series(3).map((t) => JSON.stringify(t));
    writeFileSync(file, gzipSync([JSON.stringify(header()), good[0], '{"s":"BTCUSDT",', good[2], ''].join('\n')));
    const err = await readAll(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RecordingError);
    expect((err as RecordingError).message).toContain(`${file}:3: malformed JSON`);
  });

  it('fails on a line without the ticker keys the bot relies on, naming file, line and key', async () => {
    const file = path.join(dir, 'bad.jsonl.gz');
    writeFileSync(file, gzipSync('{"s":"X","p":1,"t":1}\n{"s":"X","p":1,"t":"soon"}\n{"s":"X","p":1,"t":3}\n'));
    await expect(readAll(file)).rejects.toThrow(new RegExp(`${file}:2: not a ticker entry at t`));
  });

  it('refuses a header from a newer format version', async () => {
    const file = path.join(dir, 'new.jsonl.gz');
    writeFileSync(file, gzipSync(`${JSON.stringify({ ...header(), version: 99 })}\n`));
    await expect(readAll(file)).rejects.toThrow(/:1: recording format version 99 is newer/);
  });

  it('reads a symbol across day files and imports in time order, within [from, to)', async () => {
    const day = 86_400_000;
    const d0 = Date.UTC(2024, 0, 1);
    await write(path.join(dir, 'BTCUSDT', '2024-01-02.jsonl.gz'), series(3, d0 + day));
    await write(path.join(dir, 'BTCUSDT', '2024-01-01.jsonl.gz'), series(3, d0));
    await write(path.join(dir, 'BTCUSDT-2023-12-31.jsonl.gz'), series(2, d0 - 2000)); // overlaps the next file
    await write(
      path.join(dir, 'ETHUSDT-2024-01-01.jsonl.gz'),
      series(2, d0).map((t) => ({ ...t, s: 'ETHUSDT' })),
    );
    expect((await listRecordingFiles(dir, 'BTCUSDT')).map((f) => path.relative(dir, f))).toEqual([
      'BTCUSDT-2023-12-31.jsonl.gz',
      path.join('BTCUSDT', '2024-01-01.jsonl.gz'),
      path.join('BTCUSDT', '2024-01-02.jsonl.gz'),
    ]);
    const times = async (options = {}) => {
      const out: number[] = [];
      for await (const batch of readSymbolRecordings(dir, 'BTCUSDT', { warn: () => undefined, ...options })) {
        out.push(...batch.map((t) => t.t - d0));
      }
      return out;
    };
    expect(await times()).toEqual([-2000, -1000, 0, 1000, 2000, day, day + 1000, day + 2000]);
    expect(await times({ from: d0 + 1000, to: d0 + day + 1000 })).toEqual([1000, 2000, day]);
    expect(await times({ from: d0 + day })).toEqual([day, day + 1000, day + 2000]);
  });

  it('skips tickers of overlapping files that are not later than the one before, with one warning per file', async () => {
    const a = path.join(dir, 'a', 'X-1.jsonl.gz');
    const b = path.join(dir, 'b', 'X-2.jsonl.gz');
    await mkdir(path.dirname(a), { recursive: true });
    await write(a, series(3, 1000));
    await write(b, series(3, 2000)); // 2000 and 3000 repeat a's last two
    const warnings: string[] = [];
    const out: number[] = [];
    for await (const batch of readRecordings([b, a], { warn: (m) => warnings.push(m) }))
      out.push(...batch.map((t) => t.t));
    expect(out).toEqual([1000, 2000, 3000, 4000]);
    expect(warnings).toEqual([`${b}: skipped 2 tickers not later than the ticker before them`]);
  });
});
