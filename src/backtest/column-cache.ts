/**
 * The column cache: a recording's columns as the byte scanner built them, in a plain binary file named by the
 * recording's sha256, so that a later run (a sweep's worker, a queue's worker) reads them with one read per
 * column straight into shared memory instead of decompressing and scanning again.
 *
 * Layout (little-endian, as the typed arrays are on the machines this runs on):
 *   0  8 bytes  magic `SBCOLS\0\0`
 *   8  uint32   byte length M of the meta JSON
 *  12  uint32   layout version (COLUMN_CACHE_VERSION)
 *  16  M bytes  meta JSON (CachedMeta), padded with spaces to a multiple of 8
 *      then the columns of `count` ticks: time, price, high, low, vb, vq, each uint32 (whole units: the meta's
 *      `units`, tick-data.ts's groups) or float64 (wide), then sym (uint16), then the candle roles (uint8:
 *      candle-ticks.ts's candleRoles over the file's ticks, found by the meta's `detector` version)
 * A file is written under a temporary name and renamed into place, so a crash mid-write leaves no file under
 * the final name; a file whose magic, version, sha256, size or candle detector do not match is ignored and
 * written anew (a changed detector never reads roles another one found). The
 * name is the content's hash: a recording that changes gets another entry, never a stale one.
 *
 * Beside the entries, `paths/` holds a hint per recording file met (by its resolved path): the sha256 it had at
 * its size and modification time. The hint only says which way to read: a file with a current hint is
 * expected in the cache, so it is hashed on its own before its entry is read (as a warm load must); a file
 * without one is expected to be new, so it is read once, hashed as it is read, and those bytes are scanned on
 * a miss instead of reading the file twice. The entry found is always the one of the content's hash.
 */
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { endianness } from 'node:os';
import path from 'node:path';
import type { DirectVariable } from '../config/env.js';
import type { PairConfig } from '../ports/venue-records.js';
import type { RecordingHeader } from '../record/recording-format.js';
import { CANDLE_DETECTOR_VERSION } from './candle-ticks.js';
import { columnIn, FLOAT_KEYS, type FloatKey, type NumberColumn } from './number-column.js';
import type { SymbolInfo, TickColumns } from './tick-columns.js';

/** Where the cache lives unless COLUMN_CACHE_DIR says otherwise (relative to the working directory). */
export const DEFAULT_COLUMN_CACHE_DIR = 'data/cache/columns';
/** The variable that moves the cache; `off` turns it off (as `bot backtest --no-cache` does for one run). */
export const COLUMN_CACHE_ENV = 'COLUMN_CACHE_DIR';
export const COLUMN_CACHE_VARIABLE: DirectVariable = {
  name: COLUMN_CACHE_ENV,
  default: DEFAULT_COLUMN_CACHE_DIR,
  description:
    "backtests, sweeps and workers: where recordings' decoded columns are cached (a second run of the same data reads them instead of decompressing it); off turns the cache off",
};
/** Bumped whenever the layout or what the scanner puts in the columns changes: older files are ignored. */
export const COLUMN_CACHE_VERSION = 3;

const MAGIC = Buffer.from('SBCOLS\0\0', 'latin1');
const HEAD = 16;
/** Bytes per tick: the float columns' (4 narrow, 8 wide), the uint16 symbol's and the uint8 candle role's. */
const tickBytes = (units: Record<FloatKey, number>) => FLOAT_KEYS.reduce((n, k) => n + (units[k] === -1 ? 8 : 4), 3);

/** What the columns alone do not say: the file's symbols (sym is an index into them), header and pair lines. */
export interface CachedMeta {
  version: number;
  sha256: string;
  count: number;
  symbols: SymbolInfo[];
  /** Per float column, the unit of its group (tick-data.ts's COLUMN_GROUPS; -1: float64). */
  units: Record<FloatKey, number>;
  /** The CANDLE_DETECTOR_VERSION that found the candle roles. */
  detector: number;
  header?: RecordingHeader;
  /** Pair-configuration lines, each with the number of ticks before it. */
  pairs: { config: PairConfig; t: number; at: number }[];
}

/** The cache folder for this process: COLUMN_CACHE_DIR, the default, or undefined when turned off. */
export function columnCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[COLUMN_CACHE_ENV];
  if (value === 'off') return undefined;
  return value === undefined || value === '' ? DEFAULT_COLUMN_CACHE_DIR : value;
}

/** The cache file of a recording with this sha256. */
export function cacheFile(dir: string, sha256: string): string {
  return path.join(dir, `${sha256}.cols`);
}

const usable = endianness() === 'LE';
const pad8 = (n: number) => (n + 7) & ~7;
const bytesOf = (a: Float64Array | Uint32Array | Uint16Array | Uint8Array) =>
  new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** A cached file's meta, and a reader of its columns. */
