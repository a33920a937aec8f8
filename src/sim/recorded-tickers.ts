/**
 * Recordings of several symbols as one stream of tickers in time order, for the replay and lockstep feeds.
 * Files are grouped by symbol (their header's, else their first ticker's); each group is read in time order by
 * the recording reader (which orders day files and skips overlaps with a warning), and the groups are merged by
 * ticker time, ties going to the symbol first in alphabetical order, so a replay is deterministic.
 * A paper replay reads partial files (a day file the recorder is still writing ends inside its gzip member):
 * the complete lines are used and the rest is warned about.
 */
import { stat } from 'node:fs/promises';
import type { WireTicker } from '../wire/schemas.js';
import { RecordingError } from '../record/recording-format.js';
import { readRecording, readRecordingHeader, readRecordings, type Warn } from '../record/recording-reader.js';
import { type CandlePath, DEFAULT_CANDLE_PATH, walkCandles } from './candle-path.js';

/** Files by symbol, symbols in alphabetical order. */
export type SymbolFiles = ReadonlyMap<string, readonly string[]>;

const MERGED_BATCH = 1024;
const quiet: Warn = () => undefined;

async function symbolOf(file: string): Promise<string | undefined> {
  const header = await readRecordingHeader(file);
  if (header) return header.symbol;
  for await (const ticker of readRecording(file, { warn: quiet, allowPartial: true })) return ticker.s;
  return undefined;
}

/** Groups the files by the symbol they hold; a missing file is an error naming it, an empty one is skipped. */
export async function groupBySymbol(files: readonly string[], warn: Warn): Promise<SymbolFiles> {
  const groups = new Map<string, string[]>();
  for (const file of files) {
    const info = await stat(file).catch((err: NodeJS.ErrnoException) => {
      throw new RecordingError(`cannot read the recording (${err.code ?? err.message})`, { file }, err);
    });
    if (!info.isFile()) throw new RecordingError('not a file', { file });
    const symbol = await symbolOf(file);
    if (symbol === undefined) {
      warn(`${file}: no tickers in this recording; skipped`);
      continue;
    }
    groups.set(symbol, [...(groups.get(symbol) ?? []), file]);
  }
  return new Map([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const candleSymbolsOf = new WeakMap<SymbolFiles, Promise<Set<string>>>();

/** The symbols whose recordings were imported from candles (their header says so), read once per grouping. */
function candleSymbols(groups: SymbolFiles): Promise<Set<string>> {
  let found = candleSymbolsOf.get(groups);
  if (!found) {
    found = (async () => {
      const out = new Set<string>();
      for (const [symbol, files] of groups)
        if ((await readRecordingHeader(files[0] as string))?.source === 'candles') out.add(symbol);
      return out;
    })();
    candleSymbolsOf.set(groups, found);
  }
  return found;
}

interface Head {
  it: AsyncIterator<WireTicker[]>;
  batch: WireTicker[];
  i: number;
}

/**
 * Every ticker of every group, merged in time order, in batches; a group recorded from candles walks `path`
 * inside each candle (candle-path.ts).
 */
export async function* mergedTickers(
  groups: SymbolFiles,
  warn: Warn,
  path: CandlePath = DEFAULT_CANDLE_PATH,
): AsyncGenerator<WireTicker[]> {
  const candles = await candleSymbols(groups);
  const iterators: AsyncIterator<WireTicker[]>[] = [];
  for (const [symbol, files] of groups) {
    const read = readRecordings(files, { warn, allowPartial: true });
    iterators.push((candles.has(symbol) ? walkCandles(read, path) : read)[Symbol.asyncIterator]());
  }
  try {
    const heads: Head[] = [];
    for (const it of iterators) {
      const first = await it.next();
      if (!first.done) heads.push({ it, batch: first.value, i: 0 });
    }
    let out: WireTicker[] = [];
    while (heads.length > 0) {
      let k = 0;
      for (let j = 1; j < heads.length; j++)
        if (heads[j]!.batch[heads[j]!.i]!.t < heads[k]!.batch[heads[k]!.i]!.t) k = j;
      const head = heads[k]!;
      const ticker = head.batch[head.i++]!;
      // A batch ends between instants, never inside one (a candle's path runs at its close, at one instant).
      if (out.length >= MERGED_BATCH && ticker.t !== out[out.length - 1]!.t) {
        yield out;
        out = [];
      }
      out.push(ticker);
      if (head.i === head.batch.length) {
        const next = await head.it.next();
        if (next.done) heads.splice(k, 1);
        else {
          head.batch = next.value;
          head.i = 0;
        }
      }
    }
    if (out.length > 0) yield out;
  } finally {
    await Promise.all(iterators.map(async (it) => void (await it.return?.(undefined))));
  }
}

/** How many tickers the groups hold (a full read); stops early, returning undefined, once `cancelled()`. */
export async function countTickers(groups: SymbolFiles, cancelled: () => boolean): Promise<number | undefined> {
  let total = 0;
  for (const files of groups.values()) {
    for await (const batch of readRecordings(files, { warn: quiet, allowPartial: true })) {
      if (cancelled()) return undefined;
      total += batch.length;
    }
  }
  return total;
}

/** A pull cursor over the merged stream: `ready()` loads the next batch when needed, the rest is synchronous. */
export class TickerCursor {
  private readonly source: AsyncGenerator<WireTicker[]>;
  private batch: WireTicker[] = [];
  private i = 0;

  constructor(groups: SymbolFiles, warn: Warn, path: CandlePath = DEFAULT_CANDLE_PATH) {
    this.source = mergedTickers(groups, warn, path);
  }

  /** True when a ticker is waiting; false once the recordings are exhausted. */
  async ready(): Promise<boolean> {
    while (this.i >= this.batch.length) {
      const next = await this.source.next();
      if (next.done) return false;
      this.batch = next.value;
      this.i = 0;
    }
    return true;
  }

  /** The waiting ticker; only after ready() resolved true. */
  peek(): WireTicker {
    const ticker = this.batch[this.i];
    if (ticker === undefined) throw new Error('TickerCursor.peek before ready()');
    return ticker;
  }

  take(): WireTicker {
    const ticker = this.peek();
    this.i++;
    return ticker;
  }

  async close(): Promise<void> {
    await this.source.return(undefined);
  }
}
