/**
 * Recordings parsed once into columns (typed arrays on SharedArrayBuffers), so a replay reads numbers by
 * index instead of walking objects, and a sweep hands the same memory to every worker thread without
 * parsing or copying again. Only the keys the WireTicker type names are kept (s, p, t, h, l, vb, vq and the
 * per-symbol b, q, bi, qi); the recording's other keys are filler (docs/recording-format.md) and are not replayed.
 */
import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import type { PairConfig } from '../ports/venue-records.js';
import { dayFileSpan, RECORDING_EXTENSION, RecordingError } from '../record/recording-format.js';
import type { RecordingHeader } from '../record/recording-format.js';
import { partial, type Warn } from '../record/recording-reader.js';
import { scanRecording } from '../record/recording-scanner.js';
import { RecordedPairs } from '../record/recorded-pairs.js';
import {
  COLUMN_CACHE_VERSION,
  type CachedColumns,
  openCached,
  pathHint,
  writeCached,
  writePathHint,
} from './column-cache.js';
import {
  COLUMN_GROUPS,
  columnIn,
  encode,
  FLOAT_KEYS,
  type FloatKey,
  MISSING,
  type NumberColumn,
  setValue,
  type Units,
  unitsOf,
  valueAt,
  withValues,
} from './number-column.js';
import type { SymbolInfo, TickColumns } from './tick-columns.js';
import { candleRoles, CANDLE_DETECTOR_VERSION, keptRoles, type KnownRoles, slicedRoles } from './candle-ticks.js';

export interface RecordingFile {
  /** As given. */
  path: string;
  /** Base name without the recording extension. */
  name: string;
  size: number;
  sha256: string;
  /** The header's `source` (`candles`, `market-watch`); absent for a headerless file. */
  source?: string;
  /** Set when --allow-partial read this file only up to where it breaks. */
  partial?: { lines: number; byte: number; reason: string };
}

export interface TickData {
  files: RecordingFile[];
  /** The pair configuration each symbol's recordings carry (the first one read), in first-seen order. */
  pairs: PairConfig[];
  symbols: SymbolInfo[];
  length: number;
  columns: TickColumns;
  /** The candle roles of these columns, when the load knows them (the column cache's): candle-ticks.ts. */
  candleRoles?: KnownRoles;
}

/** The columns each through `f`, which gives back storage of the kind it is given (a view, a copy…). */
function eachColumn(
  c: TickColumns,
  f: <T extends Float64Array | Uint32Array | Uint16Array>(values: T) => T,
): TickColumns {
  const number = (column: NumberColumn) => withValues(column, f(column.values));
  return {
    sym: f(c.sym),
    time: number(c.time),
    price: number(c.price),
    high: number(c.high),
    low: number(c.low),
    vb: number(c.vb),
    vq: number(c.vq),
  };
}
/** The most a growable SharedArrayBuffer may hold here: 2^29 ticks a column. */
const MAX_BYTES = 2 ** 32;
const MAX_TICKS = MAX_BYTES / 8;

/** ES2024's growable SharedArrayBuffer (Node 20 has it; the project's TypeScript lib stops before ES2024). */
interface GrowableBuffer extends SharedArrayBuffer {
  grow(bytes: number): void;
}
const Growable = SharedArrayBuffer as unknown as new (
  bytes: number,
  options: { maxByteLength: number },
) => GrowableBuffer;

/** A group's units, and which of them its columns are in now (-1: wide). */
interface Group {
  keys: readonly FloatKey[];
  units: Units;
  unit: number;
}

/**
 * The columns as they are read, on growable SharedArrayBuffers: growing one keeps its memory in place (the
 * pages are reserved up front and used as they are touched), so the columns are never copied to grow nor to
 * share them, and a load never holds two copies of them. Each group of float columns starts narrow in its
 * most compact unit and moves to a finer one or to float64 when a value needs it, the values already read
 * converted in place.
 */
class ColumnBuilder implements TickColumns {
  length = 0;
  private capacity = 0;
  private readonly groups: Record<FloatKey, Group>;
  private readonly buffers: Record<FloatKey | 'sym', GrowableBuffer>;
  sym: Uint16Array = new Uint16Array(0);
  time: NumberColumn;
  price: NumberColumn;
  high: NumberColumn;
  low: NumberColumn;
  vb: NumberColumn;
  vq: NumberColumn;

