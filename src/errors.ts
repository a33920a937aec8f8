/**
 * The base of every error the bot raises on purpose: a stable `code` that scripts and tests can match,
 * a message a user can act on, and the context (endpoint, symbol, file…) that says where.
 */
export class BotError extends Error {
  readonly code: string;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: { cause?: unknown; context?: Record<string, unknown> } = {}) {
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
