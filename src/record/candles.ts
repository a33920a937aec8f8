/**
 * Candle importer: one-minute OHLCV candles (CSV) become a recording of 24-hour ticker entries, four per
 * candle, so that stops and limits inside a candle's range are exercised by a replay. docs/recording-format.md
 * documents every derived key.
 */
import { readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { BotError } from '../errors.js';
import { D, dec, plain, type Dec } from '../market/decimal.js';
import { RECORDING_EXTENSION, RECORDING_FORMAT, RECORDING_VERSION, utcDay } from './recording-format.js';
import { RecordingWriter, syncDir } from './recording-writer.js';
import { RollingExtreme, RollingSum } from './rolling-window.js';
import type { PairConfig } from '../ports/venue-records.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** Offsets of the four tickers inside a candle's minute: open, nearer extreme, other extreme, close. */
export const WALK_OFFSETS_MS = [0, 15_000, 30_000, 45_000] as const;
export const CSV_HEADER = 'open_time,open,high,low,close,volume';

/** A problem in a candle CSV: names the file and the line. */
export class CandleFileError extends BotError {
  constructor(message: string, file: string, line?: number, cause?: unknown) {
    super('E_CANDLES', `${line === undefined ? file : `${file}:${line}`}: ${message}`, {
      context: { file, line },
      cause,
    });
  }
}

export interface Candle {
  openTime: number;
  /** Canonical plain decimal texts (as written into the recording). */
  open: string;
  high: string;
  low: string;
  close: string;
  volume: Dec;
}

/** The recording's base and quote codes and ids (cli/import-candles.ts works them out from the symbol and flags). */
export interface Assets {
  base: string;
  quote: string;
  baseId: number;
  quoteId: number;
}

const TIME = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d+)?)(Z|[+-]\d{2}:\d{2})?$/;
/** Exponent notation is accepted on input (pandas writes small volumes as 9e-05) and never written. */
const AMOUNT = /^\d+(\.\d+)?([eE][-+]?\d+)?$/;

function parseTime(text: string, file: string, line: number): number {
  const match = TIME.exec(text);
  const t = match ? Date.parse(`${match[1]}T${match[2]}${match[3] ?? 'Z'}`) : NaN;
  if (Number.isNaN(t)) {
    throw new CandleFileError(`open_time: expected a time like 2023-03-01 00:00:00+00:00, found '${text}'`, file, line);
  }
  return t;
}

function parseAmount(text: string, column: string, file: string, line: number): string {
  if (!AMOUNT.test(text)) {
    throw new CandleFileError(`${column}: expected a non-negative decimal, found '${text}'`, file, line);
  }
  return plain(text);
}

/** Candles of one CSV text, checked: header, numbers, high/low bounds, time increasing by a minute or more. */
export function parseCandleCsv(text: string, file: string, after = -Infinity): Candle[] {
  const lines = text.split('\n');
  const header = lines[0]?.trimEnd() ?? '';
  if (header !== CSV_HEADER) {
    throw new CandleFileError(`expected the header '${CSV_HEADER}', found '${header}'`, file, 1);
  }
  const candles: Candle[] = [];
  let previous = after;
  for (let i = 1; i < lines.length; i++) {
    const row = lines[i]!.trimEnd();
    if (row === '') continue;
    const line = i + 1;
    const cells = row.split(',');
    if (cells.length !== 6) throw new CandleFileError(`expected 6 columns, found ${cells.length}`, file, line);
    const openTime = parseTime(cells[0]!, file, line);
    if (openTime < previous + MINUTE_MS) {
      throw new CandleFileError(
        `open_time ${cells[0]} is not at least one minute after the previous candle ` +
          `(${new Date(previous).toISOString()}): times must increase`,
        file,
        line,
      );
    }
    previous = openTime;
    const open = parseAmount(cells[1]!, 'open', file, line);
    const high = parseAmount(cells[2]!, 'high', file, line);
    const low = parseAmount(cells[3]!, 'low', file, line);
    const close = parseAmount(cells[4]!, 'close', file, line);
    const volume = dec(parseAmount(cells[5]!, 'volume', file, line));
    const hi = Number(high);
    const lo = Number(low);
    if (lo <= 0 || lo > Math.min(Number(open), Number(close)) || hi < Math.max(Number(open), Number(close))) {
      throw new CandleFileError(`low ${low} and high ${high} do not bound open ${open} and close ${close}`, file, line);
    }
    candles.push({ openTime, open, high, low, close, volume });
  }
  return candles;
}

