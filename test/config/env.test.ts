import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envShape, loadEnv, parseEnv } from '../../src/app/env.js';
import { SECRET_VARIABLES } from '../../src/config/env.js';
import { clientOptionsFromEnv } from '../../src/exchange/client-options.js';
import { ConfigError } from '../../src/errors.js';
import { ROOT } from '../e2e/daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

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
    expect(env).toMatchObject({
      EXCHANGE_TIMEOUT_MS: 10_000,
      EXCHANGE_MAX_RESPONSE_BYTES: 8 * 1024 * 1024,
      EXCHANGE_RATE_LIMIT: 10,
      EXCHANGE_CANCEL: true,
    });
    expect(env.EXCHANGE_BASE_URL).toBeUndefined();
    expect(() => clientOptionsFromEnv(env)).toThrow(/EXCHANGE_BASE_URL: required/);
  });

  it('turns variables into client options; empty values count as unset', () => {
    const env = parseEnv({
      EXCHANGE_BASE_URL: 'http://127.0.0.1:8080',
      EXCHANGE_API_KEY: 'k',
      EXCHANGE_API_SECRET: 's',
      EXCHANGE_TIMEOUT_MS: '2500',
      EXCHANGE_MAX_RESPONSE_BYTES: '65536',
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
      maxResponseBytes: 65536,
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
    const dir = tempDir('env');
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

const secretsDir = tempDir('secret-files');

const SECRET = 'hunter2-very-secret-value';

describe('secrets from files (NAME_FILE)', () => {
  it('reads every secret variable from its _FILE, without the trailing newline', () => {
    expect(SECRET_VARIABLES).toEqual(expect.arrayContaining(['EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET']));
    // What the other variables' rules need besides the secrets (a Telegram token needs its chats).
    const source: Record<string, string> = { TELEGRAM_CHAT_ID: '1' };
    // A secret that is a URL (a Discord webhook's) must still be one.
    const value = (name: string) => `${name.endsWith('_URL') ? 'https://example.invalid/' : ''}${name}-${SECRET}`;
    for (const name of SECRET_VARIABLES) {
      const file = join(secretsDir, name);
      writeFileSync(file, `${value(name)}\n`);
      source[`${name}_FILE`] = file;
    }
    const env = parseEnv(source) as Record<string, unknown>;
    for (const name of SECRET_VARIABLES) expect(env[name]).toBe(value(name));
  });

  it('names the variable and the file on each problem, never the content', () => {
    const full = join(secretsDir, 'full');
    writeFileSync(full, SECRET);
    const empty = join(secretsDir, 'empty');
    writeFileSync(empty, '\n');
    const found = problems({
      EXCHANGE_API_KEY_FILE: join(secretsDir, 'missing'),
      EXCHANGE_API_SECRET_FILE: empty,
    });
    expect(found).toEqual([
      `EXCHANGE_API_KEY_FILE: cannot read ${join(secretsDir, 'missing')} (ENOENT)`,
      `EXCHANGE_API_SECRET_FILE: ${empty} is empty`,
    ]);
    const both = problems({ EXCHANGE_API_SECRET: 'inline', EXCHANGE_API_SECRET_FILE: full, EXCHANGE_API_KEY: 'k' });
    expect(both).toEqual([
      'EXCHANGE_API_SECRET_FILE: set either EXCHANGE_API_SECRET or EXCHANGE_API_SECRET_FILE, not both',
    ]);
    // A secret read from a file stays out of the messages of other problems too.
    const other = problems({ EXCHANGE_API_SECRET_FILE: full, MODE: 'live' });
    expect(other.join('\n')).not.toContain(SECRET);
    expect(other).toContain('EXCHANGE_API_KEY: required when EXCHANGE_API_SECRET is set');
  });

  it.runIf(process.getuid?.() !== 0)('says when the file cannot be read for its permissions', () => {
    const locked = join(secretsDir, 'locked');
    writeFileSync(locked, SECRET);
    chmodSync(locked, 0o000);
    expect(problems({ EXCHANGE_API_KEY: 'k', EXCHANGE_API_SECRET_FILE: locked })).toEqual([
      `EXCHANGE_API_SECRET_FILE: cannot read ${locked} (EACCES)`,
    ]);
  });
});

describe('.env.example', () => {
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  const listed = new Set([...example.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));

  it('lists every variable, and NAME_FILE for every secret', () => {
    for (const name of Object.keys(envShape)) expect(listed, name).toContain(name);
    for (const name of SECRET_VARIABLES) expect(listed, `${name}_FILE`).toContain(`${name}_FILE`);
  });

  it('holds no secret value and parses as it is', () => {
    for (const name of SECRET_VARIABLES) expect(example).toMatch(new RegExp(`^# ${name}=$`, 'm'));
    const values = Object.fromEntries(
      [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)]
        .filter((m) => !m[1]!.endsWith('_FILE'))
        .map((m) => [m[1], m[2]]),
    ) as Record<string, string>;
    expect(() => parseEnv(values)).not.toThrow();
  });
});

describe('README', () => {
  it('points to the configuration reference, which documents every variable', () => {
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('](docs/configuration.md)');
    const reference = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    for (const name of Object.keys(envShape)) expect(reference, name).toContain(`\`${name}\``);
  });
});
