/**
 * Streaming reader of recordings. A recording that ends early (a torn gzip member, a torn last line: the
 * writer crashed mid-write, or the file is still being written) or is corrupt is an error naming the file and
 * the compressed byte offset or the line where it breaks, unless the caller allows a partial read: then
 * everything complete is returned, one warning says what was left out, and onPartial says how much was used.
 */
import { createReadStream } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { PairConfigSchema, TickerSchema, type WireTicker } from '../wire/schemas.js';
import type { PairConfig } from '../ports/venue-records.js';
import {
  PAIR_CONFIG_KEY,
  RECORDING_EXTENSION,
  RECORDING_FORMAT,
  RECORDING_VERSION,
  RecordingError,
  RecordingHeaderSchema,
  dayFileSpan,
  type RecordingHeader,
} from './recording-format.js';

export type Warn = (message: string) => void;

/** Where a partially read file stops: the last complete line used, and the compressed byte where it breaks. */
export interface PartialRead {
  file: string;
  /** Lines read and used (1-based number of the last complete line). */
  lines: number;
  /** Compressed byte offset at which the data breaks (the file's size for a truncation). */
  byte: number;
  /** What is wrong: truncated gzip data, corrupt gzip data, or a torn last line. */
  reason: string;
}

export interface ReadOptions {
  /** Receives the warnings (a partial read, out-of-order tickers skipped). Default: process.emitWarning. */
  warn?: Warn;
  /** Earliest ticker time returned, epoch ms, inclusive. */
  from?: number;
  /** WireTicker time at which reading stops, epoch ms, exclusive. Files are in time order, so the rest is not read. */
  to?: number;
  /** Receives the file's header line, when it has one. */
  onHeader?: (header: RecordingHeader) => void;
  /** Receives each pair-configuration line (the configuration from time t on). */
  onPairConfig?: (config: PairConfig, t: number) => void;
  /** Use what is complete of a truncated or corrupt file instead of failing (`--allow-partial`). */
  allowPartial?: boolean;
  /** Told where a file stopped when allowPartial let a partial read through. */
  onPartial?: (partial: PartialRead) => void;
  /** Sees every compressed chunk of the file as it is read (a progress line counts the bytes). */
  onCompressed?: (chunk: Buffer) => void;
}

export const defaultWarn: Warn = (message) => process.emitWarning(message, 'RecordingWarning');

export interface LineBatch {
  lines: string[];
  /** Line number (1-based) of lines[0]. */
  firstLine: number;
  /** Set on the last batch when the data ends without a newline: the torn (or unterminated) last line. */
  tail?: string;
  /** Set on the last batch when the gzip data breaks off (truncated or corrupt) at this compressed byte. */
  broken?: { byte: number; reason: string };
}

/** Where gzip data breaks off: the compressed byte, and why. */
export interface GzipBreak {
  byte: number;
  reason: string;
}

/**
 * The decompressed bytes of a file, chunk by chunk; `onCompressed` sees every compressed chunk as it is read
 * (to hash the file in the same pass). Gzip data that ends inside a member or is corrupt ends the chunks with a
 * GzipBreak; with `strict` it throws instead. The file is read 64 KB at a time: a chunk is decompressed and gone
 * before V8's next young collection, where 1 MB ones lived long enough to be moved to the old generation, and
 * each move brought on a full collection (21 of them in a 1.2M-tick scan, against 3).
 */
