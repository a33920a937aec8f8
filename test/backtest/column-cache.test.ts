import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CANDLE_DETECTOR_VERSION, candleRoles, candleTicks } from '../../src/backtest/candle-ticks.js';
import { cacheFile, type CachedMeta, columnCacheDir } from '../../src/backtest/column-cache.js';
import { columnIn, encode, valueAt } from '../../src/backtest/number-column.js';
import { columnArrays } from '../support/tick-columns.js';
import { loadTicks, sliceTicks, type TickData } from '../../src/backtest/tick-data.js';
import { bot, gridConfig, SAMPLE, sliceFlags } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const OTHER = 'data/samples/BTCUSDC-2023-03-01_21.jsonl.gz';
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** Every column's bytes, the symbols and the files' hashes: what a replay reads. */
function fingerprint(data: TickData) {
  const columns = columnArrays(data).map((c) => createHash('sha256').update(JSON.stringify(c)).digest('hex'));
  return { length: data.length, symbols: data.symbols, pairs: data.pairs, files: data.files, columns };
}

/** The byte offset of price[0] in a cache file (after the head, the meta and the time column). */
/** Writes `price` as the first tick's price in the cache file's bytes, in the unit the file holds prices in. */
function markFirstPrice(bytes: Buffer, price: number): void {
  const metaBytes = bytes.readUInt32LE(8);
  const meta = JSON.parse(bytes.subarray(16, 16 + metaBytes).toString('utf8')) as CachedMeta;
  // The time column comes first: 4 bytes a tick narrow, 8 wide.
  const at = 16 + ((metaBytes + 7) & ~7) + meta.count * (meta.units.time === -1 ? 8 : 4);
  const column = columnIn('price', meta.units.price, new Float64Array(1));
  if (!column.narrow) return void bytes.writeDoubleLE(price, at);
  const n = encode(price, column.mul, column.div);
  if (n === undefined) throw new Error(`${price} is not a whole number of the cached prices' unit`);
  bytes.writeUInt32LE(n, at);
}

/** The cache's entries (its `paths/` hints left out). */
const entries = (cache: string) =>
  readdirSync(cache)
    .filter((name) => name.endsWith('.cols'))
    .sort();

let dir: string;
beforeEach(() => {
  dir = tempDir('column-cache');
});
afterEach(() => vi.unstubAllEnvs());

