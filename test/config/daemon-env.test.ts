/** The daemon's environment variables: defaults, one line per bad value naming the variable, MODE=live's needs. */
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/app/env.js';
import { dotenvExposure } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';
import { planVenue } from '../../src/app/venue-plan.js';
import { tempDir } from '../support/temp-dir.js';

function problems(source: Record<string, string>): readonly string[] {
  try {
    parseEnv(source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('daemon environment', () => {
  it('defaults to paper on the samples with nothing set', () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      MODE: 'paper',
      DB_PATH: 'data/bot.db',
      CONFIG_DIR: 'config',
      PAPER_SPEED: 60,
      PAPER_LOCKSTEP: false,
      KILL_SWITCH_FILE: 'data/KILL',
      LOG_LEVEL: 'info',
      ORDERS_POLL: '*/5 * * * * *',
      REFRESH: '0 * * * * *',
    });
    expect(env.PAPER_DATA).toBeUndefined();
    expect(env.PAPER_BALANCES).toBeUndefined();
    expect(planVenue(env)).toEqual({ mode: 'paper', data: 'recording', speed: 60, lockstep: false });
  });

  it('reads lists and balances', () => {
    const env = parseEnv({
      PAPER_DATA: 'a.jsonl.gz, dir/ ,',
      PAPER_BALANCES: 'USDT=10000, BTC=0.5',
      PAPER_LOCKSTEP: '1',
    });
    expect(env.PAPER_DATA).toEqual(['a.jsonl.gz', 'dir/']);
    expect(env.PAPER_BALANCES).toEqual({ USDT: '10000', BTC: '0.5' });
    expect(env.PAPER_LOCKSTEP).toBe(true);
  });

  it('names every bad variable on its own line, with what it held', () => {
    expect(
      problems({
        MODE: 'real',
        PAPER_SPEED: '-2',
        PAPER_LOCKSTEP: 'maybe',
        PAPER_BALANCES: 'USDT:100',
        LOG_LEVEL: 'loud',
        ORDERS_POLL: 'every 5 s',
        REFRESH: '99 * * * * *',
      }),
    ).toEqual([
      "MODE: expected 'paper' or 'live', got 'real'",
      "PAPER_SPEED: expected a positive number, got '-2'",
      expect.stringMatching(/^PAPER_LOCKSTEP: .*, got 'maybe'$/),
      "PAPER_BALANCES: expected ASSET=AMOUNT[,ASSET=AMOUNT…] (e.g. USDT=10000,BTC=0.5), got 'USDT:100'",
      "LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent, got 'loud'",
      "ORDERS_POLL: expected a cron expression ([second] minute hour day month weekday), got 'every 5 s'",
      "REFRESH: expected a cron expression ([second] minute hour day month weekday), got '99 * * * * *'",
    ]);
  });

  it('PAPER_FROM: an ISO date or time, as epoch ms; anything else or with PAPER_LOCKSTEP named', () => {
    expect(parseEnv({ PAPER_FROM: '2023-03-08' }).PAPER_FROM).toBe(Date.UTC(2023, 2, 8));
    expect(parseEnv({ PAPER_FROM: '2023-03-08T12:30:00Z' }).PAPER_FROM).toBe(Date.UTC(2023, 2, 8, 12, 30));
    expect(parseEnv({}).PAPER_FROM).toBeUndefined();
    expect(problems({ PAPER_FROM: 'yesterday' })).toEqual([
      "PAPER_FROM: expected an ISO date or time (e.g. 2023-03-08 or 2023-03-08T12:00:00Z), got 'yesterday'",
    ]);
    expect(problems({ PAPER_FROM: '2023-03-08', PAPER_LOCKSTEP: 'true' })).toEqual([
      "PAPER_FROM: a replay by time starts there; PAPER_LOCKSTEP=true steps a ticker per request from the start, got '2023-03-08'",
    ]);
  });

  it('MODE=live needs the URL and both keys; a base URL and keys without it stay paper', () => {
    expect(problems({ MODE: 'live' })).toEqual([
      'EXCHANGE_BASE_URL: required when MODE=live',
      'EXCHANGE_API_KEY: required when MODE=live',
      'EXCHANGE_API_SECRET: required when MODE=live',
    ]);
    // A half pair is reported once, by the pairing rule.
    expect(problems({ MODE: 'live', EXCHANGE_BASE_URL: 'https://x.example', EXCHANGE_API_KEY: 'k' })).toEqual([
      'EXCHANGE_API_SECRET: required when EXCHANGE_API_KEY is set',
    ]);
    const keys = { EXCHANGE_BASE_URL: 'https://x.example', EXCHANGE_API_KEY: 'k', EXCHANGE_API_SECRET: 's' };
    expect(planVenue(parseEnv({ ...keys, MODE: 'live' }))).toEqual({ mode: 'live', baseUrl: 'https://x.example' });
    expect(planVenue(parseEnv(keys))).toEqual({
      mode: 'paper',
      data: 'live',
      upstream: 'https://x.example',
      keysIgnored: true,
    });
  });

  it('the HTTP listener: loopback on 8080 by default, a token required off loopback, the token never shown', () => {
    expect(parseEnv({})).toMatchObject({
      API_HOST: '127.0.0.1',
      API_PORT: 8080,
      METRICS_BALANCES: false,
    });
    expect(parseEnv({ API_HOST: '::1', API_PORT: '0' })).toMatchObject({ API_PORT: 0 });
    expect(problems({ API_HOST: '0.0.0.0' })).toEqual([
      expect.stringMatching(
        /^API_TOKEN: required when API_HOST is not a loopback address \(API_HOST=0\.0\.0\.0\)/,
      ) as string,
    ]);
    // Off loopback with the listener turned off, or with a token: fine.
    expect(parseEnv({ API_HOST: '0.0.0.0', API_PORT: '0' }).API_PORT).toBe(0);
    expect(parseEnv({ API_HOST: '0.0.0.0', API_TOKEN: 'a-long-enough-token' }).API_TOKEN).toBe('a-long-enough-token');
    const short = problems({ API_TOKEN: 'short-secret' });
    expect(short).toEqual(['API_TOKEN: expected at least 16 characters']);
    expect(problems({ API_PORT: '70000', METRICS_BALANCES: 'yes' })).toEqual([
      "API_PORT: expected a port number (0 to 65535; 0 turns the listener off), got '70000'",
      expect.stringMatching(/^METRICS_BALANCES: /) as string,
    ]);
  });
});