export async function* gunzipChunks(
  file: string,
  strict = false,
  onCompressed?: (chunk: Buffer) => void,
): AsyncGenerator<Buffer | GzipBreak> {
  const source = createReadStream(file, { highWaterMark: 1 << 16 });
  const gunzip = createGunzip({ chunkSize: 1 << 17 });
  source.on('error', (err) => gunzip.destroy(err));
  if (onCompressed) source.on('data', (chunk) => onCompressed(chunk as Buffer));
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
  } catch (err) {
    if (strict) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' || e.code === 'EACCES' || e.code === 'EISDIR')
      throw new RecordingError(`cannot read the recording (${e.code})`, { file }, err);
    const truncated = e.code === 'Z_BUF_ERROR';
    yield {
      byte: gunzip.bytesWritten,
      reason: truncated ? 'the gzip data ends early (truncated)' : `corrupt gzip data (${e.message})`,
    };
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

/**
 * Decompressed lines of a file, a batch per decompressed chunk (not a promise per line). Gzip data that ends
 * inside a member or is corrupt ends the batches with one marked `broken` (the writer uses it to decide
 * whether a file needs repair, the readers to fail or read partially); with `strict` it throws instead.
 */
export async function* readLineBatches(
  file: string,
  strict = false,
  onCompressed?: (chunk: Buffer) => void,
): AsyncGenerator<LineBatch> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let lineNo = 0;
  let broken: LineBatch['broken'];
  for await (const chunk of gunzipChunks(file, strict, onCompressed)) {
    if (!Buffer.isBuffer(chunk)) {
      broken = chunk;
      break;
    }
    const text = rest + decoder.write(chunk);
    const lines: string[] = [];
    const firstLine = lineNo + 1;
    let start = 0;
    let nl = text.indexOf('\n', start);
    while (nl !== -1) {
      lines.push(text.slice(start, nl));
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    lineNo += lines.length;
    rest = start === 0 ? text : text.slice(start);
    if (lines.length > 0) yield { lines, firstLine };
  }
  rest += decoder.end();
  if (rest.length > 0 || broken) yield { lines: [], firstLine: lineNo + 1, tail: rest || undefined, broken };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The bot relies on s, p and t: checked with plain typeofs, zod only for the rare entry that fails them. */
function toTicker(value: unknown, file: string, line: number): WireTicker {
  if (isObject(value) && typeof value.s === 'string' && typeof value.p === 'number' && Number.isInteger(value.t)) {
    return value as WireTicker;
  }
  const parsed = TickerSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw new RecordingError(`not a ticker entry${where}: ${issue?.message ?? 'invalid'}`, { file, line });
}

function toHeader(value: Record<string, unknown>, file: string): RecordingHeader {
  const parsed = RecordingHeaderSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new RecordingError(`bad header at ${issue?.path.join('.') ?? '?'}: ${issue?.message ?? 'invalid'}`, {
      file,
      line: 1,
    });
  }
  if (parsed.data.version > RECORDING_VERSION) {
    throw new RecordingError(
      `recording format version ${parsed.data.version} is newer than this reader (${RECORDING_VERSION})`,
      { file, line: 1 },
    );
  }
  return parsed.data;
}

/** A pair-configuration line's configuration, or undefined when the line is a ticker. */
function toPairConfig(value: Record<string, unknown>, file: string, line: number): PairConfig | undefined {
  if (!(PAIR_CONFIG_KEY in value)) return undefined;
  const parsed = PairConfigSchema.safeParse(value[PAIR_CONFIG_KEY]);
  if (!parsed.success || typeof value.t !== 'number') {
    const issue = parsed.success ? undefined : parsed.error.issues[0];
    const where = issue ? `${PAIR_CONFIG_KEY}.${issue.path.join('.')}: ${issue.message}` : 't: expected a number';
    throw new RecordingError(`bad pair configuration line at ${where}`, { file, line });
  }
  return parsed.data;
}

/** What one line of a recording holds. */
export type RecordingEntry =
  | { kind: 'header'; header: RecordingHeader }
  | { kind: 'pair'; config: PairConfig; t: number }
  | { kind: 'ticker'; ticker: WireTicker };

/** One non-blank line read as the readers read it: a header only on line 1; errors name the file and line. */
export function lineEntry(line: string, file: string, lineNo: number): RecordingEntry {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    throw new RecordingError(`malformed JSON line: ${(err as Error).message}`, { file, line: lineNo }, err);
  }
  if (lineNo === 1 && isObject(value) && value.format === RECORDING_FORMAT)
    return { kind: 'header', header: toHeader(value, file) };
  const config = isObject(value) ? toPairConfig(value, file, lineNo) : undefined;
  if (config) return { kind: 'pair', config, t: (value as { t: number }).t };
  return { kind: 'ticker', ticker: toTicker(value, file, lineNo) };
}

