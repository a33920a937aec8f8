/**
 * Crash-safe appending writer of recordings.
 *
 * One gzip member per writer session; after each batch of lines a zlib SYNC flush pushes everything written so
 * far to the file, so a crash loses at most the batch being written (the reader skips its torn line). Reopening
 * an existing file appends a new member (concatenated members are valid gzip). A file whose last member was cut
 * short by a crash is repaired first: its complete lines are rewritten as one member (temp file + rename),
 * because a member appended after a truncated one would make the rest of the file unreadable.
 *
 * fsync policy: data reaches the kernel after every batch (a process crash loses nothing flushed); it is forced
 * to the disk on close, on repair, and after a batch when the last fsync is older than fsyncIntervalMs (a power
 * loss loses at most that much).
 */
import { once } from 'node:events';
import { closeSync, fsyncSync, openSync, writeSync, renameSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { constants, createGzip, type Gzip } from 'node:zlib';
import type { WireTicker } from '../wire/schemas.js';
import { RecordingError, type RecordingHeader } from './recording-format.js';
import { readLineBatches, type Warn } from './recording-reader.js';

export interface WriterOptions {
  /** Written as the first line when the file is created (not when appending to an existing file). */
  header: RecordingHeader;
  /** Longest time between fsyncs while writing (default 60 s; 0 = after every batch). */
  fsyncIntervalMs?: number;
  /** Repairs of a torn file are reported here. */
  warn?: Warn;
  /** Time source for the fsync interval (default Date.now). */
  now?: () => number;
}

export class RecordingWriter {
  /** Last complete line the file held when it was opened (header included), for callers that dedupe. */
  readonly lastLine: string | undefined;
  private readonly chunks: Buffer[] = [];
  private lastSync: number;
  private closed = false;

  private constructor(
    readonly file: string,
    private readonly fd: number,
    private readonly gzip: Gzip,
    lastLine: string | undefined,
    private readonly fsyncIntervalMs: number,
    private readonly now: () => number,
  ) {
    this.lastLine = lastLine;
    this.lastSync = now();
    gzip.on('data', (chunk: Buffer) => this.chunks.push(chunk));
  }

  /** Opens (creating folders and the file as needed) for appending; repairs a torn file first. */
  static async open(file: string, options: WriterOptions): Promise<RecordingWriter> {
    const now = options.now ?? Date.now;
    await mkdir(path.dirname(file), { recursive: true });
    const size = await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    const lastLine = size > 0 ? await checkOrRepair(file, options.warn ?? ((m) => process.emitWarning(m))) : undefined;
    let fd: number;
    try {
      fd = openSync(file, 'a');
    } catch (err) {
      throw new RecordingError(`cannot open for appending: ${(err as Error).message}`, { file }, err);
    }
    const writer = new RecordingWriter(file, fd, createGzip(), lastLine, options.fsyncIntervalMs ?? 60_000, now);
    if (lastLine === undefined) await writer.writeLines([JSON.stringify(options.header)]);
    return writer;
  }

  /** Appends lines (JSON texts without newline) and flushes them to the file. */
  async writeLines(lines: readonly string[]): Promise<void> {
    if (this.closed) throw new RecordingError('write after close', { file: this.file });
    if (lines.length === 0) return;
    this.gzip.write(lines.join('\n') + '\n');
    await new Promise<void>((resolve) => this.gzip.flush(constants.Z_SYNC_FLUSH, () => resolve()));
    this.drain();
    if (this.now() - this.lastSync >= this.fsyncIntervalMs) this.sync();
  }

  writeTickers(tickers: readonly WireTicker[]): Promise<void> {
    return this.writeLines(tickers.map((t) => JSON.stringify(t)));
  }

  /** Ends the gzip member, forces it to disk and closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      const ended = once(this.gzip, 'end');
      this.gzip.end();
      await ended;
      this.drain();
      this.sync();
    } finally {
      closeSync(this.fd);
    }
  }

  private drain(): void {
    if (this.chunks.length === 0) return;
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    this.chunks.length = 0;
    try {
      writeSync(this.fd, data);
    } catch (err) {
      throw new RecordingError(`write failed: ${(err as Error).message}`, { file: this.file }, err);
    }
  }

  private sync(): void {
    fsyncSync(this.fd);
    this.lastSync = this.now();
  }
}

/**
 * Returns the file's last complete line (undefined when it has none); rewrites the file first when its last
 * gzip member is torn or its data does not end with a newline (an appended line would be glued to it).
 */
async function checkOrRepair(file: string, warn: Warn): Promise<string | undefined> {
  let last: string | undefined;
  try {
    for await (const batch of readLineBatches(file, true)) {
      if (batch.tail !== undefined) throw new Error('unterminated last line');
      last = batch.lines.at(-1) ?? last;
    }
    return last;
  } catch {
    // Torn member or torn line: keep every complete line, drop the rest.
  }
  const lines: string[] = [];
  for await (const batch of readLineBatches(file)) {
    for (const line of batch.lines) lines.push(line);
    if (batch.tail !== undefined && parsesAsJson(batch.tail)) lines.push(batch.tail);
  }
  const temp = `${file}.repair`;
  const fd = openSync(temp, 'w');
  try {
    const gzip = createGzip();
    const chunks: Buffer[] = [];
    gzip.on('data', (c: Buffer) => chunks.push(c));
    const ended = once(gzip, 'end');
    gzip.end(lines.length > 0 ? lines.join('\n') + '\n' : '');
    await ended;
    writeSync(fd, Buffer.concat(chunks));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  syncDir(path.dirname(file));
  warn(`${file}: repaired a torn recording (kept ${lines.length} complete lines, dropped the torn end)`);
  return lines.at(-1);
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Makes a rename durable. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