  constructor() {
    const groups = {} as Record<FloatKey, Group>;
    for (const keys of COLUMN_GROUPS) {
      const group = { keys, units: unitsOf(keys[0] as FloatKey), unit: 0 };
      for (const key of keys) groups[key] = group;
    }
    this.groups = groups;
    this.buffers = { sym: new Growable(0, { maxByteLength: MAX_BYTES / 4 }) } as Record<
      FloatKey | 'sym',
      GrowableBuffer
    >;
    const empty = (key: FloatKey) => {
      // Room to go wide (float64) in place up to the most ticks a load holds: only the pages used are resident.
      this.buffers[key] = new Growable(0, { maxByteLength: MAX_BYTES });
      return columnIn(key, 0, new Uint32Array(0));
    };
    this.time = empty('time');
    this.price = empty('price');
    this.high = empty('high');
    this.low = empty('low');
    this.vb = empty('vb');
    this.vq = empty('vq');
  }

  /** Room for n more ticks. */
  reserve(n: number, file: string): void {
    const need = this.length + n;
    if (need <= this.capacity) return;
    if (need > MAX_TICKS)
      throw new RecordingError(`the recordings hold more than ${MAX_TICKS} ticks, more than one load can`, { file });
    this.capacity = Math.min(MAX_TICKS, Math.max(need, this.capacity * 2, 1 << 16));
    this.buffers.sym.grow(this.capacity * 2);
    this.sym = new Uint16Array(this.buffers.sym, 0, this.capacity);
    for (const key of FLOAT_KEYS) this.view(key);
  }

  /** The column `key` on its buffer, grown to the capacity in the group's width. */
  private view(key: FloatKey): void {
    const group = this.groups[key];
    const buffer = this.buffers[key];
    const wide = group.unit === -1;
    const bytes = this.capacity * (wide ? 8 : 4);
    if (buffer.byteLength < bytes) buffer.grow(bytes);
    const values = wide ? new Float64Array(buffer, 0, this.capacity) : new Uint32Array(buffer, 0, this.capacity);
    this[key] = columnIn(key, group.unit, values);
  }

  push(file: string, symbol: number, time: number, price: number, high: number, low: number, vb: number, vq: number) {
    if (this.length === this.capacity) this.reserve(1, file);
    const i = this.length++;
    this.sym[i] = symbol;
    if (!setValue(this.time, i, time)) this.refit('time', [time], i);
    if (!(setValue(this.price, i, price) && setValue(this.high, i, high) && setValue(this.low, i, low)))
      this.refit('price', [price, high, low], i);
    if (!setValue(this.vb, i, vb)) this.refit('vb', [vb], i);
    if (!setValue(this.vq, i, vq)) this.refit('vq', [vq], i);
  }

  /**
   * Moves `key`'s group to a unit that holds its values before tick i and `values` (one per column of the
   * group, in its order), then writes these at i: a finer unit (the values in place, multiplied) when there is
   * one, else float64 (the values in place, widened: the buffer grows, its pages stay where they are).
   */
  refit(key: FloatKey, values: readonly number[], i: number): void {
    const group = this.groups[key];
    const at = group.unit;
    const [mul, div] = group.units[at] as readonly [number, number];
    let max = 0;
    for (const k of group.keys) {
      const column = this[k].values;
      for (let j = 0; j < i; j++) {
        const n = column[j] as number;
        if (n !== MISSING && n > max) max = n;
      }
    }
    let to = -1;
    for (let u = at + 1; u < group.units.length && to === -1; u++) {
      const [mul2, div2] = group.units[u] as readonly [number, number];
      const factor = (mul / mul2) * (div2 / div);
      if (
        Number.isInteger(factor) &&
        max * factor < MISSING &&
        values.every((v) => encode(v, mul2, div2) !== undefined)
      )
        to = u;
    }
    for (const k of group.keys) {
      const old = this[k];
      if (to !== -1) {
        const [mul2, div2] = group.units[to] as readonly [number, number];
        const factor = (mul / mul2) * (div2 / div);
        const column = old.values;
        for (let j = 0; j < i; j++) if (column[j] !== MISSING) column[j] = (column[j] as number) * factor;
      } else {
        // In place, from the last value down: value j's 8 bytes cover the 4-byte values 2j and 2j + 1, which
        // are after it, so already moved (j = 0 is read before it is written).
        const buffer = this.buffers[k];
        buffer.grow(Math.max(buffer.byteLength, this.capacity * 8));
        const wide = new Float64Array(buffer, 0, this.capacity);
        for (let j = i - 1; j >= 0; j--) wide[j] = valueAt(old, j);
      }
    }
    group.unit = to;
    for (const k of group.keys) this.view(k);
    group.keys.forEach((k, n) => {
      if (!setValue(this[k], i, values[n] as number)) throw new Error(`tick-data: ${k} ${values[n]} does not fit`);
    });
  }