/**
 * The four prices a candle walks: open, the extreme nearer to the open, the other extreme, close. On a tie
 * (both extremes equally far from the open) an up candle (close >= open) dips first and a down candle rises
 * first, the usual reading of a candle's shape.
 */
export function walkCandle(c: Candle): [string, string, string, string] {
  const open = dec(c.open);
  const up = open.minus(dec(c.high)).abs();
  const down = open.minus(dec(c.low)).abs();
  const highFirst = up.lt(down) || (up.eq(down) && dec(c.close).lt(open));
  return highFirst ? [c.open, c.high, c.low, c.close] : [c.open, c.low, c.high, c.close];
}

/**
 * Turns candles, in time order, into ticker lines (JSON text, numbers written as exact decimals). Keeps the
 * rolling 24-hour state between calls, so several files of one series continue one another.
 */
export class CandleTickers {
  private readonly highs = new RollingExtreme(true);
  private readonly lows = new RollingExtreme(false);
  private readonly volumes = new RollingSum();
  private allHigh = -Infinity;
  private allHighText = '0';
  private allLow = Infinity;
  private allLowText = '0';
  private readonly fixed: string;

  constructor(
    private readonly symbol: string,
    assets: Assets,
  ) {
    this.fixed =
      `"b":${JSON.stringify(assets.base)},"q":${JSON.stringify(assets.quote)},` +
      `"bi":${assets.baseId},"qi":${assets.quoteId}`;
  }

  /** The candle's four ticker lines. */
  push(c: Candle): string[] {
    const cutoff = c.openTime - DAY_MS;
    this.highs.evict(cutoff);
    this.lows.evict(cutoff);
    this.volumes.evict(cutoff);
    const before = { high: this.highs.best(), low: this.lows.best() };
    const prices = walkCandle(c);
    const lines: string[] = [];
    let volumes = this.volumeText();
    let high = -Infinity;
    let highText = '';
    let low = Infinity;
    let lowText = '';
    for (let i = 0; i < 4; i++) {
      const text = prices[i]!;
      const price = Number(text);
      if (price > high) [high, highText] = [price, text];
      if (price < low) [low, lowText] = [price, text];
      if (price > this.allHigh) [this.allHigh, this.allHighText] = [price, text];
      if (price < this.allLow) [this.allLow, this.allLowText] = [price, text];
      // The candle's volume is known once it closes: it joins the rolling sums at the closing tick.
      if (i === 3) {
        this.volumes.push(c.openTime, c.volume, quoteVolume(c));
        volumes = this.volumeText();
      }
      const h = before.high && before.high.value > high ? before.high.text : highText;
      const l = before.low && before.low.value < low ? before.low.text : lowText;
      lines.push(
        `{"s":${JSON.stringify(this.symbol)},"p":${text},"t":${c.openTime + WALK_OFFSETS_MS[i]!},` +
          `"h":${h},"l":${l},${volumes},${this.fixed},` +
          `"a":0,"ld":0,"hh":0,"lh":0,"ph":0,"av":0,"vc":0,"lq":0,"lQ":0,"u":false,"lbl":"",` +
          `"hy":${this.allHighText},"ly":${this.allLowText},"pw":${text},"p1m":${text},"p3m":${text},"py":${text}}`,
      );
    }
    this.highs.push(c.openTime, Number(c.high), c.high);
    this.lows.push(c.openTime, Number(c.low), c.low);
    return lines;
  }

  private volumeText(): string {
    return `"vb":${plain(this.volumes.base)},"vq":${plain(this.volumes.quote)}`;
  }
}

/** Approximate quote volume of a candle: base volume × typical price (high + low + close) / 3, to 8 decimals. */
export function quoteVolume(c: Candle): Dec {
  return c.volume.times(dec(c.high).plus(c.low).plus(c.close)).div(3).toDecimalPlaces(8, D.ROUND_HALF_EVEN);
}

