/** What the chaos suites share: the daemon's environment against a venue URL, log-line levels, a pause. */
import { join } from 'node:path';
import { daemonEnv, ROOT } from '../e2e/daemon-process.js';
import type { Credentials } from './sim-process.js';

export const CHAOS_STRATEGIES = join(ROOT, 'test/chaos/strategies');

/** A control-API token in the daemon's environment: like the secret, it must never appear in an output. */
export const API_TOKEN = 'chaos-api-token-3f9a1c7e5b2d4f6a8c0e';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The daemon, MODE=live on `url` (the proxy or the simulated exchange), tuned so that faults heal in seconds. */
export function chaosEnv(
  dir: string,
  url: string,
  credentials: Credentials,
  pauseMs: number,
  extra: Record<string, string> = {},
): NodeJS.ProcessEnv {
  return daemonEnv({
    MODE: 'live',
    EXCHANGE_BASE_URL: url,
    EXCHANGE_API_KEY: credentials.apiKey,
    EXCHANGE_API_SECRET: credentials.apiSecret,
    DB_PATH: join(dir, 'bot.db'),
    CONFIG_DIR: join(dir, 'config'),
    STRATEGIES_DIR: CHAOS_STRATEGIES,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    EXCHANGE_TIMEOUT_MS: '800',
    EXCHANGE_RETRY_ATTEMPTS: '2',
    EXCHANGE_RETRY_BASE_MS: '50',
    EXCHANGE_RETRY_MAX_MS: '200',
    EXCHANGE_RATE_LIMIT: '50',
    CIRCUIT_BREAKER_ERRORS: '3',
    CIRCUIT_BREAKER_PAUSE_MS: String(pauseMs),
    RECONCILE_WINDOW_MS: String(pauseMs),
    REFRESH: '*/5 * * * * *',
    API_TOKEN,
    ...extra,
  });
}

/** The pino level of a JSON log line (undefined for anything else). */
export function levelOf(line: string): number | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const level = (JSON.parse(line) as { level?: unknown }).level;
    return typeof level === 'number' ? level : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A churning strategy file: one marketable LIMIT per second, alternating sides, on each of `symbols` (several:
 * one file of `symbols`, so the orders poll reads the account's history once for them all, issue 41).
 */
export function churnFile(name: string, symbols: readonly string[] = ['BTCUSDT']): string {
  return JSON.stringify({
    name,
    strategy: 'chatty',
    ...(symbols.length === 1 ? { symbol: symbols[0] } : { symbols }),
    schedule: '* * * * * *',
    params: { churn: true },
  });
}
