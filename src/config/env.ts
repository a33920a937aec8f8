/**
 * The process environment (and .env), validated once with one zod schema. Each area contributes a shape
 * (EXCHANGE_* below); later areas add theirs to `envShape` so that `Env` stays the one type of the
 * environment. Errors name the variable and, except for secrets, what it held.
 */
import { statSync } from 'node:fs';
import { config as loadDotenv } from 'dotenv';
import { cronProblem } from '../clocks/cron-schedule.js';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { ExchangeClientOptions } from '../exchange/client.js';
import { isNoticeKind, LEVELS, NOTICE_KINDS, type NoticeKind } from '../notify/event-kinds.js';
import { readSecretFiles } from './secret-files.js';

/**
 * Variables whose values never appear in an error or a log line. Each may also be given as NAME_FILE, a file
 * holding the value (Docker and Kubernetes secrets): list a new secret here and it gets both.
 */
export const SECRET_VARIABLES: readonly string[] = [
  'EXCHANGE_API_KEY',
  'EXCHANGE_API_SECRET',
  'API_TOKEN',
  'TELEGRAM_BOT_TOKEN',
  'NOTIFY_WEBHOOK_SECRET',
  'DISCORD_WEBHOOK_URL',
];

/** An unset variable and an empty one (`KEY=` in .env) mean the same: not given. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
}

function withDefault<T extends z.ZodType>(schema: T, fallback: z.input<T>) {
  return z.preprocess((v) => (v === undefined || v === '' ? fallback : v), schema);
}

const positiveInt = z.coerce
  .number({ error: 'expected a positive integer' })
  .int('expected a positive integer')
  .positive('expected a positive integer');
const positiveNumber = z.coerce.number({ error: 'expected a positive number' }).positive('expected a positive number');
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

const exchangeEnv = {
  /** Exchange (or simulated exchange) origin, e.g. https://api.example.com or http://127.0.0.1:8080. */
  EXCHANGE_BASE_URL: optional(z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' })),
  EXCHANGE_API_KEY: optional(z.string()),
  EXCHANGE_API_SECRET: optional(z.string()),
  EXCHANGE_TIMEOUT_MS: withDefault(positiveInt, '10000'),
  /** Requests per second (token bucket). */
  EXCHANGE_RATE_LIMIT: withDefault(positiveNumber, '10'),
  /** Requests allowed at once; defaults to the per-second rate. */
  EXCHANGE_RATE_BURST: optional(positiveInt),
  EXCHANGE_RETRY_ATTEMPTS: withDefault(positiveInt, '3'),
  EXCHANGE_RETRY_BASE_MS: withDefault(positiveInt, '200'),
  EXCHANGE_RETRY_MAX_MS: withDefault(positiveInt, '5000'),
  /** Correct request timestamps by the server's Date header. */
  EXCHANGE_SERVER_TIME: withDefault(flag, 'false'),
  /** Whether the venue supports order cancel. */
  EXCHANGE_CANCEL: withDefault(flag, 'true'),
};

const cron = z.string().refine((v) => cronProblem(v) === undefined, {
  error: 'expected a cron expression ([second] minute hour day month weekday)',
});

const assetCode = /^[A-Z0-9]{1,20}$/;
const amount = /^(0|[1-9]\d*)(\.\d+)?$/;

/** `USDT=10000,BTC=0.5`: starting paper balances by asset code, plain decimals. */
const balanceList = z.string().transform((text, ctx): Record<string, string> => {
  const balances: Record<string, string> = {};
  for (const item of text.split(',').map((s) => s.trim())) {
    const [code = '', value = '', extra] = item.split('=').map((s) => s.trim());
    if (extra !== undefined || !assetCode.test(code) || !amount.test(value)) {
      ctx.addIssue({ code: 'custom', message: 'expected ASSET=AMOUNT[,ASSET=AMOUNT…] (e.g. USDT=10000,BTC=0.5)' });
      return z.NEVER;
    }
    balances[code] = value;
  }
  return balances;
});

