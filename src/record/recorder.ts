/**
 * Market-watch recorder: polls the 24-hour tickers of some symbols and appends each new entry, every key as
 * it came, to `DIR/SYMBOL/YYYY-MM-DD.jsonl.gz` (the UTC day of the ticker's own time `t`). It also records
 * each symbol's pair configuration (the config endpoint's entry): in the header of a new file, as a
 * `pairConfig` line when it appends to an existing one, and as a `pairConfig` line whenever it changes.
 */
import type { WireTicker, WireTickerSource } from '../wire/schemas.js';
import type { PairConfig } from '../ports/venue-records.js';
import { silentLogger, type Logger } from '../ops/logger.js';
import type { Clock, ClockReading, Timer } from '../ports/clock.js';
import { wallClock } from '../clocks/wall-clock.js';
import { RECORDING_FORMAT, RECORDING_VERSION, dayFilePath, pairConfigLine, utcDay } from './recording-format.js';
import { RecordingWriter } from './recording-writer.js';

export type FetchTickers = (symbols: readonly string[]) => Promise<WireTicker[]>;
export type FetchPairConfigs = () => Promise<PairConfig[]>;

export interface RecorderOptions {
  symbols: readonly string[];
  dir: string;
  fetchTickers: FetchTickers;
  /** The config endpoint (all pairs); without it no pair configuration is recorded. */
  fetchPairConfigs?: FetchPairConfigs;
  /** The pair configurations are read again at most this often (default 60 s, as the daemon). */
  pairConfigEveryMs?: number;
  logger?: Logger;
  clock?: ClockReading;
  /** Where the tickers come from (e.g. the exchange's origin), written into each new file's header. */
  origin?: string;
  /** See RecordingWriter (default 60 s). */
  fsyncIntervalMs?: number;
}

export interface RecorderStatus {
  written: number;
  /** Tickers not written because their time was not after the last one written for the symbol. */
  unchanged: number;
  failedPolls: number;
  /** Time (t) of the last ticker written. */
  lastTickerTime?: number;
}

interface Slot {
  day: string;
  writer: RecordingWriter;
  /** The pair configuration this file holds last (JSON), to write a line only when it changes. */
  pair: string | undefined;
}

function timeOfLine(line: string | undefined): number | undefined {
  if (line === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    const t = typeof value === 'object' && value !== null ? (value as { t?: unknown }).t : undefined;
    return typeof t === 'number' ? t : undefined;
  } catch {
    return undefined;
  }
}

export class Recorder {
  readonly status: RecorderStatus = { written: 0, unchanged: 0, failedPolls: 0 };
  private readonly slots = new Map<string, Slot>();
  /** Time of the last ticker written per symbol: the exchange's ticker may not change between polls. */
  private readonly lastTime = new Map<string, number>();
  private readonly wanted: ReadonlySet<string>;
  private readonly logger: Logger;
  private readonly clock: ClockReading;
  /** The latest pair configuration read per symbol, and when they were read. */
  private readonly pairs = new Map<string, PairConfig>();
  private pairsReadAt = -Infinity;

  constructor(private readonly options: RecorderOptions) {
    this.wanted = new Set(options.symbols);
    this.logger = options.logger ?? silentLogger;
    this.clock = options.clock ?? wallClock;
  }

  /** One poll: fetch, write what is new. Never throws: a failure is logged and the next poll tries again. */
  async poll(): Promise<number> {
    await this.readPairConfigs();
    let tickers: WireTicker[];
    try {
      tickers = await this.options.fetchTickers(this.options.symbols);
    } catch (err) {
      this.status.failedPolls++;
      this.logger.warn({ err }, 'recorder: market watch poll failed; retrying at the next tick');
      return 0;
    }
    const bySymbol = new Map<string, WireTicker[]>();
    for (const ticker of tickers) {
      if (!this.wanted.has(ticker.s)) continue;
      const list = bySymbol.get(ticker.s);
      if (list) list.push(ticker);
      else bySymbol.set(ticker.s, [ticker]);
    }
    let written = 0;
    for (const [symbol, list] of bySymbol) {
      try {
        written += await this.write(symbol, list);
      } catch (err) {
        this.logger.error({ err, symbol }, 'recorder: write failed; the file is reopened at the next tick');
        await this.drop(symbol);
      }
    }
    await this.closeStaleDays();
    return written;
  }

  /** Reads the pair configurations when they are due; a failure keeps the last ones and is retried next poll. */
  private async readPairConfigs(): Promise<void> {
    const fetch = this.options.fetchPairConfigs;
    const now = this.clock.now();
    if (!fetch || now - this.pairsReadAt < (this.options.pairConfigEveryMs ?? 60_000)) return;
    try {
      for (const config of await fetch()) if (this.wanted.has(config.symbol)) this.pairs.set(config.symbol, config);
      this.pairsReadAt = now;
    } catch (err) {
      this.logger.warn({ err }, 'recorder: pair configuration read failed; retrying at the next tick');
    }
  }

