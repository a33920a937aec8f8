/**
 * The process environment (and .env): the variables of the exchange, the daemon and the listeners, the field
 * types every area's variables are made of, and the parsing (errors name the variable and, except for secrets,
 * what it held). Each area owns its variables (notify/env.ts); app/env.ts puts them together in one schema, so
 * that `Env` stays the one type of the environment.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Dotenv from 'dotenv';
import { cronProblem } from '../clocks/cron-schedule.js';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
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

/** The cron schedules of the daemon's own jobs (ORDERS_POLL, REFRESH); a backtest's replay fires the same. */
export interface DaemonSchedule {
  /** The open-orders and trades poll (default every 5 s). */
  ordersPoll: string;
  /** Pair configs and balances (default every minute). */
  refresh: string;
}

export const DEFAULT_DAEMON_SCHEDULE: Readonly<DaemonSchedule> = {
  ordersPoll: '*/5 * * * * *',
  refresh: '0 * * * * *',
};

/** What docs/configuration.md says of a variable: what it does, its default, or what leaving it unset means. */
export interface EnvDoc {
  description: string;
  /** The value taken when it is unset. */
  default?: string;
  /** What unset means when it is not a value (optional variables). */
  unset?: string;
}

/**
 * Every variable's documentation, by its schema: `optional` and `withDefault` record it, so a variable cannot be
 * declared without it, and src/cli/reference.ts writes docs/configuration.md from the schemas.
 */
export const envDocs = z.registry<EnvDoc>();

/** A variable a command reads itself, outside the schemas; the reference lists it beside theirs. */
export interface DirectVariable extends EnvDoc {
  name: string;
  /** Also taken as NAME_FILE, a file holding the value, and never shown. */
  secret?: boolean;
}

/** An unset variable and an empty one (`KEY=` in .env) mean the same: not given. `shown`: what unset means. */
export function optional<T extends z.ZodType>(schema: T, description: string, shown?: string) {
  const variable = z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
  envDocs.add(variable, { description, ...(shown === undefined ? {} : { unset: shown }) });
  return variable;
}

export function withDefault<T extends z.ZodType>(schema: T, fallback: z.input<T>, description: string) {
  const variable = z.preprocess((v) => (v === undefined || v === '' ? fallback : v), schema);
  envDocs.add(variable, { description, default: String(fallback) });
  return variable;
}

export const positiveInt = z.coerce
  .number({ error: 'expected a positive integer' })
  .int('expected a positive integer')
  .positive('expected a positive integer');
export const positiveNumber = z.coerce
  .number({ error: 'expected a positive number' })
  .positive('expected a positive number');
