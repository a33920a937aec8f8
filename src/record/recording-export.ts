/**
 * Recordings as one table for pandas, polars or DuckDB (`bot data export`): a row per recorded ticker with its
 * time, symbol, last price, 24-hour high and low, and 24-hour base and quote volumes, read through
 * tickerFromWire (the one place the wire's one-letter keys are read), as the recording has them: a number the
 * recording lacks is empty (null). Each symbol's files are read in time order (readRecordings: overlaps and
 * duplicates skipped), the symbols one after the other, in the order their first file was given.
 *
 * Formats: CSV, streamed as it is read (time in epoch milliseconds, numbers as JavaScript prints the
 * recording's); an Arrow IPC file (Feather v2: time a UTC timestamp in milliseconds, numbers float64), by
 * apache-arrow; Parquet (the same types), by hyparquet-writer. The two libraries are imported only when their
 * format is asked for. A file is written under NAME.partial and renamed when complete, so an interrupted export
 * leaves no half file under the final name.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BotError } from '../errors.js';
import { researchImport } from '../ops/research-import.js';
import { csvCell } from '../market/display.js';
import { tickerFromWire } from '../wire/schemas.js';
import type { Ticker } from '../ports/venue-records.js';
import { RECORDING_EXTENSION, RecordingError } from './recording-format.js';
import {
  readRecordingBatches,
  readRecordingHeader,
  readRecordings,
  type ReadOptions,
  type Warn,
} from './recording-reader.js';

export const EXPORT_FORMATS = ['csv', 'arrow', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** The columns, in order: the port's Ticker fields a recording carries. */
export const EXPORT_COLUMNS = ['time', 'symbol', 'last', 'high', 'low', 'baseVolume', 'quoteVolume'] as const;

export interface ExportOptions {
  format: ExportFormat;
  /** The output file; undefined: standard output (CSV only). */
  out: string | undefined;
  from?: number;
  to?: number;
  allowPartial?: boolean;
  warn?: Warn;
  /** Compressed bytes read so far of the total (for a progress line). */
  onProgress?: (done: number, total: number) => void;
}

export interface ExportResult {
  rows: number;
  files: number;
  symbols: string[];
}

/** Where rows go: each format's writer. */
interface TableSink {
  write(rows: readonly Ticker[]): Promise<void>;
  close(): Promise<void>;
}

/** Rows the Arrow and Parquet writers gather before writing one record batch or row group. */
const CHUNK_ROWS = 65_536;

async function csvSink(stream: NodeJS.WritableStream): Promise<TableSink> {
  const put = async (text: string) => {
    if (!stream.write(text)) await once(stream, 'drain');
  };
  await put(`${EXPORT_COLUMNS.join(',')}\n`);
  return {
    write: (rows) =>
      put(
        rows
          .map(
            (r) =>
              `${r.time},${csvCell(r.symbol)},${r.last},${csvCell(r.high)},${csvCell(r.low)},${csvCell(r.baseVolume)},${csvCell(r.quoteVolume)}\n`,
          )
          .join(''),
      ),
    close: async () => {
      if (stream === process.stdout) return;
      const file = stream as WriteStream;
      file.end();
      await once(file, 'close');
    },
  };
}

/** Gathers rows into chunks of CHUNK_ROWS for a columnar writer. */
function chunked(flush: (rows: Ticker[]) => Promise<void>, finish: () => Promise<void>): TableSink {
  let rows: Ticker[] = [];
  return {
    write: async (more) => {
      for (const r of more) rows.push(r);
      if (rows.length >= CHUNK_ROWS) {
        const full = rows;
        rows = [];
        await flush(full);
      }
    },
    close: async () => {
      if (rows.length > 0) await flush(rows);
      await finish();
    },
  };
}

async function arrowSink(path: string): Promise<TableSink> {
  const arrow = await researchImport('bot data export --format arrow', () => import('apache-arrow'));
  const writer = new arrow.RecordBatchFileWriter();
  const file = createWriteStream(path);
  writer.toNodeStream().pipe(file);
  const f64 = (rows: Ticker[], pick: (r: Ticker) => number | undefined) =>
    arrow.vectorFromArray(
      rows.map((r) => pick(r) ?? null),
      new arrow.Float64(),
    );
  return chunked(
    (rows) => {
      const table = new arrow.Table({
        time: arrow.vectorFromArray(
          rows.map((r) => r.time),
          new arrow.TimestampMillisecond('UTC'),
        ),
        symbol: arrow.vectorFromArray(
          rows.map((r) => r.symbol),
          new arrow.Utf8(),
        ),
        last: f64(rows, (r) => r.last),
        high: f64(rows, (r) => r.high),
        low: f64(rows, (r) => r.low),
        baseVolume: f64(rows, (r) => r.baseVolume),
        quoteVolume: f64(rows, (r) => r.quoteVolume),
      });
      // The writer buffers; its stream drains into the file, which close() waits for.
      for (const batch of table.batches) writer.write(batch);
      return Promise.resolve();
    },
    async () => {
      writer.close();
      // The file is complete once the writer's stream has ended into it and it closed.
      if (!file.closed) await once(file, 'close');
    },
  );
}