describe('notification environment', () => {
  it('reads the channel secrets from NAME_FILE like the other secrets', () => {
    const dir = tempDir('notify-env');
    writeFileSync(join(dir, 'token'), 'file-token\n');
    writeFileSync(join(dir, 'hook'), 'file-hook-secret\n');
    const env = parseEnv({
      TELEGRAM_BOT_TOKEN_FILE: join(dir, 'token'),
      TELEGRAM_CHAT_ID: '1',
      NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:9/hook',
      NOTIFY_WEBHOOK_SECRET_FILE: join(dir, 'hook'),
    });
    expect([env.TELEGRAM_BOT_TOKEN, env.NOTIFY_WEBHOOK_SECRET]).toEqual(['file-token', 'file-hook-secret']);
  });

  it('has no channel and sensible defaults with nothing set', () => {
    expect(parseEnv({})).toMatchObject({
      NOTIFY_WEBHOOK_EVENTS: 'all',
      TELEGRAM_API_URL: 'https://api.telegram.org',
      TELEGRAM_LEVEL: 'info',
      TELEGRAM_COMMANDS: true,
      NOTIFY_DAILY_SUMMARY: 0,
      NOTIFY_GROUP_MS: 3000,
      NOTIFY_QUEUE_SIZE: 200,
      NOTIFY_RETRY_FOR_MS: 3_600_000,
    });
  });

  it('reads kinds, chat ids, levels and the summary time', () => {
    const env = parseEnv({
      TELEGRAM_BOT_TOKEN: 't',
      TELEGRAM_CHAT_ID: '123, -1004567',
      TELEGRAM_EVENTS: 'fill, paused',
      DISCORD_LEVEL: 'error',
      NOTIFY_DAILY_SUMMARY: '18:30',
    });
    expect(env.TELEGRAM_CHAT_ID).toEqual(['123', '-1004567']);
    expect(env.TELEGRAM_EVENTS).toEqual(['fill', 'paused']);
    expect(env.DISCORD_LEVEL).toBe('error');
    expect(env.NOTIFY_DAILY_SUMMARY).toBe(18 * 60 + 30);
    expect(parseEnv({ NOTIFY_DAILY_SUMMARY: 'off' }).NOTIFY_DAILY_SUMMARY).toBeUndefined();
  });

  it('names each bad variable, and never echoes a secret', () => {
    const found = problems({
      TELEGRAM_EVENTS: 'fill,fils',
      DISCORD_WEBHOOK_URL: 'not a url with-secret',
      DISCORD_LEVEL: 'loud',
      NOTIFY_DAILY_SUMMARY: '25:00',
    });
    expect(found).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^TELEGRAM_EVENTS: expected 'all' or kinds from: fill, .* \(unknown: fils\), got 'fill,fils'$/,
        ),
        'DISCORD_WEBHOOK_URL: expected an http(s) URL',
        "DISCORD_LEVEL: expected one of info, warn, error, got 'loud'",
        "NOTIFY_DAILY_SUMMARY: expected HH:MM (UTC, e.g. 00:00) or 'off', got '25:00'",
      ]),
    );
    expect(found.join('\n')).not.toContain('secret');
    expect(problems({ TELEGRAM_BOT_TOKEN: 'secret-token', NOTIFY_WEBHOOK_URL: 'http://127.0.0.1:9/hook' })).toEqual([
      'NOTIFY_WEBHOOK_SECRET: required when NOTIFY_WEBHOOK_URL is set (receivers verify the signature with it)',
      'TELEGRAM_CHAT_ID: required when TELEGRAM_BOT_TOKEN is set',
    ]);
  });
});

describe('.env permissions', () => {
  it('warns when .env is readable by other users, and not when it is private or absent', () => {
    const dir = tempDir('dotenv');
    const file = join(dir, '.env');
    expect(dotenvExposure(file)).toBeUndefined();
    writeFileSync(file, 'EXCHANGE_API_SECRET=s\n');
    chmodSync(file, 0o644);
    expect(dotenvExposure(file)).toBe(
      `${file} is readable by other users (mode 644) and may hold the API secret: run chmod 600 ${file}`,
    );
    chmodSync(file, 0o600);
    expect(dotenvExposure(file)).toBeUndefined();
  });
});