  /** The unit of each group, for the cache. */
  units(): Record<FloatKey, number> {
    return Object.fromEntries(FLOAT_KEYS.map((k) => [k, this.groups[k].unit])) as Record<FloatKey, number>;
  }

  /**
   * Makes room for `count` ticks from index `start` in the units `units` gives per group (the cache's), when
   * that is how the builder holds them; groups it holds otherwise are left out of the result (the caller puts
   * their values with put()).
   */
  adopt(units: Record<FloatKey, number>, start: number, count: number, file: string): Set<FloatKey> {
    this.reserve(start + count - this.length, file);
    const same = new Set<FloatKey>();
    for (const keys of COLUMN_GROUPS) {
      const group = this.groups[keys[0] as FloatKey];
      const unit = units[keys[0] as FloatKey];
      if (start === 0 && unit !== group.unit) {
        group.unit = unit;
        for (const k of keys) this.view(k);
      }
      if (unit === group.unit) for (const k of keys) same.add(k);
    }
    return same;
  }

  /** Puts a group's values at tick i (one per column of the group), refitting the group when they need it. */
  put(keys: readonly FloatKey[], values: readonly number[], i: number): void {
    if (!keys.every((k, n) => setValue(this[k], i, values[n] as number))) this.refit(keys[0] as FloatKey, values, i);
  }

  /** Views of ticks [from, to) (the memory itself, not a copy). */
  views(from: number, to: number): TickColumns {
    return eachColumn(this, (column) => column.subarray(from, to) as typeof column);
  }

  /** Keeps, of ticks [start, end), those at or after `from`, moved down to start (in order); the rest is dropped. */
  keep(start: number, end: number, from: number): void {
    let j = start;
    for (let i = start; i < end; i++) {
      if (!(valueAt(this.time, i) >= from)) continue;
      if (i !== j) {
        this.sym[j] = this.sym[i] as number;
        for (const key of FLOAT_KEYS) this[key].values[j] = this[key].values[i] as number;
      }
      j++;
    }
    this.length = j;
  }
}

async function fileInfo(file: string): Promise<{ info: RecordingFile; stats: Stats }> {
  let stats: Stats;
  try {
    stats = await stat(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new RecordingError(`expected a recording file, found none (${code})`, { file }, err);
  }
  const base = path.basename(file);
  const stem = base.endsWith(RECORDING_EXTENSION) ? base.slice(0, -RECORDING_EXTENSION.length) : base;
  // A recorder day file (SYMBOL/YYYY-MM-DD.jsonl.gz) is named by its folder too.
  const name = dayFileSpan(file) ? `${path.basename(path.dirname(path.resolve(file)))}-${stem}` : stem;
  return { info: { path: file, name, size: stats.size, sha256: '' }, stats };
}

/** The sha256 of a file's bytes, read through one buffer (a stream's chunk per read would be garbage to collect). */
export async function fileSha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
  return hash.digest('hex');
}

export interface LoadTicksOptions {
  /** Earliest tick time kept, epoch ms, inclusive. */
  from?: number;
  /** Tick time at which reading stops, epoch ms, exclusive. */
  to?: number;
  warn?: Warn;
  /** Read what is complete of truncated or corrupt files (each file says how much in `partial`). */
  allowPartial?: boolean;
  /**
   * The column cache's folder (column-cache.ts; columnCacheDir() gives the configured one): recordings found
   * there by sha256 are read from it, the others scanned and written to it. Undefined: no cache.
   */
  cacheDir?: string;
}

