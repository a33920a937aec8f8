/**
 * Recordings parsed once into columns (typed arrays on SharedArrayBuffers), so a replay reads numbers by
 * index instead of walking objects, and a sweep hands the same memory to every worker thread without
 * parsing or copying again. Only the keys the WireTicker type names are kept (s, p, t, h, l, vb, vq and the
 * per-symbol b, q, bi, qi); the recording's other keys are filler (docs/recording-format.md) and are not replayed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { WireTicker } from '../exchange/wire-schemas.js';
import type { PairConfig } from '../ports/venue-records.js';
import { dayFileSpan, RECORDING_EXTENSION, RecordingError } from '../record/recording-format.js';
import { type PartialRead, readRecordingBatches, type Warn } from '../record/recording-reader.js';

export interface SymbolInfo {
  symbol: string;
  b: string | undefined;
  q: string | undefined;
  bi: number | undefined;
  qi: number | undefined;
}

/** One column per ticker key; NaN where a ticker had no value. */
export interface TickColumns {
  sym: Uint16Array;
  time: Float64Array;
  price: Float64Array;
  high: Float64Array;
  low: Float64Array;
  vb: Float64Array;
  vq: Float64Array;
}

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
}

const FLOAT_COLUMNS = ['time', 'price', 'high', 'low', 'vb', 'vq'] as const;

/** Growable columns for the parse; copied once onto shared memory at the end. */
class ColumnBuilder {
  length = 0;
  sym = new Uint16Array(1 << 16);
  time = new Float64Array(1 << 16);
  price = new Float64Array(1 << 16);
  high = new Float64Array(1 << 16);
  low = new Float64Array(1 << 16);
  vb = new Float64Array(1 << 16);
  vq = new Float64Array(1 << 16);

  private grow(): void {
    const size = this.sym.length * 2;
    const sym = new Uint16Array(size);
    sym.set(this.sym);
    this.sym = sym;
    for (const key of FLOAT_COLUMNS) {
      const next = new Float64Array(size);
      next.set(this[key]);
      this[key] = next;
    }
  }

  push(symbol: number, t: WireTicker): void {
    if (this.length === this.sym.length) this.grow();
    const i = this.length++;
    this.sym[i] = symbol;
    this.time[i] = t.t;
    this.price[i] = Number(t.p);
    this.high[i] = t.h ?? NaN;
    this.low[i] = t.l ?? NaN;
    this.vb[i] = t.vb ?? NaN;
    this.vq[i] = t.vq ?? NaN;
  }
}

function sharedCopy<T extends Float64Array | Uint16Array>(source: T, length: number): T {
  const Ctor = source.constructor as { new (buffer: SharedArrayBuffer): T; BYTES_PER_ELEMENT: number };
  const target = new Ctor(new SharedArrayBuffer(Math.max(length, 1) * Ctor.BYTES_PER_ELEMENT));
  target.set(source.subarray(0, length));
  return target;
}

async function fileInfo(file: string): Promise<RecordingFile> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new RecordingError(`expected a recording file, found none (${code})`, { file }, err);
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const base = path.basename(file);
  const stem = base.endsWith(RECORDING_EXTENSION) ? base.slice(0, -RECORDING_EXTENSION.length) : base;
  // A recorder day file (SYMBOL/YYYY-MM-DD.jsonl.gz) is named by its folder too.
  const name = dayFileSpan(file) ? `${path.basename(path.dirname(path.resolve(file)))}-${stem}` : stem;
  return { path: file, name, size, sha256: hash.digest('hex') };
}

export interface LoadTicksOptions {
  /** Earliest tick time kept, epoch ms, inclusive. */
  from?: number;
  /** Tick time at which reading stops, epoch ms, exclusive. */
  to?: number;
  warn?: Warn;
  /** Read what is complete of truncated or corrupt files (each file says how much in `partial`). */
  allowPartial?: boolean;
}

/**
 * Reads recordings into one time-ordered series. Several files (of one or several symbols) are merged by
 * time, ties in the order the files were given; a tick not later than the previous tick of its symbol in
 * another file (overlapping files) is dropped with one warning per file, as readRecordings does.
 */