const daemonEnv = {
  /** paper (default): the simulated exchange; live: the exchange at EXCHANGE_BASE_URL, with the keys. */
  MODE: withDefault(z.enum(['paper', 'live'], { error: "expected 'paper' or 'live'" }), 'paper'),
  DB_PATH: withDefault(z.string(), 'data/bot.db'),
  /** Strategy files (one bot instance each): a directory of *.json or one file. */
  CONFIG_DIR: withDefault(z.string(), 'config'),
  /** Where strategy modules live (default: the project's strategies/). */
  STRATEGIES_DIR: optional(z.string()),
  /** Paper on recorded data: recording files or directories, comma-separated (default: data/samples for the symbols). */
  PAPER_DATA: optional(
    z.string().transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ),
  /** Recorded time per wall-clock time when replaying (60: one recorded minute per second). */
  PAPER_SPEED: withDefault(positiveNumber, '60'),
  /** One recorded tick per market-watch request instead of by time (parity tests). */
  PAPER_LOCKSTEP: withDefault(flag, 'false'),
  /**
   * Paper on recordings: the data-time delay before an order reaches the simulated book, in ms (default one
   * step of the data, as a backtest's --latency-ms: an order never fills at the price it was decided on).
   */
  PAPER_LATENCY_MS: optional(
    z.coerce
      .number({ error: 'expected a number of milliseconds >= 0' })
      .min(0, 'expected a number of milliseconds >= 0'),
  ),
  /** Starting balances of a new paper account (default: the simulated exchange's); a resumed one keeps its own. */
  PAPER_BALANCES: optional(balanceList),
  /** Start a new paper account: the database is archived first (as `bot run --fresh`). */
  PAPER_FRESH: withDefault(flag, 'false'),
  /**
   * Live: on an empty journal, adopt the account's open orders as external and trade (as `bot run
   * --adopt-open-orders`); without it such a start is refused. For one start only.
   */
  ADOPT_OPEN_ORDERS: withDefault(flag, 'false'),
  /** How many archived paper databases to keep next to DB_PATH (older ones are deleted when one is archived). */
  PAPER_ARCHIVES_KEPT: withDefault(
    z.coerce
      .number({ error: 'expected a whole number >= 0' })
      .int('expected a whole number >= 0')
      .nonnegative('expected a whole number >= 0'),
    '5',
  ),
  /** New orders stop while this file exists. */
  KILL_SWITCH_FILE: withDefault(z.string(), 'data/KILL'),
  LOG_LEVEL: withDefault(
    z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      error: 'expected one of trace, debug, info, warn, error, fatal, silent',
    }),
    'info',
  ),
  /** json or pretty: overrides the guess from the terminal (pretty on a terminal, JSON lines otherwise). */
  LOG_FORMAT: optional(z.enum(['json', 'pretty'], { error: 'expected json or pretty' })),
  /** Cron schedule of the open-orders and trades poll. */
  ORDERS_POLL: withDefault(cron, '*/5 * * * * *'),
  /** Cron schedule of the pair-config and balance refresh. */
  REFRESH: withDefault(cron, '0 * * * * *'),
  /** How long the orderly stop on SIGTERM/SIGINT/SIGHUP may take before the process exits anyway (inside Docker's 10 s). */
  STOP_TIMEOUT_MS: withDefault(positiveInt, '8000'),
  /** Consecutive venue errors that open the circuit breaker (no new orders meanwhile). */
  CIRCUIT_BREAKER_ERRORS: withDefault(positiveInt, '5'),
  /** How long the breaker keeps new orders back after it opens (doubling while the venue stays down). */
  CIRCUIT_BREAKER_PAUSE_MS: withDefault(positiveInt, '30000'),
  /** How long an order whose create had no answer may take to appear on the venue before it counts as not placed. */
  RECONCILE_WINDOW_MS: withDefault(positiveInt, '60000'),
};

const port = z.coerce
  .number({ error: 'expected a port number (0 to 65535; 0 turns the listener off)' })
  .int('expected a port number (0 to 65535; 0 turns the listener off)')
  .min(0, 'expected a port number (0 to 65535; 0 turns the listener off)')
  .max(65_535, 'expected a port number (0 to 65535; 0 turns the listener off)');

const apiEnv = {
  /** The daemon's HTTP listener (health, metrics, control API, dashboard). */
  API_HOST: withDefault(z.string().min(1), '127.0.0.1'),
  /** 0 turns the listener off. */
  API_PORT: withDefault(port, '8080'),
  /** Bearer token of the control API and the dashboard; required when API_HOST is not a loopback address. */
  API_TOKEN: optional(z.string().min(16, 'expected at least 16 characters')),
  /** Balances in /metrics (off by default: metrics are served without a token). */
  METRICS_BALANCES: withDefault(flag, 'false'),
  /**
   * A listener of its own for /healthz, /readyz and /metrics (no control API, no dashboard), e.g. 0.0.0.0:9464
   * in a container so that probes and Prometheus reach it from outside; 0 (default) turns it off.
   */
  METRICS_HOST: withDefault(z.string().min(1), '127.0.0.1'),
  METRICS_PORT: withDefault(port, '0'),
};

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

