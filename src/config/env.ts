/**
 * The process environment (and .env), validated once with one zod schema. Each area contributes a shape
 * (EXCHANGE_* below); later areas add theirs to `envShape` so that `Env` stays the one type of the
 * environment. Errors name the variable and, except for secrets, what it held.
 */
import { config as loadDotenv } from 'dotenv';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { ExchangeClientOptions } from '../exchange/client.js';

/** Variables whose values never appear in an error or a log line. */
const SECRET_VARIABLES = new Set(['EXCHANGE_API_SECRET', 'EXCHANGE_API_KEY']);

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

/** Every area's variables; extend here (`...storeEnv`) rather than writing a second schema. */
export const envShape = { ...exchangeEnv };

export const EnvSchema = z.object(envShape).superRefine((env, ctx) => {
  const hasKey = env.EXCHANGE_API_KEY !== undefined;
  if (hasKey !== (env.EXCHANGE_API_SECRET !== undefined)) {
    const [missing, present] = hasKey
      ? ['EXCHANGE_API_SECRET', 'EXCHANGE_API_KEY']
      : ['EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET'];
    ctx.addIssue({ code: 'custom', path: [missing], message: `required when ${present} is set` });
  }
});
export type Env = z.infer<typeof EnvSchema>;

/** Validates a set of variables (no .env, no process.env): each problem names the variable. */
export function parseEnv(source: Readonly<Record<string, string | undefined>>): Env {
  const result = EnvSchema.safeParse(source);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? 'environment');
    const raw = source[name];
    const shown = raw === undefined || SECRET_VARIABLES.has(name) ? '' : `, got '${raw}'`;
    return `${name}: ${issue.message}${shown}`;
  });
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