/** The last line of a file that lost its newline: a ticker when it still parses, undefined when it is torn. */
export function tailTicker(tail: string, file: string, lineNo: number): WireTicker | undefined {
  let value: unknown;
  try {
    value = JSON.parse(tail);
  } catch {
    return undefined;
  }
  return toTicker(value, file, lineNo);
}

/** The break a torn tail is reported as. */
export function tornTail(tail: string, linesBefore: number): { lines: number; byte: undefined; reason: string } {
  return { lines: linesBefore, byte: undefined, reason: `a torn last line (${tail.length} characters, no newline)` };
}

/**
 * The tickers of one file in batches (one per decompressed chunk): the fast path for replays. A header line is
 * passed to onHeader, a pair-configuration line to onPairConfig, blank lines are skipped. A file that breaks
 * off (truncated or corrupt gzip, a torn last line) is an error naming where, unless options.allowPartial.
 */
export async function* readRecordingBatches(file: string, options: ReadOptions = {}): AsyncGenerator<WireTicker[]> {
  const warn = options.warn ?? defaultWarn;
  const from = options.from ?? -Infinity;
  const to = options.to ?? Infinity;
  for await (const batch of readLineBatches(file, false, options.onCompressed)) {
    const tickers: WireTicker[] = [];
    let lineNo = batch.firstLine;
    for (const line of batch.lines) {
      if (line.length > 0) {
        const entry = lineEntry(line, file, lineNo);
        if (entry.kind === 'header') options.onHeader?.(entry.header);
        else if (entry.kind === 'pair') options.onPairConfig?.(entry.config, entry.t);
        else {
          const ticker = entry.ticker;
          if (ticker.t >= to) {
            if (tickers.length > 0) yield tickers;
            return;
          }
          if (ticker.t >= from) tickers.push(ticker);
        }
      }
      lineNo++;
    }
    if (batch.tail !== undefined && !batch.broken) {
      // The writer ends every line with a newline, so a missing one means a crash mid-write; a tail that still
      // parses is a complete entry that only lost its newline.
      const ticker = tailTicker(batch.tail, file, batch.firstLine);
      if (ticker === undefined) partial(file, options, warn, tornTail(batch.tail, batch.firstLine - 1));
      else if (ticker.t >= from && ticker.t < to) tickers.push(ticker);
    }
    if (batch.broken)
      partial(file, options, warn, {
        lines: batch.firstLine - 1,
        byte: batch.broken.byte,
        reason: batch.broken.reason,
      });
    if (tickers.length > 0) yield tickers;
  }
}

/** A file that breaks off: an error, or with allowPartial one warning and onPartial. */
export function partial(
  file: string,
  options: ReadOptions,
  warn: Warn,
  at: { lines: number; byte: number | undefined; reason: string },
): void {
  const where = { file, line: at.lines + 1, ...(at.byte === undefined ? {} : { byte: at.byte }) };
  if (!options.allowPartial)
    throw new RecordingError(
      `${at.reason}; the ${at.lines} lines before it are complete (--allow-partial uses them)`,
      where,
    );
  warn(`${new RecordingError(at.reason, where).message}: used the ${at.lines} complete lines before it`);
  options.onPartial?.({ file, lines: at.lines, byte: at.byte ?? -1, reason: at.reason });
}

/** The tickers of one file, one at a time. */
export async function* readRecording(file: string, options: ReadOptions = {}): AsyncGenerator<WireTicker> {
  for await (const batch of readRecordingBatches(file, options)) yield* batch;
}

