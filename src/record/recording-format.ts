/**
 * The recording format (described for users in docs/recording-format.md): gzip-compressed JSON lines, one
 * 24-hour ticker entry per line with every key kept as it came, preceded by one header line that says what
 * the file is, where its data came from and (version 2) the pair's configuration. A pair configuration that
 * changes within a file is a line of its own, `{"pairConfig":{…},"t":…}`. A file may hold several
 * concatenated gzip members (one per writer session); readers treat them as one stream.
 */
import path from 'node:path';
import { z } from 'zod';
import { BotError } from '../errors.js';
import { PairConfigSchema } from '../wire/schemas.js';
import type { PairConfig } from '../ports/venue-records.js';

export const RECORDING_FORMAT = 'spot-bot-recording';
/** 2: the header may carry `pair`, and a file may hold `pairConfig` lines. Readers read 1 and 2. */
export const RECORDING_VERSION = 2;
export const RECORDING_EXTENSION = '.jsonl.gz';

const DAY_MS = 86_400_000;

/**
 * First line of a recording. Optional for readers (a headerless file of tickers is still a recording), always
 * written by the writers so that a file found on disk says which symbol it holds and how it was made.
 */
export const RecordingHeaderSchema = z.looseObject({
  format: z.literal(RECORDING_FORMAT),
  version: z.number().int().positive(),
  symbol: z.string(),
  /** `market-watch` (the recorder) or `candles` (the candle importer). */
  source: z.string(),
  /** Free text: where the data came from and how it was transformed. */
  provenance: z.string().optional(),
  /** The pair's configuration when the file starts, as the exchange's config endpoint gives one entry. */
  pair: PairConfigSchema.optional(),
  /** Candle imports: the path each candle walks (candle-path.ts), and the candles' length in ms. */
  candlePath: z.string().optional(),
  candleMs: z.number().int().positive().optional(),
});
export type RecordingHeader = z.infer<typeof RecordingHeaderSchema>;

/** The key of a line that carries a pair configuration instead of a ticker (from version 2). */
export const PAIR_CONFIG_KEY = 'pairConfig';

/** A pair-configuration line: the configuration as from `t` (epoch ms) on. */
export function pairConfigLine(config: PairConfig, t: number): string {
  return JSON.stringify({ [PAIR_CONFIG_KEY]: config, t });
}

/** A recording that cannot be read or written: names the file and, where it applies, the line. */
export class RecordingError extends BotError {
  constructor(message: string, context: { file: string; line?: number; byte?: number }, cause?: unknown) {
    const where =
      (context.line === undefined ? context.file : `${context.file}:${context.line}`) +
      (context.byte === undefined ? '' : ` (compressed byte ${context.byte})`);
    super('E_RECORDING', `${where}: ${message}`, { context, cause });
  }
}

/** UTC day of an epoch-ms time as YYYY-MM-DD. */
export function utcDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

/** The recorder's layout: one folder per symbol, one file per UTC day. */
export function dayFilePath(dir: string, symbol: string, t: number): string {
  return path.join(dir, symbol, `${utcDay(t)}${RECORDING_EXTENSION}`);
}

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.jsonl\.gz$/;

/** [start, end) epoch ms of a recorder day file, from its name; undefined for any other name. */
export function dayFileSpan(file: string): [number, number] | undefined {
  const match = DAY_FILE.exec(path.basename(file));
  if (!match) return undefined;
  const start = Date.parse(`${match[1]}T00:00:00Z`);
  return Number.isNaN(start) ? undefined : [start, start + DAY_MS];
}