/** One file's part of a load, however it was read. */
interface FileRead {
  header: RecordingHeader | undefined;
  /** The candle roles of the file's ticks (all `count` of them), when known. */
  roles?: Uint8Array;
  pairs: { config: PairConfig; t: number; at: number }[];
  /** Ticks in the builder (from the file's start), and how many of them the reader would have read. */
  count: number;
  stop: number;
  broken?: { lines: number; byte: number | undefined; reason: string };
}

/**
 * Reads recordings into one time-ordered series. Several files (of one or several symbols) are merged by
 * time, ties in the order the files were given; a tick not later than the previous tick of its symbol in
 * another file (overlapping files) is dropped with one warning per file, as readRecordings does.
 */
export async function loadTicks(files: readonly string[], options: LoadTicksOptions = {}): Promise<TickData> {
  if (files.length === 0) throw new RecordingError('expected at least one recording', { file: '--data' });
  const found = await Promise.all(files.map(fileInfo));
  const infos = found.map((f) => f.info);
  const symbols: SymbolInfo[] = [];
  const index = new Map<string, number>();
  const symbolOf = (info: SymbolInfo): number => {
    let s = index.get(info.symbol);
    if (s === undefined) {
      s = symbols.length;
      index.set(info.symbol, s);
      symbols.push(info);
    }
    return s;
  };
  const builder = new ColumnBuilder();
  const fileStarts: number[] = [];
  // Each file's candle roles as kept; one unknown, and the load's are found again by each run.
  const fileRoles: (Uint8Array | undefined)[] = [];
  const warn = options.warn ?? ((m: string) => process.emitWarning(m, 'RecordingWarning'));
  const pairs = new RecordedPairs(warn, 'the backtest');
  const to = options.to ?? Infinity;
  const from = options.from ?? -Infinity;
  let cacheDir = options.cacheDir;
  for (const [k, file] of files.entries()) {
    const start = builder.length;
    fileStarts.push(start);
    const info = infos[k] as RecordingFile;
    const stats = (found[k] as { stats: Stats }).stats;
    // A file the cache has seen at this size and time (its hint) is hashed alone and its entry read. Another is
    // scanned, hashed in the same pass, and its columns written under that hash: its bytes stream through, where
    // keeping them to scan after a look-up held them (30 MB on a 1.2M-tick file) until the end of the run.
    let hinted: string | undefined;
    let cached: CachedColumns | undefined;
    if (cacheDir !== undefined) {
      hinted = await pathHint(cacheDir, file, stats);
      if (hinted !== undefined) {
        info.sha256 = await fileSha256(file);
        cached = await openCached(cacheDir, info.sha256);
      }
    }
    let read: FileRead;
    if (cached) {
      read = await fromCache(cached, builder, symbolOf, file, to);
      if (hinted !== info.sha256) await writePathHint(cacheDir as string, file, stats, info.sha256);
    } else {
      const local: SymbolInfo[] = [];
      const global: number[] = [];
      const scan = await scanRecording(
        file,
        {
          symbol: (t) => {
            const own = {
              symbol: t.s,
              b: t.b ?? undefined,
              q: t.q ?? undefined,
              bi: t.bi ?? undefined,
              qi: t.qi ?? undefined,
            };
            local.push(own);
            const s = symbolOf(own);
            global.push(s);
            return s;
          },
          push: (s, time, price, high, low, vb, vq) => builder.push(file, s, time, price, high, low, vb, vq),
        },
        {
          to: options.to,
          readAll: cacheDir !== undefined,
          sha256: info.sha256 === '' ? undefined : info.sha256,
        },
      );
      read = scan;
      if (info.sha256 === '') info.sha256 = scan.sha256 ?? (await fileSha256(file));
      if (cacheDir !== undefined && scan.complete) {
        const meta = {
          version: COLUMN_CACHE_VERSION,
          sha256: info.sha256,
          count: scan.count,
          symbols: local,
          units: builder.units(),
          detector: CANDLE_DETECTOR_VERSION,
        };
        // Found once, kept with the columns (zeros where the file holds no candles: no run looks there).
        read.roles =
          scan.header?.source === 'candles'
            ? candleRoles(builder, start, start + scan.count, symbols.length)
            : new Uint8Array(scan.count);
        try {
          // The same bytes under another name may have their entry already: it stays, and the next load reads it.
          const entry = hinted === undefined ? await openCached(cacheDir, info.sha256) : undefined;
          if (entry) await entry.close();
          else
            await writeCached(
              cacheDir,
              { ...meta, header: scan.header, pairs: scan.pairs },
              localColumns(builder.views(start, start + scan.count), global),
              read.roles,
            );
          await writePathHint(cacheDir, file, stats, info.sha256);
        } catch (err) {
          warn(`column cache: cannot write in ${cacheDir} (${(err as Error).message}); going on without it`);
          cacheDir = undefined;
        }
      }
    }
    if (read.header) {
      info.source = read.header.source;
      if (read.header.pair) pairs.seen(read.header.pair, file, undefined);
    }
    for (const p of read.pairs) if (p.at <= read.stop) pairs.seen(p.config, file, p.t);
    if (read.broken) {
      partial(file, { ...options, warn }, warn, read.broken);
      info.partial = { lines: read.broken.lines, byte: read.broken.byte ?? -1, reason: read.broken.reason };
    }
    fileRoles.push(
      read.roles && keptRoles(read.roles, builder, start, read.stop, from, symbols.length, k === files.length - 1),
    );
    if (from === -Infinity) builder.length = start + read.stop;
    else builder.keep(start, start + read.stop, from);
  }
  fileStarts.push(builder.length);
  const order = files.length > 1 ? mergeOrder(builder, fileStarts, files, symbols.length, options.warn) : undefined;
  const length = order ? order.length : builder.length;
  // Files in time order (one pair's day files: the usual folder) keep the columns as read, and ticks dropped as
  // overlapping are squeezed out in place; files whose ticks interleave are copied in merged order.
  const inPlace = order !== undefined && order.every((at, i) => i === 0 || at > (order[i - 1] as number));
  const pick = <T extends Float64Array | Uint32Array | Uint16Array>(column: T): T => {
    if (order && inPlace) for (let i = 0; i < length; i++) column[i] = column[order[i] as number] as number;
    if (!order || inPlace) return column.subarray(0, length) as T;
    const Ctor = column.constructor as { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number };
    const picked = new Ctor(new SharedArrayBuffer(Math.max(length, 1) * Ctor.BYTES_PER_ELEMENT)).subarray(
      0,
      length,
    ) as T;
    for (let i = 0; i < length; i++) picked[i] = column[order[i] as number] as number;
    return picked;
  };
  const columns = eachColumn(builder, pick);
  return { files: infos, pairs: [...pairs.bySymbol.values()], symbols, length, columns, candleRoles: known() };

  /**
   * The load's candle roles from its files', where each file's are known and its ticks follow the previous'. Only
   * when every file is candles: detection runs over the whole load, so a file of tickers after a candle file can
   * complete or end one of its candles (a ticker file's stored roles are zeros).
   */
  function known(): KnownRoles | undefined {
    if (
      order !== undefined ||
      infos.some((f) => f.source !== 'candles') ||
      fileRoles.some((r, k) => r?.length !== fileStarts[k + 1]! - fileStarts[k]!)
    )
      return undefined;
    if (fileRoles.length === 1) return { of: columns, roles: fileRoles[0]! };
    const roles = new Uint8Array(length);
    fileRoles.forEach((r, k) => roles.set(r!, fileStarts[k]));
    return { of: columns, roles };
  }
}

