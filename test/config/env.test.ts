import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientOptionsFromEnv, loadEnv, parseEnv } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';

function problems(source: Record<string, string>): string[] {
  try {
    parseEnv(source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('environment', () => {
  it('has defaults for everything but the exchange address and keys', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({ EXCHANGE_TIMEOUT_MS: 10_000, EXCHANGE_RATE_LIMIT: 10, EXCHANGE_CANCEL: true });
    expect(env.EXCHANGE_BASE_URL).toBeUndefined();
    expect(() => clientOptionsFromEnv(env)).toThrow(/EXCHANGE_BASE_URL: required/);
  });

  it('turns variables into client options; empty values count as unset', () => {
    const env = parseEnv({
      EXCHANGE_BASE_URL: 'http://127.0.0.1:8080',
      EXCHANGE_API_KEY: 'k',
      EXCHANGE_API_SECRET: 's',
      EXCHANGE_TIMEOUT_MS: '2500',
      EXCHANGE_RATE_LIMIT: '2.5',
      EXCHANGE_RETRY_ATTEMPTS: '',
      EXCHANGE_SERVER_TIME: 'true',
      EXCHANGE_CANCEL: '0',
      UNRELATED: 'x',
    });
    expect(clientOptionsFromEnv(env)).toEqual({
      baseUrl: 'http://127.0.0.1:8080',
      apiKey: 'k',
      apiSecret: 's',
      timeoutMs: 2500,
      rateLimit: { requestsPerSecond: 2.5, burst: 3 },
      retry: { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5000 },
      serverTimeOffset: true,
      cancel: false,
    });
  });

  it('names each bad variable and what it held, but never a secret value', () => {
    const found = problems({ EXCHANGE_BASE_URL: 'ftp://x', EXCHANGE_TIMEOUT_MS: 'soon', EXCHANGE_CANCEL: 'maybe' });
    expect(found).toEqual([
      "EXCHANGE_BASE_URL: expected an http(s) URL, got 'ftp://x'",
      "EXCHANGE_TIMEOUT_MS: expected a positive integer, got 'soon'",
      expect.stringMatching(/^EXCHANGE_CANCEL: .*, got 'maybe'$/),
    ]);
    const secret = problems({ EXCHANGE_API_SECRET: 'hunter2-secret' });
    expect(secret).toEqual(['EXCHANGE_API_KEY: required when EXCHANGE_API_SECRET is set']);
    expect(secret.join()).not.toContain('hunter2');
    expect(problems({ EXCHANGE_API_KEY: 'k', EXCHANGE_API_SECRET: '' })).toEqual([
      'EXCHANGE_API_SECRET: required when EXCHANGE_API_KEY is set',
    ]);
  });

  it('loads a .env file without overriding variables already set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'env-'));
    writeFileSync(join(dir, '.env'), 'EXCHANGE_TIMEOUT_MS=4321\nEXCHANGE_RETRY_ATTEMPTS=9\n');
    const saved = { ...process.env };
    try {
      delete process.env.EXCHANGE_TIMEOUT_MS;
      process.env.EXCHANGE_RETRY_ATTEMPTS = '2';
      const env = loadEnv({ path: join(dir, '.env') });
      expect(env.EXCHANGE_TIMEOUT_MS).toBe(4321);
      expect(env.EXCHANGE_RETRY_ATTEMPTS).toBe(2);
    } finally {
      process.env = saved;
    }
  });
});