async function parquetSink(path: string): Promise<TableSink> {
  const parquet = await researchImport('bot data export --format parquet', () => import('hyparquet-writer'));
  let writer: InstanceType<typeof parquet.ParquetWriter> | undefined;
  const f64 = (rows: Ticker[], name: string, pick: (r: Ticker) => number | undefined) => ({
    name,
    data: rows.map((r) => pick(r) ?? null),
    type: 'DOUBLE' as const,
    nullable: true,
  });
  return chunked(
    async (rows) => {
      const columnData = [
        { name: 'time', data: rows.map((r) => new Date(r.time)), type: 'TIMESTAMP' as const, nullable: false },
        { name: 'symbol', data: rows.map((r) => r.symbol), type: 'STRING' as const, nullable: false },
        { name: 'last', data: Float64Array.from(rows, (r) => r.last), type: 'DOUBLE' as const, nullable: false },
        f64(rows, 'high', (r) => r.high),
        f64(rows, 'low', (r) => r.low),
        f64(rows, 'baseVolume', (r) => r.baseVolume),
        f64(rows, 'quoteVolume', (r) => r.quoteVolume),
      ];
      writer ??= new parquet.ParquetWriter({
        writer: parquet.fileWriter(path),
        schema: parquet.schemaFromColumnData({ columnData }),
        createdBy: 'spot-bot',
      });
      await writer.write({ columnData, rowGroupSize: CHUNK_ROWS });
    },
    async () => {
      await writer?.finish();
    },
  );
}

/** The recording files of the inputs: a file as given, a folder's recordings at any depth, sorted. */
async function inputFiles(inputs: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    const info = await stat(input).catch((err: NodeJS.ErrnoException) => {
      throw new RecordingError(`cannot read the recording (${err.code ?? err.message})`, { file: input }, err);
    });
    if (!info.isDirectory()) {
      files.push(input);
      continue;
    }
    const found = (await readdir(input, { recursive: true }))
      .filter((name) => name.endsWith(RECORDING_EXTENSION))
      .map((name) => join(input, name))
      .sort();
    if (found.length === 0)
      throw new RecordingError(`no recordings (*${RECORDING_EXTENSION}) in this folder`, { file: input });
    files.push(...found);
  }
  return files;
}

/** The symbol a file holds: its header's, or its first ticker's; undefined for a file without either. */
async function symbolOf(file: string, allowPartial: boolean | undefined): Promise<string | undefined> {
  const header = await readRecordingHeader(file);
  if (header !== undefined) return header.symbol;
  for await (const batch of readRecordingBatches(file, { warn: () => undefined, allowPartial }))
    if (batch[0] !== undefined) return batch[0].s;
  return undefined;
}

/** Writes the recordings' tickers as one table (see the module's comment). Throws when there is no row. */
export async function exportRecordings(inputs: readonly string[], options: ExportOptions): Promise<ExportResult> {
  const files = await inputFiles(inputs);
  const bySymbol = new Map<string, string[]>();
  let total = 0;
  for (const file of files) {
    const symbol = await symbolOf(file, options.allowPartial);
    total += (await stat(file)).size;
    if (symbol !== undefined) bySymbol.set(symbol, [...(bySymbol.get(symbol) ?? []), file]);
  }
  const temp = options.out === undefined ? undefined : `${options.out}.partial`;
  if (temp === undefined && options.format !== 'csv')
    throw new BotError('E_USAGE', `${options.format} is a binary format: it needs a file (--out)`);
  const sink =
    temp === undefined
      ? await csvSink(process.stdout)
      : options.format === 'csv'
        ? await csvSink(createWriteStream(temp))
        : options.format === 'arrow'
          ? await arrowSink(temp)
          : await parquetSink(temp);
  let rows = 0;
  let done = 0;
  const read: ReadOptions = {
    from: options.from,
    to: options.to,
    allowPartial: options.allowPartial,
    warn: options.warn,
    onCompressed: (chunk) => {
      done += chunk.length;
      options.onProgress?.(done, total);
    },
  };
  try {
    for (const symbolFiles of bySymbol.values()) {
      for await (const batch of readRecordings(symbolFiles, read)) {
        rows += batch.length;
        await sink.write(batch.map(tickerFromWire));
      }
    }
    await sink.close();
    if (rows === 0)
      throw new BotError('E_RECORDING', 'no ticker to export (none in the recordings within --from/--to)');
    if (temp !== undefined) await rename(temp, options.out!);
  } catch (err) {
    if (temp !== undefined) await rm(temp, { force: true });
    throw err;
  }
  return { rows, files: files.length, symbols: [...bySymbol.keys()] };
}
