import { pino, type DestinationStream, type Logger } from 'pino';
import { LogTail } from './log-tail.js';

export type { Logger };

/**
 * Paths that may carry a secret anywhere in a log object. The secret and signatures must never reach a
 * log line (design.md invariant 8), whatever a caller passes in.
 */
const REDACT = [
  'secret',
  'apiSecret',
  'signature',
  'apiKey',
  'headers["x-api-key"]',
  '*.secret',
  '*.apiSecret',
  '*.signature',
  '*.apiKey',
  '*.headers["x-api-key"]',
];

export interface LoggerOptions {
  level?: string;
  /**
   * Human-readable lines (pino-pretty) instead of JSON; by default as LOG_FORMAT says (json or pretty), else on
   * when the stream is a terminal.
   */
  pretty?: boolean;
  /** Write to this file descriptor (default 1, stdout; CLI commands that print data use 2). */
  fd?: number;
  /** Write each line before returning (no flush needed before exit); JSON lines only. */
  sync?: boolean;
}

/**
 * Log bytes held in memory while the sink does not take them (a stalled pipe or log collector); lines beyond
 * are dropped, so a stalled sink can never grow memory without limit (design.md invariant 9).
 */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024;

/** How long a synchronous flush (a fatal line, the exit) may wait for a stalled sink. */
const SYNC_FLUSH_MS = 500;

/** The asynchronous destination of each logger createLogger made, so exitProcess can abandon it. */
const destinations = new WeakMap<Logger, DestinationStream & { destroy(): void }>();

/** The latest warnings and errors of each logger createLogger made (its children's included). */
const tails = new WeakMap<Logger, LogTail>();

/** The latest warnings and errors a logger of createLogger wrote (the chat's /logs); undefined for another logger. */
export function logTail(logger: Logger): LogTail | undefined {
  return tails.get(logger);
}

/** LOG_FORMAT's choice (validated with the rest of the environment by the commands that load it). */
function formatFromEnv(): boolean | undefined {
  const format = process.env.LOG_FORMAT?.trim().toLowerCase();
  return format === 'pretty' ? true : format === 'json' ? false : undefined;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const fd = options.fd ?? 1;
  const pretty = options.pretty ?? formatFromEnv() ?? (fd === 1 ? process.stdout.isTTY : process.stderr.isTTY) === true;
  const tail = new LogTail();
  // Each line as written, after the redaction: what the tail keeps is what the log shows.
  const hooks = {
    streamWrite: (line: string) => {
      tail.push(line);
      return line;
    },
  };
  const base = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: undefined, hooks };
  const kept = (logger: Logger) => {
    tails.set(logger, tail);
    return logger;
  };
  if (pretty) {
    return kept(
      pino({
        ...base,
        transport: {
          target: 'pino-pretty',
          options: { destination: fd, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
        },
      }),
    );
  }
  if (options.sync === true) return kept(pino(base, pino.destination({ fd, sync: true })));
  // pino writes synchronously on fatal and at exit, retrying a full pipe for ever: bounded here.
  let syncDeadline: number | undefined;
  const destination = pino.destination({
    fd,
    sync: false,
    maxLength: MAX_BUFFERED_LOG_BYTES,
    retryEAGAIN: () => syncDeadline === undefined || Date.now() < syncDeadline,
  });
  const flushSync = destination.flushSync.bind(destination);
  destination.flushSync = () => {
    syncDeadline = Date.now() + SYNC_FLUSH_MS;
    try {
      flushSync();
    } catch {
      // The sink is stalled: what it did not take stays buffered (or is dropped at exit).
    } finally {
      syncDeadline = undefined;
    }
  };
  const logger = pino(base, destination);
  destinations.set(logger, destination);
  return kept(logger);
}

/**
 * Exits the process after the buffered log lines are written, but never waits longer than `waitMs` (0: not
 * at all) for the sink: a stalled stdout (a pipe nobody reads, a hung collector) cannot hold the process.
 * What the sink did not take by then is dropped: pino would otherwise write it synchronously on exit, which
 * blocks for ever on a stalled pipe.
 */
export function exitProcess(logger: Logger, code: number, waitMs = 2_000): void {
  let gone = false;
  const go = (abandon: boolean) => {
    if (gone) return;
    gone = true;
    if (abandon) destinations.get(logger)?.destroy();
    process.exit(code);
  };
  if (waitMs <= 0) return go(true);
  logger.flush(() => go(false));
  setTimeout(() => go(true), waitMs).unref();
}

/** A logger that drops everything: for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
