/**
 * The base of every error the bot raises on purpose: a stable `code` that scripts and tests can match,
 * a message a user can act on, and the context (endpoint, symbol, file…) that says where. Every code is
 * listed here, once; what a venue's failure means to the engine is in ports/venue-errors.ts.
 */

export const ERROR_CODES = [
  // Configuration and usage: fatal at start, or the command refuses.
  'E_CONFIG',
  'E_USAGE',
  'E_UNSUPPORTED',
  'E_CREDENTIALS',
  'E_STRATEGY_MODULE',
  // A strategy hook failed: its instance pauses.
  'E_STRATEGY',
  // The venue (ports/venue-errors.ts gives each its meaning).
  'E_EXCHANGE',
  'E_AUTH',
  'E_NETWORK',
  'E_TIMEOUT',
  'E_HTTP',
  'E_RATE_LIMIT',
  'E_RESPONSE_SHAPE',
  'E_OUTCOME_UNKNOWN',
  'E_INVALID_REQUEST',
  // The engine and its journal.
  'E_ENGINE_STATE',
  'E_RECONCILE',
  // An orders poll failed (reported once per incident by the job that runs it).
  'E_POLL',
  'E_INTERRUPTED',
  'E_DUPLICATE_ID',
  'E_DB_OPEN',
  'E_DB_VERSION',
  // Another daemon holds the journal's lock (store/journal-lock.ts).
  'E_DB_LOCKED',
  'E_POLL_INCOMPLETE',
  // A live start on an empty journal found open orders on the account (--adopt-open-orders, or cancel them).
  'E_FOREIGN_ORDERS',
  // The simulated exchange, recordings, backtests.
  'E_SIM_CONFIG',
  'E_SIM_LISTEN',
  'E_RECORDING',
  'E_CANDLES',
  'E_BACKTEST_DATA',
  'E_NO_PAIR_RULES',
  'E_OUTPUT_EXISTS',
  'E_BACKTEST_ACCOUNTING',
  'E_SWEEP',
  // Operator actions (operator/actions.ts; the control API and the chat answer with them).
  'E_UNKNOWN_INSTANCE',
  'E_UNKNOWN_ORDER',
  'E_NOT_RUNNING',
  'E_INSTANCE_STATE',
  'E_NOT_CANCELLABLE',
  'E_CANCEL_FAILED',
  'E_RELOAD_INVALID',
  'E_RELOAD_NEEDS_RESTART',
  'E_STILL_UNAUTHORIZED',
  'E_KILL_SWITCH_FILE',
  'E_EXIT_REFUSED',
  // Nothing above: a bug or a library's own error.
  'E_UNEXPECTED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

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