  /** A pairConfig line for the slot's file when the symbol's configuration is not the one the file holds. */
  private pairLine(symbol: string, slot: Slot, t: number): string | undefined {
    const config = this.pairs.get(symbol);
    if (config === undefined) return undefined;
    const json = JSON.stringify(config);
    if (json === slot.pair) return undefined;
    slot.pair = json;
    return pairConfigLine(config, t);
  }

  /** Flushes and closes every open file. */
  async close(): Promise<void> {
    for (const symbol of [...this.slots.keys()]) await this.drop(symbol);
  }

  private async write(symbol: string, tickers: readonly WireTicker[]): Promise<number> {
    let pending: string[] = [];
    let slot = this.slots.get(symbol);
    let written = 0;
    for (const ticker of tickers) {
      if (ticker.t <= (this.lastTime.get(symbol) ?? -Infinity)) {
        this.status.unchanged++;
        continue;
      }
      const day = utcDay(ticker.t);
      if (slot?.day !== day) {
        if (slot) {
          await slot.writer.writeLines(pending);
          pending = [];
          await this.drop(symbol, false);
        }
        slot = await this.open(symbol, ticker.t, day);
        if (ticker.t <= (this.lastTime.get(symbol) ?? -Infinity)) {
          this.status.unchanged++;
          continue;
        }
      }
      const pairLine = this.pairLine(symbol, slot, ticker.t);
      if (pairLine !== undefined) pending.push(pairLine);
      pending.push(JSON.stringify(ticker));
      this.lastTime.set(symbol, ticker.t);
      written++;
    }
    if (slot) await slot.writer.writeLines(pending);
    this.status.written += written;
    const last = this.lastTime.get(symbol);
    if (written > 0 && last !== undefined && last > (this.status.lastTickerTime ?? -Infinity)) {
      this.status.lastTickerTime = last;
    }
    return written;
  }

  private async open(symbol: string, t: number, day: string): Promise<Slot> {
    const pair = this.pairs.get(symbol);
    const writer = await RecordingWriter.open(dayFilePath(this.options.dir, symbol, t), {
      header: {
        format: RECORDING_FORMAT,
        version: RECORDING_VERSION,
        symbol,
        source: 'market-watch',
        ...(this.options.origin === undefined ? {} : { provenance: `market watch of ${this.options.origin}` }),
        ...(pair === undefined ? {} : { pair }),
      },
      fsyncIntervalMs: this.options.fsyncIntervalMs,
      now: () => this.clock.now(),
      warn: (message) => this.logger.warn(message),
    });
    // After a restart the file's last entry is the one to compare the first poll with.
    const fileTime = timeOfLine(writer.lastLine);
    if (fileTime !== undefined && fileTime > (this.lastTime.get(symbol) ?? -Infinity)) {
      this.lastTime.set(symbol, fileTime);
    }
    // A new file's header holds the configuration; a file appended to gets it as a line before the next ticker.
    const slot: Slot = { day, writer, pair: writer.lastLine === undefined && pair ? JSON.stringify(pair) : undefined };
    this.slots.set(symbol, slot);
    return slot;
  }

  /** Closes a symbol's file; after a failure also forgets its last time, to be read back from the file. */
  private async drop(symbol: string, failed = true): Promise<void> {
    const slot = this.slots.get(symbol);
    this.slots.delete(symbol);
    if (failed) this.lastTime.delete(symbol);
    if (!slot) return;
    try {
      await slot.writer.close();
    } catch (err) {
      this.logger.error({ err, file: slot.writer.file }, 'recorder: closing a recording failed');
    }
  }

  /** Past UTC midnight a symbol whose ticker has not moved still gets its day file closed (and fsynced). */
  private async closeStaleDays(): Promise<void> {
    const today = utcDay(this.clock.now());
    for (const [symbol, slot] of [...this.slots]) if (slot.day < today) await this.drop(symbol, false);
  }
}

/**
 * Runs `task` at every multiple of everyMs on the clock, one run at a time; slots missed while a run was slow
 * are skipped, not queued. A self-rescheduling timer of the clock rather than a cron schedule: any interval
 * works (a second-level cron only expresses divisors of a minute), a run can never overlap the previous one,
 * and tests drive it with a virtual clock.
 */
export function runEvery(
  everyMs: number,
  task: () => Promise<void>,
  options: { clock?: Clock; onError?: (err: unknown) => void } = {},
): { stop(): Promise<void> } {
  const clock = options.clock ?? wallClock;
  let handle: Timer | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const schedule = (): void => {
    const now = clock.now();
    handle = clock.setTimer(fire, (Math.floor(now / everyMs) + 1) * everyMs - now);
  };
  const fire = (): void => {
    running = task()
      .catch((err: unknown) => options.onError?.(err))
      .finally(() => {
        running = undefined;
        if (!stopped) schedule();
      });
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      handle?.cancel();
      await running;
    },
  };
}

/**
 * fetchTickers over a venue's market watch: one symbol is asked for by name, several in one call for all pairs
 * (the recorder keeps only the symbols it records).
 */
export function marketWatchFetcher(source: WireTickerSource): FetchTickers {
  return (symbols) => (symbols.length === 1 ? source.marketWatchEntries(symbols[0]) : source.marketWatchEntries());
}
