/**
 * The base of every error the bot raises on purpose: a stable `code` that scripts and tests can match,
 * a message a user can act on, and the context (endpoint, symbol, file…) that says where. Every code is
 * listed here, once, with the HTTP status the daemon's API answers it with (the code itself goes in the body),
 * so a new code does not compile until it has one; what a venue's failure means to the engine is in
 * ports/venue-errors.ts.
 */

export type HttpErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503 | 504;

export const ERROR_STATUS = {
  // Configuration and usage: fatal at start, or the command refuses.
  E_CONFIG: 500,
  E_USAGE: 400,
  E_UNSUPPORTED: 400,
  E_CREDENTIALS: 502,
  E_STRATEGY_MODULE: 500,
  // A strategy hook failed: its instance pauses.
  E_STRATEGY: 500,
  // The venue (ports/venue-errors.ts gives each its meaning).
  E_EXCHANGE: 502,
  E_AUTH: 502,
  E_NETWORK: 502,
  E_TIMEOUT: 504,
  E_HTTP: 502,
  E_RATE_LIMIT: 503,
  E_RESPONSE_SHAPE: 502,
  E_OUTCOME_UNKNOWN: 502,
  E_INVALID_REQUEST: 422,
  // The engine and its journal.
  E_ENGINE_STATE: 500,
  E_RECONCILE: 502,
  // An orders poll failed (reported once per incident by the job that runs it).
  E_POLL: 502,
  E_INTERRUPTED: 503,
  E_DUPLICATE_ID: 500,
  E_DB_OPEN: 500,
  E_DB_VERSION: 500,
  // The journal could not be backed up before its migration (nothing was changed).
  E_DB_BACKUP: 500,
  // Another daemon holds the journal's lock (store/journal-lock.ts).
  E_DB_LOCKED: 409,
  E_POLL_INCOMPLETE: 502,
  // A live start on an empty journal found open orders on the account (--adopt-open-orders, or cancel them).
  E_FOREIGN_ORDERS: 409,
  // The simulated exchange, recordings, backtests.
  E_SIM_CONFIG: 500,
  E_SIM_LISTEN: 500,
  E_RECORDING: 422,
  E_CANDLES: 422,
  E_BACKTEST_DATA: 422,
  E_NO_PAIR_RULES: 422,
  E_OUTPUT_EXISTS: 409,
  E_BACKTEST_ACCOUNTING: 500,
  E_SWEEP: 500,
  // Operator actions (operator/actions.ts; the control API and the chat answer with them).
  E_UNKNOWN_INSTANCE: 404,
  E_UNKNOWN_ORDER: 404,
  E_NOT_RUNNING: 503,
  E_INSTANCE_STATE: 409,
  E_NOT_CANCELLABLE: 409,
  E_CANCEL_FAILED: 502,
  E_RELOAD_INVALID: 422,
  E_RELOAD_NEEDS_RESTART: 409,
  E_STILL_UNAUTHORIZED: 502,
  E_KILL_SWITCH_FILE: 500,
  E_EXIT_REFUSED: 409,
  E_ENTRY_REFUSED: 409,
  // The daemon's HTTP face refusing a request (api/).
  E_BAD_REQUEST: 400,
  E_UNAUTHORIZED: 401,
  E_FORBIDDEN: 403,
  E_NOT_FOUND: 404,
  E_TOO_LARGE: 413,
  E_TOO_MANY_FAILURES: 429,
  E_TOO_MANY_STREAMS: 503,
  E_INTERNAL: 500,
  // A notification channel could not deliver (notify/http-post.ts).
  E_NOTIFY_DELIVERY: 502,
  // Nothing above: a bug or a library's own error.
  E_UNEXPECTED: 500,
} as const satisfies Record<`E_${string}`, HttpErrorStatus>;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class BotError extends Error {
  readonly code: ErrorCode;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.context = options.context ?? {};
  }
}

/** A configuration problem: fatal at start. Each problem names the file and the JSON path. */
export class ConfigError extends BotError {
  readonly problems: readonly string[];
  constructor(problems: readonly string[], options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
    super('E_CONFIG', problems.join('\n'), options);
    this.problems = problems;
  }
}

/** A strategy hook failed (threw, rejected, overran its time limit, or left state that is not JSON): its instance pauses. */
export class StrategyError extends BotError {
  constructor(message: string, options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
    super('E_STRATEGY', message, options);
  }
}

/** The stable code of anything thrown: a BotError's own, E_UNEXPECTED for everything else. */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof BotError ? err.code : 'E_UNEXPECTED';
}

/** One line for a user: code and message (a venue error's carries the endpoint, HTTP status, exchange code and requestId). */
export function describeError(err: unknown): string {
  if (err instanceof ConfigError) return `${err.code}: ${err.problems.join('; ')}`;
  if (err instanceof BotError) return `${err.code}: ${err.message}`.replace(/\s*\n\s*/g, '; ');
  const message = err instanceof Error ? err.message : String(err);
  return `E_UNEXPECTED: ${message}`.replace(/\s*\n\s*/g, '; ');
}
