import { pino, type Logger } from 'pino';

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
  /** Human-readable lines (pino-pretty) instead of JSON; defaults to on when stdout is a terminal. */
  pretty?: boolean;
  /** Write to this file descriptor (default 1, stdout; CLI commands that print data use 2). */
  fd?: number;
  /** Write each line before returning (no flush needed before exit); JSON lines only. */
  sync?: boolean;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const fd = options.fd ?? 1;
  const pretty = options.pretty ?? (fd === 1 ? process.stdout.isTTY : process.stderr.isTTY) === true;
  const base = { level, redact: { paths: REDACT, censor: '[redacted]' }, base: undefined };
  if (pretty) {
    return pino({
      ...base,
      transport: {
        target: 'pino-pretty',
        options: { destination: fd, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' },
      },
    });
  }
  return pino(base, pino.destination({ fd, sync: options.sync === true }));
}

/** A logger that drops everything: for tests and benchmarks. */
export const silentLogger: Logger = pino({ level: 'silent' });