export async function loadTicks(files: readonly string[], options: LoadTicksOptions = {}): Promise<TickData> {
  if (files.length === 0) throw new RecordingError('expected at least one recording', { file: '--data' });
  const infos = await Promise.all(files.map(fileInfo));
  const symbols: SymbolInfo[] = [];
  const index = new Map<string, number>();
  const builder = new ColumnBuilder();
  const fileStarts: number[] = [];
  const pairs = new Map<string, PairConfig>();
  const warn = options.warn ?? ((m: string) => process.emitWarning(m, 'RecordingWarning'));
  const changed = new Set<string>();
  const pairSeen = (config: PairConfig, file: string, t: number | undefined) => {
    const first = pairs.get(config.symbol);
    if (!first) pairs.set(config.symbol, config);
    else if (!changed.has(config.symbol) && JSON.stringify(first) !== JSON.stringify(config)) {
      changed.add(config.symbol);
      const when = t === undefined ? 'in its header' : `at ${new Date(t).toISOString()}`;
      warn(`${file}: the pair configuration of ${config.symbol} changes ${when}; the backtest keeps the first one`);
    }
  };
  for (const [k, file] of files.entries()) {
    fileStarts.push(builder.length);
    const info = infos[k] as RecordingFile;
    const reading = {
      ...options,
      warn,
      onHeader: (h: { source: string; pair?: PairConfig }) => {
        info.source = h.source;
        if (h.pair) pairSeen(h.pair, file, undefined);
      },
      onPairConfig: (config: PairConfig, t: number) => pairSeen(config, file, t),
      onPartial: ({ lines, byte, reason }: PartialRead) => (info.partial = { lines, byte, reason }),
    };
    for await (const batch of readRecordingBatches(file, reading)) {
      for (let i = 0; i < batch.length; i++) {
        const t = batch[i] as WireTicker;
        let s = index.get(t.s);
        if (s === undefined) {
          s = symbols.length;
          index.set(t.s, s);
          symbols.push({
            symbol: t.s,
            b: t.b ?? undefined,
            q: t.q ?? undefined,
            bi: t.bi ?? undefined,
            qi: t.qi ?? undefined,
          });
        }
        builder.push(s, t);
      }
    }
  }
  fileStarts.push(builder.length);
  const order = files.length > 1 ? mergeOrder(builder, fileStarts, files, options.warn) : undefined;
  const length = order ? order.length : builder.length;
  const pick = <T extends Float64Array | Uint16Array>(column: T): T => {
    if (!order) return sharedCopy(column, length);
    const picked = new (column.constructor as new (n: number) => T)(length);
    for (let i = 0; i < length; i++) picked[i] = column[order[i] as number] as number;
    return sharedCopy(picked, length);
  };
  return {
    files: infos,
    pairs: [...pairs.values()],
    symbols,
    length,
    columns: {
      sym: pick(builder.sym),
      time: pick(builder.time),
      price: pick(builder.price),
      high: pick(builder.high),
      low: pick(builder.low),
      vb: pick(builder.vb),
      vq: pick(builder.vq),
    },
  };
}

/** Indices of the kept ticks in merged time order (stable: file order breaks ties). */
function mergeOrder(b: ColumnBuilder, starts: number[], files: readonly string[], warn?: Warn): Int32Array {
  const all = new Int32Array(b.length);
  for (let i = 0; i < all.length; i++) all[i] = i;
  all.sort((x, y) => (b.time[x] as number) - (b.time[y] as number) || x - y);
  const last = new Map<number, { t: number; file: number }>();
  const dropped = new Array<number>(files.length).fill(0);
  const kept: number[] = [];
  for (const i of all) {
    const s = b.sym[i] as number;
    const t = b.time[i] as number;
    const previous = last.get(s);
    const file = starts.findIndex((start, f) => i >= start && i < (starts[f + 1] as number));
    if (previous !== undefined && t <= previous.t && previous.file !== file) {
      dropped[file]!++;
      continue;
    }
    last.set(s, { t, file });
    kept.push(i);
  }
  dropped.forEach((n, f) => {
    if (n > 0)
      (warn ?? ((m: string) => process.emitWarning(m, 'RecordingWarning')))(
        `${files[f]}: skipped ${n} tickers not later than the ticker before them in another file`,
      );
  });
  return Int32Array.from(kept);
}

/** The ticks with from <= time < to, as views on the same (shared) columns: nothing is copied. */
export function sliceTicks(data: TickData, from: number, to: number): TickData {
  const time = data.columns.time;
  const first = (t: number) => {
    let lo = 0;
    let hi = data.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((time[mid] as number) < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const a = first(from);
  const b = Math.max(a, first(to));
  const c = data.columns;
  return {
    ...data,
    length: b - a,
    columns: {
      sym: c.sym.subarray(a, b),
      time: c.time.subarray(a, b),
      price: c.price.subarray(a, b),
      high: c.high.subarray(a, b),
      low: c.low.subarray(a, b),
      vb: c.vb.subarray(a, b),
      vq: c.vq.subarray(a, b),
    },
  };
}