/** `all` (default) or a comma-separated list of the kinds the notifier knows. */
const kindList = withDefault(
  z.string().transform((text, ctx): 'all' | NoticeKind[] => {
    const items = text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    if (items.length === 1 && items[0] === 'all') return 'all';
    const kinds = items.filter(isNoticeKind);
    const unknown = items.filter((k) => !isNoticeKind(k));
    if (kinds.length === 0 || unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `expected 'all' or kinds from: ${NOTICE_KINDS.join(', ')}${unknown.length > 0 ? ` (unknown: ${unknown.join(', ')})` : ''}`,
      });
      return z.NEVER;
    }
    return kinds;
  }),
  'all',
);
const level = withDefault(z.enum(LEVELS, { error: `expected one of ${LEVELS.join(', ')}` }), 'info');
/** `HH:MM` in UTC, or `off`. */
const utcTime = z.string().transform((text, ctx): number | undefined => {
  if (text === 'off') return undefined;
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  if (!m) {
    ctx.addIssue({ code: 'custom', message: "expected HH:MM (UTC, e.g. 00:00) or 'off'" });
    return z.NEVER;
  }
  return Number(m[1]) * 60 + Number(m[2]);
});
const chatIds = z.string().transform((text, ctx): string[] => {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0 || ids.some((id) => !/^-?\d+$/.test(id))) {
    ctx.addIssue({ code: 'custom', message: 'expected chat ids (integers), comma-separated' });
    return z.NEVER;
  }
  return ids;
});

const notifyEnv = {
  /** Generic webhook: JSON POSTed here, signed with NOTIFY_WEBHOOK_SECRET. */
  NOTIFY_WEBHOOK_URL: optional(httpUrl),
  NOTIFY_WEBHOOK_SECRET: optional(z.string()),
  NOTIFY_WEBHOOK_EVENTS: kindList,
  NOTIFY_WEBHOOK_LEVEL: level,
  TELEGRAM_BOT_TOKEN: optional(z.string()),
  /** Chats that get notifications and whose commands are answered. */
  TELEGRAM_CHAT_ID: optional(chatIds),
  TELEGRAM_API_URL: withDefault(httpUrl, 'https://api.telegram.org'),
  TELEGRAM_EVENTS: kindList,
  TELEGRAM_LEVEL: level,
  /** Answer chat commands (long polling getUpdates). */
  TELEGRAM_COMMANDS: withDefault(flag, 'true'),
  /** Discord incoming webhook (its URL holds its token: a secret). */
  DISCORD_WEBHOOK_URL: optional(httpUrl),
  DISCORD_EVENTS: kindList,
  DISCORD_LEVEL: level,
  /** UTC time of the daily summary, or off. */
  NOTIFY_DAILY_SUMMARY: withDefault(utcTime, '00:00'),
  /** How long the first notification of a burst waits for others to join it in one message. */
  NOTIFY_GROUP_MS: withDefault(z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'), '3000'),
  /** Notifications waiting per channel at most; beyond it the oldest are dropped. */
  NOTIFY_QUEUE_SIZE: withDefault(positiveInt, '200'),
  /** How long a message is retried (with a growing backoff, 1 s to 30 s apart) before it is dropped. */
  NOTIFY_RETRY_FOR_MS: withDefault(
    z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'),
    String(60 * 60 * 1000),
  ),
};

/** Every area's variables; extend here (`...storeEnv`) rather than writing a second schema. */
export const envShape = { ...exchangeEnv, ...daemonEnv, ...apiEnv, ...notifyEnv };

export const EnvSchema = z.object(envShape).superRefine((env, ctx) => {
  const missing = new Set<string>();
  const hasKey = env.EXCHANGE_API_KEY !== undefined;
  if (hasKey !== (env.EXCHANGE_API_SECRET !== undefined)) {
    const [absent, present] = hasKey
      ? ['EXCHANGE_API_SECRET', 'EXCHANGE_API_KEY']
      : ['EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET'];
    missing.add(absent);
    ctx.addIssue({ code: 'custom', path: [absent], message: `required when ${present} is set` });
  }
  if (env.API_PORT !== 0 && env.API_TOKEN === undefined && !isLoopbackHost(env.API_HOST))
    ctx.addIssue({
      code: 'custom',
      path: ['API_TOKEN'],
      message: `required when API_HOST is not a loopback address (API_HOST=${env.API_HOST}): anyone who can reach it could steer the bot`,
    });
  if (env.NOTIFY_WEBHOOK_URL !== undefined && env.NOTIFY_WEBHOOK_SECRET === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['NOTIFY_WEBHOOK_SECRET'],
      message: 'required when NOTIFY_WEBHOOK_URL is set (receivers verify the signature with it)',
    });
  if ((env.TELEGRAM_BOT_TOKEN === undefined) !== (env.TELEGRAM_CHAT_ID === undefined)) {
    const [absent, present] =
      env.TELEGRAM_BOT_TOKEN === undefined
        ? ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_CHAT_ID']
        : ['TELEGRAM_CHAT_ID', 'TELEGRAM_BOT_TOKEN'];
    ctx.addIssue({ code: 'custom', path: [absent], message: `required when ${present} is set` });
  }
  if (env.MODE === 'live') {
    for (const name of ['EXCHANGE_BASE_URL', 'EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET'] as const) {
      if (env[name] === undefined && !missing.has(name))
        ctx.addIssue({ code: 'custom', path: [name], message: 'required when MODE=live' });
    }
  }
});
export type Env = z.infer<typeof EnvSchema>;