/**
 * A file's cached columns appended to the builder, its symbols mapped to the load's: read straight into the
 * builder's memory where it holds a group in the cache's unit, through a copy of that group where not.
 */
async function fromCache(
  cached: CachedColumns,
  builder: ColumnBuilder,
  symbolOf: (info: SymbolInfo) => number,
  file: string,
  to: number,
): Promise<FileRead> {
  const { meta } = cached;
  const start = builder.length;
  try {
    const same = builder.adopt(meta.units, start, meta.count, file);
    const views = builder.views(start, start + meta.count);
    const { own: read, roles } = await cached.read(views, same);
    for (const keys of COLUMN_GROUPS) {
      if (same.has(keys[0] as FloatKey)) continue;
      const columns = keys.map((k) => read[k]);
      for (let i = 0; i < meta.count; i++)
        builder.put(
          keys,
          columns.map((c) => valueAt(c, i)),
          start + i,
        );
    }
    const global = meta.symbols.map(symbolOf);
    if (global.some((g, l) => g !== l))
      for (let i = 0; i < meta.count; i++) views.sym[i] = global[views.sym[i] as number] as number;
    builder.length = start + meta.count;
    let stop = meta.count;
    if (to !== Infinity)
      for (let i = 0; i < meta.count; i++)
        if (valueAt(builder.time, start + i) >= to) {
          stop = i;
          break;
        }
    return { header: meta.header, pairs: meta.pairs, count: meta.count, stop, roles };
  } finally {
    await cached.close();
  }
}

