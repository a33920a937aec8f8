import { type ChildProcess, spawn } from 'node:child_process';
import { statSync, truncateSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { progressLine } from '../../src/cli/sim.js';
import { ExchangeClient } from '../../src/exchange/client.js';
import { DEMO_CREDENTIALS } from '../../src/sim/sim-server.js';
import { writeRecording } from './server-fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const T0 = Date.parse('2023-03-01T00:00:00.000Z');

interface Sim {
  child: ChildProcess;
  /** The first stdout line. */
  line: string;
  url: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

/** `bot sim …` in a fresh directory (no .env) unless `cwd` is given, with only PATH and `env` set. */
function spawnSim(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const child = spawn(
    process.execPath,
    ['--import', resolve(ROOT, 'node_modules/tsx/dist/loader.mjs'), resolve(ROOT, 'src/cli.ts'), 'sim', ...args],
    {
      cwd: options.cwd ?? tempDir('sim-server'),
      env: { PATH: process.env.PATH, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  return child;
}

function startSim(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Sim> {
  const child = spawnSim(['--port', '0', ...args], options);
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return new Promise((done, fail) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const line = out.slice(0, nl);
      const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1];
      if (url) done({ child, line, url, stderr: () => err, exit });
      else fail(new Error(`unexpected first line: ${line}`));
    });
    void exit.then((code) => fail(new Error(`sim exited with ${code} before printing its URL: ${err}`)));
  });
}

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnSim(args);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((done) => child.on('exit', (code) => done({ code, stdout, stderr })));
}

describe('bot sim', () => {
  it('serves a recording with the demo pair, answers the client, and exits 0 on SIGTERM', async () => {
    const file = writeRecording(tempDir('sim-server'), 'BTCUSDT', [
      { s: 'BTCUSDT', p: 23000.5, t: T0 },
      { s: 'BTCUSDT', p: 23001, t: T0 + 1000 },
    ]);
    const sim = await startSim(['--data', file, '--lockstep', '--balance', 'USDT=500,BTC=0.25']);
    expect(sim.line).toContain(
      `using the demo key pair ${DEMO_CREDENTIALS.apiKey} / ${DEMO_CREDENTIALS.apiSecret} (see README)`,
    );
    const client = new ExchangeClient({ baseUrl: sim.url, ...DEMO_CREDENTIALS, rateLimit: false });
    try {
      expect((await client.marketWatchEntries()).map((t) => t.p)).toEqual([23000.5]);
      expect((await client.marketWatchEntries()).map((t) => t.p)).toEqual([23001]);
      const wallet = await client.balance();
      expect([wallet['1']?.value, wallet['2']?.value, wallet['3']?.value]).toEqual([0.25, 500, 0]);
      const order = await client.createOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.1' });
      expect(order).toMatchObject({ status: 'FILLED', executedPrice: 23001 });
    } finally {
      await client.close();
    }
    sim.child.kill('SIGTERM');
    expect(await sim.exit).toBe(0);
    expect(sim.stderr()).toContain('simulated exchange stopped');
  });

  it('takes the key pair from the environment and never prints the secret', async () => {
    const credentials = { apiKey: 'env-key', apiSecret: 'env-secret-never-printed' };
    const sim = await startSim(
      ['--random-walk', '--seed', '7', '--symbols', 'BTCUSDT,ETHUSDT', '--start', 'BTCUSDT=60000'],
      {
        env: { EXCHANGE_API_KEY: credentials.apiKey, EXCHANGE_API_SECRET: credentials.apiSecret },
      },
    );
    expect(sim.line).toContain('using EXCHANGE_API_KEY/EXCHANGE_API_SECRET from the environment');
    expect(sim.line).toContain('random walk of BTCUSDT, ETHUSDT (seed 7)');
    const client = new ExchangeClient({ baseUrl: sim.url, ...credentials, rateLimit: false, cancel: true });
    try {
      const tickers = await client.marketWatchEntries();
      expect(tickers.map((t) => t.s).sort()).toEqual(['BTCUSDT', 'ETHUSDT']);
      expect(await client.openOrders()).toEqual([]);
    } finally {
      await client.close();
    }
    sim.child.kill('SIGINT');
    expect(await sim.exit).toBe(0);
    expect(sim.line + sim.stderr()).not.toContain(credentials.apiSecret);
  });

  it('replays the BTCUSDT sample by default, from the project root', async () => {
    const sim = await startSim(['--no-cancel'], { cwd: ROOT });
    expect(sim.line).toMatch(/replaying data\/samples\/BTCUSDT-[^,]+\.jsonl\.gz, speed 1\)/);
    const client = new ExchangeClient({ baseUrl: sim.url, ...DEMO_CREDENTIALS, rateLimit: false });
    try {
      expect((await client.marketWatchEntries('BTCUSDT'))[0]).toMatchObject({ s: 'BTCUSDT', p: 23140.48 });
      await expect(client.cancelOrder!('BTCUSDT', '1')).rejects.toMatchObject({ status: 405 });
    } finally {
      await client.close();
    }
    sim.child.kill('SIGTERM');
    expect(await sim.exit).toBe(0);
  });

  it('refuses contradictory or malformed flags with exit 2', async () => {
    const walkAndData = await run(['--random-walk', '--data', 'x.jsonl.gz']);
    expect(walkAndData.code).toBe(2);
    expect(walkAndData.stderr).toContain('--random-walk does not take --data');
    const balance = await run(['--balance', 'USDT=lots']);
    expect(balance.code).toBe(2);
    expect(balance.stderr).toContain(
      "--balance takes NAME=AMOUNT pairs like BTC=0.5 (plain decimals), got 'USDT=lots'",
    );
    const missing = await run(['--data', '/nonexistent/x.jsonl.gz']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('/nonexistent/x.jsonl.gz: cannot read the recording (ENOENT)');
  });

  it('refuses a recording that breaks off, naming where; --allow-partial replays its complete lines, warned', async () => {
    const file = writeRecording(
      tempDir('sim-server'),
      'BTCUSDT',
      Array.from({ length: 5000 }, (_, i) => ({ s: 'BTCUSDT', p: 23000 + (i % 50), t: T0 + i * 1000 })),
    );
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const refused = await run(['--data', file]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trim()).toMatch(
      new RegExp(
        `^sim: E_RECORDING: --data: ${file}:\\d+ \\(compressed byte \\d+\\): the gzip data ends early \\(truncated\\); ` +
          'the \\d+ lines before it are complete \\(--allow-partial replays them',
      ),
    );
    const sim = await startSim(['--data', file, '--lockstep', '--allow-partial']);
    const client = new ExchangeClient({ baseUrl: sim.url, ...DEMO_CREDENTIALS, rateLimit: false });
    try {
      expect((await client.marketWatchEntries()).map((t) => t.p)).toEqual([23000]);
    } finally {
      await client.close();
    }
    sim.child.kill('SIGTERM');
    expect(await sim.exit).toBe(0);
    expect(sim.stderr()).toMatch(/--data: .*: replaying the \d+ complete lines before it \(--allow-partial\)/);
  });

  it('shows replay progress as ticks fed, share of the recording and simulated time', () => {
    expect(progressLine({ fed: 0, done: false })).toBe('sim: 0 ticks fed');
    expect(progressLine({ fed: 30, done: false, total: 120, time: T0 })).toBe(
      'sim: 30 ticks fed (25.0%), simulated time 2023-03-01T00:00:00.000Z',
    );
    expect(progressLine({ fed: 150, done: false, total: 120, time: T0 })).toMatch(
      /^sim: 150 ticks fed \(pass 2, 25\.0%\)/,
    );
    expect(progressLine({ fed: 120, done: true, total: 120, time: T0 })).toMatch(/\(100%\).*, data exhausted$/);
  });
});