export interface ImportOptions {
  symbol: string;
  files: readonly string[];
  outDir: string;
  assets: Assets;
  /** The pair's rules, written into the recording's header (cli/import-candles.ts builds them from flags). */
  pair?: PairConfig;
  /**
   * Only candles opening within [from, to) are written (epoch ms). Those before `from` are still read: the
   * rolling 24-hour figures of the first tickers written are then whole, as the market watch's would be.
   */
  from?: number;
  to?: number;
  /** Called every few thousand rows and at the end of each file. */
  onProgress?: (done: number, total: number) => void;
}

export interface ImportResult {
  file: string;
  candles: number;
  tickers: number;
  from: number;
  to: number;
}

/** Output name: SYMBOL-YYYY-MM-DD_DD (same month), SYMBOL-YYYY-MM-DD_YYYY-MM-DD, or SYMBOL-YYYY-MM-DD (one day). */
export function importFileName(symbol: string, from: number, to: number): string {
  const first = utcDay(from);
  const last = utcDay(to);
  const span =
    first === last ? first : first.slice(0, 8) === last.slice(0, 8) ? `${first}_${last.slice(8)}` : `${first}_${last}`;
  return `${symbol}-${span}${RECORDING_EXTENSION}`;
}

/** Imports candle CSVs (one series, files in time order) into one recording under outDir; atomic (temp + rename). */
export async function importCandles(options: ImportOptions): Promise<ImportResult> {
  const { pair, assets } = options;
  const from = options.from ?? -Infinity;
  const to = options.to ?? Infinity;
  const series: Candle[][] = [];
  let last = -Infinity;
  for (const file of options.files) {
    const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new CandleFileError(`cannot read: ${err.code ?? err.message}`, file, undefined, err);
    });
    const candles = parseCandleCsv(text, file, last);
    if (candles.length === 0) throw new CandleFileError('no candles', file);
    last = candles[candles.length - 1]!.openTime;
    series.push(candles.filter((c) => c.openTime < to));
  }
  const written = series.flat().filter((c) => c.openTime >= from);
  const first = written[0];
  const end = written[written.length - 1];
  if (first === undefined || end === undefined)
    throw new CandleFileError(
      `no candles within ${new Date(from).toISOString()} to ${new Date(to).toISOString()}`,
      options.files.join(', '),
    );
  const total = series.reduce((n, s) => n + s.length, 0);
  const out = path.join(options.outDir, importFileName(options.symbol, first.openTime, end.openTime));
  const temp = `${out}.partial`;
  await rm(temp, { force: true });
  const span =
    options.from === undefined && options.to === undefined
      ? ''
      : `, those opening from ${new Date(first.openTime).toISOString()} to ${new Date(end.openTime).toISOString()} ` +
        "(the ones before count in the first tickers' 24-hour figures)";
  const writer = await RecordingWriter.open(temp, {
    header: {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      symbol: options.symbol,
      source: 'candles',
      provenance:
        `one-minute candles from ${options.files.map((f) => path.basename(f)).join(', ')}${span}; ` +
        'each candle walks open, nearer extreme, other extreme, close at +0/15/30/45 s',
      ...(pair ? { pair: { ...pair, baseAssetId: assets.baseId, quoteAssetId: assets.quoteId } } : {}),
    },
    fsyncIntervalMs: Infinity,
  });
  const tickers = new CandleTickers(options.symbol, assets);
  let done = 0;
  try {
    for (const candles of series) {
      let batch: string[] = [];
      for (const candle of candles) {
        const lines = tickers.push(candle);
        if (candle.openTime >= from) batch.push(...lines);
        if (++done % 4096 === 0) {
          await writer.writeLines(batch);
          batch = [];
          options.onProgress?.(done, total);
        }
      }
      await writer.writeLines(batch);
      options.onProgress?.(done, total);
    }
    await writer.close();
  } catch (err) {
    await writer.close().catch(() => undefined);
    await rm(temp, { force: true });
    throw err;
  }
  await rename(temp, out);
  syncDir(options.outDir);
  return {
    file: out,
    candles: written.length,
    tickers: written.length * 4,
    from: first.openTime,
    to: end.openTime + WALK_OFFSETS_MS[3],
  };
}