/** A file's header, or undefined when its first line is a ticker (or it is empty). Reads only the first chunk. */
export async function readRecordingHeader(file: string): Promise<RecordingHeader | undefined> {
  for await (const batch of readLineBatches(file)) {
    const first = batch.lines[0] ?? batch.tail;
    if (first === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(first);
    } catch (err) {
      throw new RecordingError(`malformed JSON line: ${(err as Error).message}`, { file, line: 1 }, err);
    }
    return isObject(value) && value.format === RECORDING_FORMAT ? toHeader(value, file) : undefined;
  }
  return undefined;
}

/**
 * The recordings of one symbol under dir, in both layouts: the recorder's `SYMBOL/YYYY-MM-DD.jsonl.gz` and the
 * importer's `SYMBOL-*.jsonl.gz`. Sorted by name; readSymbolRecordings orders them by time.
 */
export async function listRecordingFiles(dir: string, symbol: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await entriesOf(dir)) {
    if (entry.file && entry.name.startsWith(`${symbol}-`) && entry.name.endsWith(RECORDING_EXTENSION)) {
      files.push(path.join(dir, entry.name));
    } else if (entry.dir && entry.name === symbol) {
      files.push(...(await recordingsIn(path.join(dir, symbol))));
    }
  }
  return files.sort();
}

/**
 * The symbols `--data` entries hold recordings of: a folder's in both layouts (`SYMBOL-*.jsonl.gz`,
 * `SYMBOL/*.jsonl.gz`), a file's by its header (or its name). What a pair list may choose from in a backtest.
 */
export async function recordedSymbols(entries: readonly string[]): Promise<string[]> {
  const out = new Set<string>();
  const named = (name: string) => /^([A-Z0-9]{2,20})-/.exec(name)?.[1];
  for (const entry of entries) {
    const isDir = await stat(entry).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      const symbol = (await readRecordingHeader(entry).catch(() => undefined))?.symbol ?? named(path.basename(entry));
      if (symbol !== undefined) out.add(symbol);
      continue;
    }
    for (const e of await entriesOf(entry)) {
      const symbol = e.file && e.name.endsWith(RECORDING_EXTENSION) ? named(e.name) : undefined;
      if (symbol !== undefined) out.add(symbol);
      else if (e.dir && /^[A-Z0-9]{2,20}$/.test(e.name) && (await recordingsIn(path.join(entry, e.name))).length > 0)
        out.add(e.name);
    }
  }
  return [...out].sort();
}

/** A folder's entries, symbolic links followed (a link to a folder or a file counts as one). */
async function entriesOf(dir: string): Promise<{ name: string; file: boolean; dir: boolean }[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((err: NodeJS.ErrnoException) => {
    throw new RecordingError(`cannot list recordings: ${err.code ?? err.message}`, { file: dir }, err);
  });
  return Promise.all(
    entries.map(async (e) => {
      if (!e.isSymbolicLink()) return { name: e.name, file: e.isFile(), dir: e.isDirectory() };
      const target = await stat(path.join(dir, e.name)).catch(() => undefined); // a dangling link: neither
      return { name: e.name, file: target?.isFile() ?? false, dir: target?.isDirectory() ?? false };
    }),
  );
}

/** The recording files directly in a folder, sorted. */
async function recordingsIn(dir: string): Promise<string[]> {
  return (await entriesOf(dir))
    .filter((e) => e.file && e.name.endsWith(RECORDING_EXTENSION))
    .map((e) => path.join(dir, e.name))
    .sort();
}

/**
 * `--data` entries as recording files. A file stays as given; a folder gives the recordings of `symbols` in it
 * (listRecordingFiles' layouts), or, when the folder is named after one of the symbols, the recordings
 * directly in it (a symbol's folder of day files). Recorder day files wholly outside [from, to) are left out
 * unopened; a file reached twice is read once. Throws naming the folder when it yields nothing.
 */