/** The file's ticks with its own symbol numbering (the cache's), sharing the memory when that is the load's. */
function localColumns(columns: TickColumns, global: readonly number[]): TickColumns {
  if (global.every((g, l) => g === l)) return columns;
  const local = new Map(global.map((g, l) => [g, l]));
  return { ...columns, sym: columns.sym.map((g) => local.get(g) as number) };
}

/**
 * Indices of the kept ticks in merged time order (stable: file order breaks ties); undefined when that is the
 * order they were read in with none dropped (files in time order, not overlapping: nothing to sort nor copy).
 */
function mergeOrder(
  b: ColumnBuilder,
  starts: number[],
  files: readonly string[],
  symbols: number,
  warn?: Warn,
): Int32Array | undefined {
  const n = b.length;
  const time = (i: number) => valueAt(b.time, i);
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = time(i) >= time(i - 1);
  let all: Int32Array | undefined;
  if (!sorted) {
    all = new Int32Array(n);
    for (let i = 0; i < n; i++) all[i] = i;
    all.sort((x, y) => time(x) - time(y) || x - y);
  }
  // Per symbol: the time and file of its last kept tick.
  const lastTime = new Float64Array(symbols);
  const lastFile = new Int32Array(symbols).fill(-1);
  const dropped = new Array<number>(files.length).fill(0);
  let kept: Int32Array | undefined = all === undefined ? undefined : new Int32Array(n);
  let count = 0;
  let file = 0;
  for (let k = 0; k < n; k++) {
    const i = all === undefined ? k : (all[k] as number);
    if (all === undefined) while (i >= (starts[file + 1] as number)) file++;
    else file = fileOf(starts, i);
    const s = b.sym[i] as number;
    const t = time(i);
    if (lastFile[s] !== -1 && t <= (lastTime[s] as number) && lastFile[s] !== file) {
      dropped[file]!++;
      if (kept === undefined) {
        kept = new Int32Array(n);
        for (let j = 0; j < count; j++) kept[j] = j;
      }
      continue;
    }
    lastTime[s] = t;
    lastFile[s] = file;
    if (kept !== undefined) kept[count] = i;
    count++;
  }
  dropped.forEach((d, f) => {
    if (d > 0)
      (warn ?? ((m: string) => process.emitWarning(m, 'RecordingWarning')))(
        `${files[f]}: skipped ${d} tickers not later than the ticker before them in another file`,
      );
  });
  return kept?.subarray(0, count);
}

/** The file whose ticks hold index i (starts: each file's first index, then the total). */
function fileOf(starts: readonly number[], i: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((starts[mid] as number) <= i) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Lets go of the data's columns (it is left with no ticks, its files and symbols as they were), for a caller
 * done with them: their memory goes back once nothing else holds them, at V8's next full collection (a
 * SharedArrayBuffer's with it). Views would keep the buffers: the columns become new empty arrays.
 */
export function releaseColumns(data: TickData): void {
  data.length = 0;
  data.columns = eachColumn(data.columns, (column) => column.slice(0, 0) as typeof column);
}

/** The index of the first tick at or after `t` (data.length when there is none): a bisection of the times. */
export function firstTickAt(data: TickData, t: number): number {
  const time = data.columns.time;
  let lo = 0;
  let hi = data.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (valueAt(time, mid) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The ticks with from <= time < to, as views on the same (shared) columns: nothing is copied. */
export function sliceTicks(data: TickData, from: number, to: number): TickData {
  const a = firstTickAt(data, from);
  const b = Math.max(a, firstTickAt(data, to));
  const columns = eachColumn(data.columns, (column) => column.subarray(a, b) as typeof column);
  const roles = slicedRoles(data, a, b);
  return { ...data, length: b - a, columns, candleRoles: roles && { of: columns, roles } };
}