export interface CachedColumns {
  meta: CachedMeta;
  /**
   * Reads the columns into views of exactly meta.count ticks: sym and the float columns `into` holds in the
   * cache's units (`same`) there; gives the others back in the cache's units, on memory of their own, with the
   * candle roles.
   */
  read(
    into: TickColumns,
    same: ReadonlySet<FloatKey>,
  ): Promise<{ own: Record<FloatKey, NumberColumn>; roles: Uint8Array }>;
  close(): Promise<void>;
}

/** The cache entry of sha256, or undefined when there is none (or it is not sound: it is then rewritten). */
export async function openCached(dir: string, sha256: string): Promise<CachedColumns | undefined> {
  if (!usable) return undefined;
  const handle = await open(cacheFile(dir, sha256), 'r').catch(() => undefined);
  if (!handle) return undefined;
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(HEAD);
    await handle.read(head, 0, HEAD, 0);
    if (!head.subarray(0, 8).equals(MAGIC) || head.readUInt32LE(12) !== COLUMN_CACHE_VERSION) {
      await handle.close();
      return undefined;
    }
    const metaBytes = head.readUInt32LE(8);
    const metaBuf = Buffer.alloc(metaBytes);
    await handle.read(metaBuf, 0, metaBytes, HEAD);
    const meta = JSON.parse(metaBuf.toString('utf8')) as CachedMeta;
    const start = HEAD + pad8(metaBytes);
    if (
      meta.version !== COLUMN_CACHE_VERSION ||
      meta.sha256 !== sha256 ||
      meta.detector !== CANDLE_DETECTOR_VERSION ||
      size !== start + meta.count * tickBytes(meta.units)
    ) {
      await handle.close();
      return undefined;
    }
    return {
      meta,
      read: async (into, same) => {
        let position = start;
        const own = {} as Record<FloatKey, NumberColumn>;
        const columns = FLOAT_KEYS.map((k) => {
          if (same.has(k)) return into[k].values;
          const unit = meta.units[k];
          own[k] = columnIn(k, unit, unit === -1 ? new Float64Array(meta.count) : new Uint32Array(meta.count));
          return own[k].values;
        });
        const roles = new Uint8Array(meta.count);
        for (const column of [...columns, into.sym, roles]) {
          const bytes = bytesOf(column);
          const { bytesRead } = await handle.read(bytes, 0, bytes.length, position);
          if (bytesRead !== bytes.length) throw new Error(`${cacheFile(dir, sha256)}: shorter than its meta says`);
          position += bytes.length;
        }
        return { own, roles };
      },
      close: () => handle.close(),
    };
  } catch {
    await handle.close();
    return undefined;
  }
}

/** The hint file of a recording (its resolved path hashed: any path, one flat folder). */
function hintFile(dir: string, file: string): string {
  return path.join(dir, 'paths', `${createHash('sha256').update(path.resolve(file)).digest('hex')}.json`);
}

interface PathHint {
  path: string;
  size: number;
  mtimeMs: number;
  sha256: string;
}

/** The sha256 the file had when last cached, if it still has that size and modification time. */
export async function pathHint(dir: string, file: string, stats: Stats): Promise<string | undefined> {
  try {
    const hint = JSON.parse(await readFile(hintFile(dir, file), 'utf8')) as Partial<PathHint>;
    const current = hint.path === path.resolve(file) && hint.size === stats.size && hint.mtimeMs === stats.mtimeMs;
    return current && typeof hint.sha256 === 'string' ? hint.sha256 : undefined;
  } catch {
    return undefined;
  }
}

/** Notes the file's sha256 at its size and modification time (temporary name, renamed; best effort). */
export async function writePathHint(dir: string, file: string, stats: Stats, sha256: string): Promise<void> {
  const final = hintFile(dir, file);
  const temp = `${final}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  const hint: PathHint = { path: path.resolve(file), size: stats.size, mtimeMs: stats.mtimeMs, sha256 };
  try {
    await mkdir(path.dirname(final), { recursive: true });
    await writeFile(temp, JSON.stringify(hint));
    await rename(temp, final);
  } catch {
    await rm(temp, { force: true });
  }
}

/**
 * Writes a recording's columns (views of exactly meta.count ticks) and their candle roles under a temporary name
 * and renames it into place. Rejects when the folder cannot be written (the caller goes on without the cache).
 */
export async function writeCached(
  dir: string,
  meta: CachedMeta,
  columns: TickColumns,
  roles: Uint8Array,
): Promise<void> {
  if (!usable) return;
  await mkdir(dir, { recursive: true });
  const final = cacheFile(dir, meta.sha256);
  const temp = `${final}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  const json = Buffer.from(JSON.stringify(meta), 'utf8');
  const head = Buffer.alloc(HEAD + pad8(json.length), 0x20);
  MAGIC.copy(head, 0);
  head.writeUInt32LE(json.length, 8);
  head.writeUInt32LE(COLUMN_CACHE_VERSION, 12);
  json.copy(head, HEAD);
  try {
    const handle = await open(temp, 'w');
    try {
      await handle.write(head);
      for (const column of [...FLOAT_KEYS.map((k) => columns[k].values), columns.sym, roles])
        await handle.write(bytesOf(column));
    } finally {
      await handle.close();
    }
    await rename(temp, final);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}
