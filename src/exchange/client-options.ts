/** The HTTP client's options from the EXCHANGE_* variables (config/env.ts validates them). */
import type { CoreEnv } from '../config/env.js';
import { ConfigError } from '../errors.js';
import type { ExchangeClientOptions } from './client.js';

/** The base URL is required here. */
export function clientOptionsFromEnv(env: CoreEnv): ExchangeClientOptions {
  if (env.EXCHANGE_BASE_URL === undefined) {
    throw new ConfigError(['EXCHANGE_BASE_URL: required to talk to an exchange (e.g. http://127.0.0.1:8080)']);
  }
  return {
    baseUrl: env.EXCHANGE_BASE_URL,
    apiKey: env.EXCHANGE_API_KEY,
    apiSecret: env.EXCHANGE_API_SECRET,
    timeoutMs: env.EXCHANGE_TIMEOUT_MS,
    maxResponseBytes: env.EXCHANGE_MAX_RESPONSE_BYTES,
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