export const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const exchangeEnv = {
  EXCHANGE_BASE_URL: optional(
    z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
    "the exchange's origin (https://api.example.com): where live orders go; on paper, the live market watch to trade on instead of recordings",
  ),
  EXCHANGE_API_KEY: optional(z.string(), 'the API key (live only)'),
  EXCHANGE_API_SECRET: optional(z.string(), 'the API secret (live only): signs every private request, never logged'),
  EXCHANGE_TIMEOUT_MS: withDefault(
    positiveInt,
    '10000',
    "one request's time limit, in ms, from sending to the answer's last byte (an answer trickling in ends there too)",
  ),
  EXCHANGE_MAX_RESPONSE_BYTES: withDefault(
    positiveInt,
    '8388608',
    'the largest answer read, in bytes: a longer one is cut off there and the request fails',
  ),
  EXCHANGE_RATE_LIMIT: withDefault(positiveNumber, '10', 'requests per second (token bucket)'),
  EXCHANGE_RATE_BURST: optional(positiveInt, 'requests allowed at once', 'the rate, rounded up'),
  EXCHANGE_RETRY_ATTEMPTS: withDefault(positiveInt, '3', 'attempts of a read (orders are never resent)'),
  EXCHANGE_RETRY_BASE_MS: withDefault(positiveInt, '200', "the reads' first retry delay, in ms (doubling)"),
  EXCHANGE_RETRY_MAX_MS: withDefault(positiveInt, '5000', "the reads' longest retry delay, in ms"),
  EXCHANGE_SERVER_TIME: withDefault(
    flag,
    'false',
    "request timestamps follow the server's clock, from each answer's Date header: a clock minutes ahead or behind, or one that steps while the bot runs, still signs right (a read refused with 401 whose answer moved the estimate is signed again once)",
  ),
  EXCHANGE_CANCEL: withDefault(flag, 'true', 'whether the venue supports order cancel'),
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

export const daemonEnv = {
  MODE: withDefault(
    z.enum(['paper', 'live'], { error: "expected 'paper' or 'live'" }),
    'paper',
    'paper: the embedded simulated exchange, no keys; live: the exchange at EXCHANGE_BASE_URL, with the keys',
  ),
  DB_PATH: withDefault(
    z.string(),
    'data/bot.db',
    'the journal (SQLite): orders, fills, strategy state, events, the paper account; one daemon per file',
  ),
  CONFIG_DIR: withDefault(
    z.string(),
    'config',
    'strategy files (one bot instance each): a directory of *.json or one file',
  ),
  STRATEGIES_DIR: optional(z.string(), 'where strategy modules live (.ts or .js)', "the project's strategies/"),
  PAPER_DATA: optional(
    z.string().transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
    'paper: recordings to replay, files and directories, comma-separated; every configured symbol needs one',
    'the samples in data/samples/ (/app/samples in the image)',
  ),
  PAPER_SPEED: withDefault(
    positiveNumber,
    '60',
    "paper on recordings: recorded time per wall-clock time (60: a recorded minute per second). The daemon's clock is the recording's: ctx.now(), the schedules, risk's daily reset, orders, fills and the journal are in the data's time; log lines are wall-clock times",
  ),
  PAPER_FROM: optional(
    z.string().transform((text, ctx): number => {
      const ms = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : NaN;
      if (Number.isFinite(ms)) return ms;
      ctx.addIssue({
        code: 'custom',
        message: 'expected an ISO date or time (e.g. 2023-03-08 or 2023-03-08T12:00:00Z)',
      });
      return z.NEVER;
    }),
    "paper on recordings: where a new replay starts, an ISO date or time (2023-03-08, 2023-03-08T12:00:00Z); the data before it warms the strategies' candles and indicators up, as a backtest's --from does. A resumed paper account goes on where it stopped; not with PAPER_LOCKSTEP",
    "once the recordings have filled the strategies' longest warm-up",
  ),
  PAPER_LOCKSTEP: withDefault(
    flag,
    'false',
    'paper on recordings: one recorded ticker per market-watch request instead of by time (parity tests)',
  ),
  PAPER_ALLOW_PARTIAL: withDefault(
    flag,
    'false',
    "paper on recordings: replay the complete lines of a truncated or corrupt PAPER_DATA file (one warning says where it breaks) instead of refusing to start (as a backtest's --allow-partial)",
  ),
  PAPER_LATENCY_MS: optional(
    z.coerce
      .number({ error: 'expected a number of milliseconds >= 0' })
      .min(0, 'expected a number of milliseconds >= 0'),
    "paper on recordings: the data-time delay before an order reaches the simulated book, in ms (as a backtest's --latency-ms: an order never fills at the price it was decided on)",
    'one step of the data',
  ),
  PAPER_BALANCES: optional(
    balanceList,
    "a new paper account's starting balances, ASSET=AMOUNT[,ASSET=AMOUNT…]; a resumed one keeps its own",
    'USDT=10000,USDC=10000,BTC=0.5',
  ),
  PAPER_FRESH: withDefault(
    flag,
    'false',
    'true: archive the paper database next to it and start a new account (as bot run --fresh); for one start only',
  ),
  ADOPT_OPEN_ORDERS: withDefault(
    flag,
    'false',
    'live, empty journal, open orders on the account: true journals them as external orders and trades (as bot run --adopt-open-orders); false refuses that start. For one start only',
  ),
  PAPER_ARCHIVES_KEPT: withDefault(
    z.coerce
      .number({ error: 'expected a whole number >= 0' })
      .int('expected a whole number >= 0')
      .nonnegative('expected a whole number >= 0'),
    '5',
    'archived paper databases kept next to DB_PATH (older ones are deleted when one is archived)',
  ),
  KILL_SWITCH_FILE: withDefault(z.string(), 'data/KILL', 'no new orders while this file exists (touch data/KILL)'),
  LOG_LEVEL: withDefault(
    z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      error: 'expected one of trace, debug, info, warn, error, fatal, silent',
    }),
    'info',
    'trace, debug, info, warn, error, fatal or silent',
  ),
  LOG_FORMAT: optional(
    z.enum(['json', 'pretty'], { error: 'expected json or pretty' }),
    'json (one JSON object a line) or pretty (for people)',
    'pretty on a terminal, JSON otherwise',
  ),
  ORDERS_POLL: withDefault(
    cron,
    DEFAULT_DAEMON_SCHEDULE.ordersPoll,
    "cron schedule (UTC, seconds allowed) of the open-orders and trades poll (each instance's market schedule is in its strategy file)",
  ),
  REFRESH: withDefault(cron, DEFAULT_DAEMON_SCHEDULE.refresh, 'cron schedule of the pair-config and balance refresh'),
  STOP_TIMEOUT_MS: withDefault(
    positiveInt,
    '8000',
    "how long the orderly stop on SIGTERM/SIGINT/SIGHUP may take before the process exits anyway, in ms (inside Docker's 10 s)",
  ),
  CIRCUIT_BREAKER_ERRORS: withDefault(
    positiveInt,
    '5',
    'consecutive venue errors that open the circuit breaker (no new orders meanwhile)',
  ),
  CIRCUIT_BREAKER_PAUSE_MS: withDefault(
    positiveInt,
    '30000',
    'how long the breaker holds new orders back after it opens, in ms (doubling while the venue stays down)',
  ),
  RECONCILE_WINDOW_MS: withDefault(
    positiveInt,
    '60000',
    'how long an order whose create got no answer may take to appear on the venue before it counts as not placed, in ms',
  ),
  JOURNAL_LEASE_MS: withDefault(
    positiveInt,
    '30000',
    "the journal's lease, in ms: a daemon silent this long (its heartbeat is renewed every third of it) is taken over by one that reaches the journal by another path, mount or machine",
  ),
};