describe('column cache', () => {
  it('writes the columns under the recording sha256 and reads them back, not the recording, the next time', async () => {
    const cache = join(dir, 'cache');
    const plain = await loadTicks([SAMPLE]);
    const first = await loadTicks([SAMPLE], { cacheDir: cache });
    const file = cacheFile(cache, sha256(SAMPLE));
    expect(existsSync(file)).toBe(true);
    expect(fingerprint(first)).toEqual(fingerprint(plain));
    expect(first.files[0]!.sha256).toBe(sha256(SAMPLE));
    const second = await loadTicks([SAMPLE], { cacheDir: cache });
    expect(fingerprint(second)).toEqual(fingerprint(plain));
    // A marker put into the cached price column comes back: the second load read the cache.
    const bytes = readFileSync(file);
    markFirstPrice(bytes, 12345.5);
    writeFileSync(file, bytes);
    const marked = await loadTicks([SAMPLE], { cacheDir: cache });
    expect(valueAt(marked.columns.price, 0)).toBe(12345.5);
    expect(valueAt(marked.columns.price, 1)).toBe(valueAt(plain.columns.price, 1));
  });

  it('reads a recording it has not seen once: hashed in the pass that scans it, not read again', async () => {
    const cache = join(dir, 'cache');
    // A named pipe gives its bytes once: a second read would wait for another writer, and the test time out.
    const pipe = join(dir, 'BTCUSDT-pipe.jsonl.gz');
    execFileSync('mkfifo', [pipe]);
    const writer = writeFile(pipe, readFileSync(SAMPLE));
    const data = await loadTicks([pipe], { cacheDir: cache });
    await writer;
    const plain = await loadTicks([SAMPLE]);
    expect(fingerprint(data).columns).toEqual(fingerprint(plain).columns);
    expect(data.files[0]!.sha256).toBe(sha256(SAMPLE));
    expect(entries(cache)).toEqual([`${sha256(SAMPLE)}.cols`]);
    // The same bytes under another name, new to the cache, are scanned as they stream (not kept to be looked up
    // first: that held them through the run), and the entry their hash finds is kept, not written again.
    const file = cacheFile(cache, sha256(SAMPLE));
    const bytes = readFileSync(file);
    markFirstPrice(bytes, 23456.5);
    writeFileSync(file, bytes);
    const copy = join(dir, 'BTCUSDT-copy.jsonl.gz');
    copyFileSync(SAMPLE, copy);
    const scanned = await loadTicks([copy], { cacheDir: cache });
    expect(valueAt(scanned.columns.price, 0)).toBe(valueAt(plain.columns.price, 0));
    expect(scanned.files[0]!.sha256).toBe(sha256(SAMPLE));
    expect(readFileSync(file).equals(bytes)).toBe(true);
    // Seen at its size and time (the hint written the first time), the file is hashed and its entry read.
    expect(valueAt((await loadTicks([copy], { cacheDir: cache })).columns.price, 0)).toBe(23456.5);
  });

  it('reads a windowed, multi-file load from the cache as from the recordings', async () => {
    const cache = join(dir, 'cache');
    const window = { from: Date.parse('2023-03-05T00:00:00Z'), to: Date.parse('2023-03-09T00:00:00Z') };
    const plain = await loadTicks([OTHER, SAMPLE], window);
    const cold = await loadTicks([OTHER, SAMPLE], { ...window, cacheDir: cache });
    // A --to load still caches the whole file.
    expect(entries(cache)).toEqual([`${sha256(OTHER)}.cols`, `${sha256(SAMPLE)}.cols`].sort());
    const warm = await loadTicks([OTHER, SAMPLE], { ...window, cacheDir: cache });
    expect(fingerprint(cold)).toEqual(fingerprint(plain));
    expect(fingerprint(warm)).toEqual(fingerprint(plain));
    // The other order numbers the symbols the other way round: the cached sym column is mapped.
    expect(fingerprint(await loadTicks([SAMPLE, OTHER], { cacheDir: cache }))).toEqual(
      fingerprint(await loadTicks([SAMPLE, OTHER])),
    );
  });

  it('keeps the candle roles with the columns: a warm load knows what detection finds on its ticks, or not at all', async () => {
    const cache = join(dir, 'cache');
    /** The load's known roles, checked against detection over exactly its ticks; undefined when not known. */
    const known = (data: TickData) => {
      const roles = data.candleRoles?.of === data.columns ? data.candleRoles.roles : undefined;
      if (roles !== undefined)
        expect(Buffer.from(roles)).toEqual(Buffer.from(candleRoles(data.columns, 0, data.length, data.symbols.length)));
      return roles;
    };
    const cold = await loadTicks([SAMPLE], { cacheDir: cache });
    const warm = await loadTicks([SAMPLE], { cacheDir: cache });
    expect(known(cold)?.filter((r) => r === 4).length).toBe(warm.length / 4);
    expect(known(warm)).toBeDefined();
    expect(known(await loadTicks([SAMPLE]))).toBeUndefined();
    // Cut at whole minutes (a candle's open) and inside candles (at its +20 s: between its extremes).
    const at = (iso: string) => Date.parse(iso);
    const minute = { from: at('2023-03-05T00:00:00Z'), to: at('2023-03-09T00:00:00Z') };
    expect(known(await loadTicks([SAMPLE], { ...minute, cacheDir: cache }))).toBeDefined();
    const inside = { from: at('2023-03-05T00:00:20Z'), to: at('2023-03-09T00:00:20Z') };
    expect(known(await loadTicks([SAMPLE], { ...inside, cacheDir: cache }))).toBeUndefined();
    const cutTo = await loadTicks([SAMPLE], { to: inside.to, cacheDir: cache });
    expect(known(cutTo)?.at(-1)).toBe(0);
    // A run's part of a load (sliceTicks: --from, a window) knows them as well, or does not.
    expect(known(sliceTicks(warm, minute.from, minute.to))).toBeDefined();
    expect(known(sliceTicks(warm, inside.from, minute.to))).toBeUndefined();
    expect(known(sliceTicks(warm, minute.from, inside.to))?.at(-1)).toBe(0);
    // A pair's recording in two files, cut at a whole minute or inside a candle: the second's detection follows
    // the first's.
    const lines = gunzipSync(readFileSync(SAMPLE)).toString('utf8').trimEnd().split('\n');
    const split = (name: string, cut: number) => {
      const files = [join(dir, `${name}-a.jsonl.gz`), join(dir, `${name}-b.jsonl.gz`)];
      writeFileSync(files[0]!, gzipSync(`${lines.slice(0, cut).join('\n')}\n`));
      writeFileSync(files[1]!, gzipSync(`${[lines[0], ...lines.slice(cut)].join('\n')}\n`));
      return files;
    };
    const whole = split('whole', 1 + 4 * 1440);
    expect(known(await loadTicks(whole, { cacheDir: cache }))).toBeDefined();
    expect(known(await loadTicks(whole, { cacheDir: cache }))).toBeDefined();
    const broken = split('broken', 1 + 4 * 1440 + 2);
    await loadTicks(broken, { cacheDir: cache });
    expect(known(await loadTicks(broken, { cacheDir: cache }))).toBeUndefined();
    // Interleaved pairs are merged by time: detection runs again.
    expect(known(await loadTicks([OTHER, SAMPLE], { cacheDir: cache }))).toBeUndefined();

    // What a warm load knows is the entry's: a role marked there comes back.
    const file = cacheFile(cache, sha256(SAMPLE));
    const bytes = readFileSync(file);
    expect(bytes.at(-1)).toBe(4);
    bytes[bytes.length - 1] = 0;
    writeFileSync(file, bytes);
    expect((await loadTicks([SAMPLE], { cacheDir: cache })).candleRoles?.roles.at(-1)).toBe(0);
    // Roles another detector found are never read: the entry is written anew by this one.
    const metaBytes = bytes.readUInt32LE(8);
    const meta = bytes.subarray(16, 16 + metaBytes).toString('utf8');
    expect(meta).toContain(`"detector":${CANDLE_DETECTOR_VERSION}`);
    bytes.write(meta.replace(`"detector":${CANDLE_DETECTOR_VERSION}`, `"detector":${CANDLE_DETECTOR_VERSION + 1}`), 16);
    writeFileSync(file, bytes);
    expect(known(await loadTicks([SAMPLE], { cacheDir: cache }))?.at(-1)).toBe(4);
    expect(readFileSync(file).toString('utf8', 16, 16 + metaBytes)).toContain(`"detector":${CANDLE_DETECTOR_VERSION}`);
    expect(readFileSync(file).at(-1)).toBe(4);
  });

  it('knows no candle roles of a load that is not all candles: a ticker file after candles is detected with them', async () => {
    // An hour of candles ending on a close, then four tickers polled 15 s apart on an exact clock (a recorder on
    // the replay clock): detection over the whole load takes them for a candle, as it did before the cache kept
    // roles (found by review of f29c92f: the cache's zeros for the ticker file made the runs differ).
    const cache = join(dir, 'cache');
    const lines = gunzipSync(readFileSync(SAMPLE)).toString('utf8').trimEnd().split('\n');
    const candles = join(dir, 'mixed-candles.jsonl.gz');
    writeFileSync(candles, gzipSync(`${lines.slice(0, 1 + 4 * 60).join('\n')}\n`));
    const last = JSON.parse(lines[4 * 60]!) as { t: number };
    const header = { format: 'spot-bot-recording', version: 1, symbol: 'BTCUSDT', source: 'market-watch' };
    const ticks = [100, 105, 95, 101].map((p, k) =>
      JSON.stringify({ ...last, p, h: 110, l: 90, t: last.t + 60_000 + 15_000 * k }),
    );
    const tickers = join(dir, 'mixed-tickers.jsonl.gz');
    writeFileSync(tickers, gzipSync(`${[JSON.stringify(header), ...ticks].join('\n')}\n`));
    const plain = await loadTicks([candles, tickers]);
    await loadTicks([candles, tickers], { cacheDir: cache });
    const warm = await loadTicks([candles, tickers], { cacheDir: cache });
    expect(warm.candleRoles).toBeUndefined();
    const found = (data: TickData) => candleTicks(data, 'nearer-first').candles;
    expect(found(plain)).toBe(61);
    expect(found(warm)).toBe(found(plain));
  });

  it('is keyed by content: a changed recording is read anew, never served from the old entry', async () => {
    const cache = join(dir, 'cache');
    const recording = join(dir, 'BTCUSDT-test.jsonl.gz');
    const lines = gunzipSync(readFileSync(SAMPLE)).toString('utf8').split('\n').slice(0, 2000);
    writeFileSync(recording, gzipSync(`${lines.join('\n')}\n`));
    const before = await loadTicks([recording], { cacheDir: cache });
    lines[1] = lines[1]!.replace(/"p":[0-9.]+/, '"p":1.25');
    writeFileSync(recording, gzipSync(`${lines.join('\n')}\n`));
    const after = await loadTicks([recording], { cacheDir: cache });
    expect(valueAt(after.columns.price, 0)).toBe(1.25);
    expect(valueAt(before.columns.price, 0)).not.toBe(1.25);
    expect(after.files[0]!.sha256).toBe(sha256(recording));
    expect(entries(cache)).toHaveLength(2);
  });

  it('ignores an entry cut short or left under a temporary name by a crash, and writes it anew', async () => {
    const cache = join(dir, 'cache');
    const plain = await loadTicks([SAMPLE]);
    await loadTicks([SAMPLE], { cacheDir: cache });
    const file = cacheFile(cache, sha256(SAMPLE));
    const size = statSync(file).size;
    truncateSync(file, Math.floor(size / 2));
    writeFileSync(`${file}.123-abc.tmp`, readFileSync(file));
    expect(fingerprint(await loadTicks([SAMPLE], { cacheDir: cache }))).toEqual(fingerprint(plain));
    expect(statSync(file).size).toBe(size);
    // A header that is not the cache's (another layout version, garbage) is treated the same way.
    writeFileSync(file, Buffer.alloc(size, 7));
    expect(fingerprint(await loadTicks([SAMPLE], { cacheDir: cache }))).toEqual(fingerprint(plain));
    expect(readFileSync(file).subarray(0, 6).toString()).toBe('SBCOLS');
  });

  it('goes on without it, with one warning, where the folder cannot be written', async () => {
    const blocked = join(dir, 'a-file');
    writeFileSync(blocked, '');
    const warnings: string[] = [];
    const data = await loadTicks([SAMPLE, OTHER], { cacheDir: join(blocked, 'cache'), warn: (m) => warnings.push(m) });
    expect(fingerprint(data)).toEqual(fingerprint(await loadTicks([SAMPLE, OTHER])));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^column cache: cannot write in .*a-file\/cache/);
  });

  it('bot backtest uses COLUMN_CACHE_DIR; --no-cache and COLUMN_CACHE_DIR=off leave it alone', async () => {
    expect(columnCacheDir({})).toBe('data/cache/columns');
    expect(columnCacheDir({ COLUMN_CACHE_DIR: 'off' })).toBeUndefined();
    const cache = join(dir, 'cache');
    const config = gridConfig(dir);
    vi.stubEnv('COLUMN_CACHE_DIR', cache);
    expect((await bot([...sliceFlags(config, join(dir, 'off'), ['--no-cache'])])).code).toBe(0);
    expect(existsSync(cache)).toBe(false);
    vi.stubEnv('COLUMN_CACHE_DIR', 'off');
    expect((await bot([...sliceFlags(config, join(dir, 'off2'))])).code).toBe(0);
    expect(existsSync(cache)).toBe(false);
    vi.stubEnv('COLUMN_CACHE_DIR', cache);
    expect((await bot([...sliceFlags(config, join(dir, 'cold'))])).code).toBe(0);
    expect(entries(cache)).toEqual([`${sha256(SAMPLE)}.cols`]);
    expect((await bot([...sliceFlags(config, join(dir, 'warm'))])).code).toBe(0);
    for (const name of ['summary.json', 'fills.csv', 'equity.csv'])
      expect(readFileSync(join(dir, 'warm', name), 'utf8')).toBe(readFileSync(join(dir, 'off', name), 'utf8'));
  });
});