/**
 * Validates a set of variables (no .env, no process.env), secrets read from their NAME_FILE where given: each
 * problem names the variable (and the file).
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>>): Env {
  const secrets = readSecretFiles(source, SECRET_VARIABLES);
  const merged = { ...source, ...secrets.values };
  const result = EnvSchema.safeParse(merged);
  if (result.success && secrets.problems.length === 0) return result.data;
  const problems = [...secrets.problems];
  for (const issue of result.error?.issues ?? []) {
    const name = String(issue.path[0] ?? 'environment');
    if (secrets.failed.has(name)) continue;
    const raw = merged[name];
    const shown = raw === undefined || SECRET_VARIABLES.includes(name) ? '' : `, got '${raw}'`;
    problems.push(`${name}: ${issue.message}${shown}`);
  }
  throw new ConfigError(problems);
}

/**
 * Loads `.env` (from the working directory unless `path` is given) into process.env without overriding what
 * is already set, then validates process.env.
 */
export function loadEnv(options: { path?: string } = {}): Env {
  loadDotenv({ quiet: true, ...(options.path === undefined ? {} : { path: options.path }) });
  return parseEnv(process.env);
}

/**
 * A warning when the `.env` file (which may hold the API secret) can be read by other users of the machine:
 * its group or others have the read bit. Undefined when it is private or absent (or on a system without modes).
 */
export function dotenvExposure(path = '.env'): string | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return undefined;
  }
  if (process.platform === 'win32' || (mode & 0o044) === 0) return undefined;
  const octal = (mode & 0o777).toString(8).padStart(3, '0');
  return `${path} is readable by other users (mode ${octal}) and may hold the API secret: run chmod 600 ${path}`;
}

/** The exchange client's options from the environment; the base URL is required here. */
export function clientOptionsFromEnv(env: Env): ExchangeClientOptions {
  if (env.EXCHANGE_BASE_URL === undefined) {
    throw new ConfigError(['EXCHANGE_BASE_URL: required to talk to an exchange (e.g. http://127.0.0.1:8080)']);
  }
  return {
    baseUrl: env.EXCHANGE_BASE_URL,
    apiKey: env.EXCHANGE_API_KEY,
    apiSecret: env.EXCHANGE_API_SECRET,
    timeoutMs: env.EXCHANGE_TIMEOUT_MS,
    rateLimit: {
      requestsPerSecond: env.EXCHANGE_RATE_LIMIT,
      burst: env.EXCHANGE_RATE_BURST ?? Math.max(1, Math.ceil(env.EXCHANGE_RATE_LIMIT)),
    },
    retry: {
      maxAttempts: env.EXCHANGE_RETRY_ATTEMPTS,
      baseDelayMs: env.EXCHANGE_RETRY_BASE_MS,
      maxDelayMs: env.EXCHANGE_RETRY_MAX_MS,
    },
    serverTimeOffset: env.EXCHANGE_SERVER_TIME,
    cancel: env.EXCHANGE_CANCEL,
  };
}

/** The values of every secret variable that is set: what no message, log line or record may contain. */
export function secretValues(env: Env): string[] {
  const values: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const value: unknown = (env as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') values.push(value);
  }
  return values;
}