const port = z.coerce
  .number({ error: 'expected a port number (0 to 65535; 0 turns the listener off)' })
  .int('expected a port number (0 to 65535; 0 turns the listener off)')
  .min(0, 'expected a port number (0 to 65535; 0 turns the listener off)')
  .max(65_535, 'expected a port number (0 to 65535; 0 turns the listener off)');

export const apiEnv = {
  API_HOST: withDefault(
    z.string().min(1),
    '127.0.0.1',
    "the daemon's HTTP listener: health, metrics, the control API and the dashboard",
  ),
  API_PORT: withDefault(port, '8080', "the listener's port; 0 turns it off"),
  API_TOKEN: optional(
    z.string().min(16, 'expected at least 16 characters'),
    'bearer token of the control API and the dashboard (16 characters or more); required when API_HOST is not a loopback address',
  ),
  METRICS_BALANCES: withDefault(flag, 'false', 'balances in /metrics (metrics are served without a token)'),
  METRICS_HOST: withDefault(
    z.string().min(1),
    '127.0.0.1',
    'a listener of its own for /healthz, /readyz and /metrics only (no control API, no dashboard); the image sets 0.0.0.0 so that probes and Prometheus reach it from outside the container',
  ),
  METRICS_PORT: withDefault(
    port,
    '0',
    "that listener's port; 0 turns it off (the image sets 9464); bot healthcheck probes it when set, else API_PORT",
  ),
};

export const httpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' });

/** 127.0.0.0/8, ::1 and localhost: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** The variables config/ owns (the exchange's, the daemon's, the listeners'); notify/ owns its own (notify/env.ts). */
export const coreEnvShape = { ...exchangeEnv, ...daemonEnv, ...apiEnv };
export type CoreEnv = z.infer<z.ZodObject<typeof coreEnvShape>>;

/** What no single variable can say: pairs that go together, and what MODE=live requires. */
export function checkCoreEnv(env: CoreEnv, ctx: z.RefinementCtx): void {
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
  if (env.PAPER_FROM !== undefined && env.PAPER_LOCKSTEP)
    ctx.addIssue({
      code: 'custom',
      path: ['PAPER_FROM'],
      message: 'a replay by time starts there; PAPER_LOCKSTEP=true steps a ticker per request from the start',
    });
  if (env.MODE === 'live') {
    for (const name of ['EXCHANGE_BASE_URL', 'EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET'] as const) {
      if (env[name] === undefined && !missing.has(name))
        ctx.addIssue({ code: 'custom', path: [name], message: 'required when MODE=live' });
    }
  }
}

/**
 * Validates a set of variables against `schema` (no .env, no process.env), secrets read from their NAME_FILE
 * where given: each problem names the variable (and the file). The composition root (app/env.ts) gives the
 * schema of every area's variables.
 */
export function parseEnvWith<T>(schema: z.ZodType<T>, source: Readonly<Record<string, string | undefined>>): T {
  const secrets = readSecretFiles(source, SECRET_VARIABLES);
  const merged = { ...source, ...secrets.values };
  const result = schema.safeParse(merged);
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

/** `require` from this module: dotenv is loaded by the first loadDotenvFile, not by every process importing this
 * module (a backtest and each sweep worker read no .env; loading dotenv cost ~10 ms CPU). */
const requirePackage = createRequire(import.meta.url);

/** Loads `.env` (from the working directory unless `path` is given) into process.env without overriding what is set. */
export function loadDotenvFile(path?: string): void {
  const dotenv = requirePackage('dotenv') as typeof Dotenv;
  dotenv.config({ quiet: true, ...(path === undefined ? {} : { path }) });
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

/** The values of every secret variable that is set: what no message, log line or record may contain. */
export function secretValues(env: object): string[] {
  const values: string[] = [];
  for (const name of SECRET_VARIABLES) {
    const value: unknown = (env as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') values.push(value);
  }
  return values;
}