export async function recordingFiles(
  entries: readonly string[],
  symbols: readonly string[],
  window: { from?: number; to?: number } = {},
): Promise<string[]> {
  const from = window.from ?? -Infinity;
  const to = window.to ?? Infinity;
  /** By resolved path: a file reached twice is read once, under the name it was first reached by. */
  const out = new Map<string, string>();
  const add = (file: string) => {
    const key = path.resolve(file);
    if (!out.has(key)) out.set(key, file);
  };
  for (const entry of entries) {
    const isDir = await stat(entry).then(
      (s) => s.isDirectory(),
      () => false, // a missing file is reported by whoever opens it, with the file named
    );
    if (!isDir) {
      add(entry);
      continue;
    }
    const found: string[] = [];
    for (const symbol of symbols) found.push(...(await listRecordingFiles(entry, symbol)));
    if (found.length === 0 && symbols.includes(path.basename(path.resolve(entry))))
      found.push(...(await recordingsIn(entry)));
    if (found.length === 0)
      throw new RecordingError(`no recordings of ${symbols.join(', ')} in this folder (*${RECORDING_EXTENSION})`, {
        file: entry,
      });
    const inWindow = found.filter((file) => {
      const span = dayFileSpan(file);
      return !span || (span[1] > from && span[0] < to);
    });
    if (inWindow.length === 0)
      throw new RecordingError(`none of its ${found.length} day files is within the time window`, { file: entry });
    for (const file of inWindow) add(file);
  }
  return [...out.values()];
}

async function firstTickerTime(file: string, allowPartial: boolean | undefined): Promise<number | undefined> {
  for await (const batch of readRecordingBatches(file, { warn: () => undefined, allowPartial })) return batch[0]?.t;
  return undefined;
}

/**
 * Tickers of several files of one symbol in time order: files are ordered by their first ticker (a recorder day
 * file outside [from, to) is not opened at all), and a ticker not later than the one before it (overlapping
 * files, duplicates) is skipped with one warning per file.
 */
export async function* readRecordings(
  files: readonly string[],
  options: ReadOptions = {},
): AsyncGenerator<WireTicker[]> {
  const warn = options.warn ?? defaultWarn;
  const from = options.from ?? -Infinity;
  const to = options.to ?? Infinity;
  const starts: { file: string; start: number }[] = [];
  for (const file of files) {
    const span = dayFileSpan(file);
    if (span && (span[1] <= from || span[0] >= to)) continue;
    const start = await firstTickerTime(file, options.allowPartial);
    if (start !== undefined && start < to) starts.push({ file, start });
  }
  starts.sort((a, b) => a.start - b.start || (a.file < b.file ? -1 : 1));
  let last = -Infinity;
  for (const { file } of starts) {
    let skipped = 0;
    for await (const batch of readRecordingBatches(file, { ...options, warn })) {
      if (batch.length > 0 && batch[0]!.t > last && isIncreasing(batch)) {
        last = batch[batch.length - 1]!.t;
        yield batch;
        continue;
      }
      const kept: WireTicker[] = [];
      for (const ticker of batch) {
        if (ticker.t > last) {
          kept.push(ticker);
          last = ticker.t;
        } else skipped++;
      }
      if (kept.length > 0) yield kept;
    }
    if (skipped > 0) warn(`${file}: skipped ${skipped} tickers not later than the ticker before them`);
  }
}

function isIncreasing(batch: readonly WireTicker[]): boolean {
  for (let i = 1; i < batch.length; i++) if (batch[i]!.t <= batch[i - 1]!.t) return false;
  return true;
}

/** Every recording of one symbol under dir, in time order, within the optional [from, to) bounds. */
export async function* readSymbolRecordings(
  dir: string,
  symbol: string,
  options: ReadOptions = {},
): AsyncGenerator<WireTicker[]> {
  yield* readRecordings(await listRecordingFiles(dir, symbol), options);
}
