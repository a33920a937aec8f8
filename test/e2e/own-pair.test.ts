/**
 * Issue 21's "Done when", as a user runs it, each command a real process: on a clean clone, a one-minute candle
 * CSV of a pair the project never shipped (BTC/USD, tick 5) imports with the rules' flags, passes check-config
 * and backtests with fills and balances in its own assets; `bot record` against `bot sim` replaying that pair
 * records its rules, and the recording replays by them, in a backtest and on paper (every order price on the
 * pair's tick of 5, where the built-in pairs' tick is 0.01).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { trackChild } from '../support/child-processes.js';
import { cleanClone } from '../support/clean-clone.js';
import { csvRecords } from '../support/csv-records.js';
import { DaemonProcess, daemonEnv, journal, readDb, ROOT, waitFor } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const work = tempDir('e2e-own-pair');
const clone = join(work, 'spot-bot');
const csv = join(work, 'BTCUSD-1m.csv');
const config = join(work, 'config', 'grid-btcusd.json');

/** `bot ARGS` of the clean clone, run from the user's folder. */
function bot(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [join(clone, 'bin/bot.js'), ...args], {
    cwd: work,
    env: daemonEnv(env),
    encoding: 'utf8',
  });
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** `bot ARGS` of the clean clone left running, its output gathered. */
function botProcess(args: string[], env: Record<string, string> = {}): { child: ChildProcess; lines: string[] } {
  const child = trackChild(
    spawn(process.execPath, [join(clone, 'bin/bot.js'), ...args], {
      cwd: work,
      env: daemonEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const lines: string[] = [];
  child.stdout?.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  child.stderr?.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  return { child, lines };
}

async function stop(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  return exited;
}

/** The limit prices of a backtest's orders.csv. */
function orderPrices(out: string): number[] {
  return csvRecords(join(out, 'orders.csv'))
    .map((o) => o.price!)
    .filter((p) => p !== '')
    .map(Number);
}

const onTick = (prices: number[]) => prices.length > 0 && prices.every((p) => p % 5 === 0);

beforeAll(() => {
  cleanClone(ROOT, clone);
  copyFileSync(join(ROOT, 'test/fixtures/binanceus-BTCUSDT-1m-2023-03-10-0000_0559.csv'), csv);
  mkdirSync(join(work, 'config'));
  writeFileSync(
    config,
    JSON.stringify({
      name: 'grid-btcusd',
      strategy: 'grid',
      symbol: 'BTCUSD',
      schedule: '*/5 * * * * *',
      params: { levels: 3, spacingPct: '0.37', quantity: '0.001' },
      risk: { maxOrderNotional: '50', maxOpenOrders: 12, maxPosition: '0.01' },
    }),
  );
});

describe("a pair the project never shipped, on a clean clone, each step a user's command", () => {
  it('imports the candles with the rules flags, checks the config against them, backtests in its own assets', () => {
    const imported = bot([
      'import-candles',
      '--symbol',
      'BTCUSD',
      '--base',
      'BTC',
      '--quote',
      'USD',
      '--tick-size',
      '5',
      '--min-price',
      '5',
      '--max-price',
      '1000000',
      '--base-precision',
      '5',
      '--quote-precision',
      '2',
      '--min-qty',
      '0.00001',
      '--step-size',
      '0.00001',
      '--min-notional',
      '10',
      '--out',
      'rec',
      csv,
    ]);
    expect(imported.status, imported.err).toBe(0);
    const checked = bot(['check-config', '--data', 'rec', config]);
    expect(checked.status, checked.out + checked.err).toBe(0);
    const out = join(work, 'out');
    const run = bot([
      'backtest',
      '--config',
      config,
      '--data',
      'rec',
      '--balance',
      'USD=10000,BTC=0',
      '--maker-fee',
      '0.0004',
      '--taker-fee',
      '0.001',
      '--out',
      out,
    ]);
    expect(run.status, run.err).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.metrics.fills).toBeGreaterThan(0);
    expect(summary.period.quoteAsset).toBe('USD');
    expect(summary.balances.initial).toEqual({ BTC: '0', USD: '10000' });
    expect(Object.keys(summary.balances.final)).toEqual(['BTC', 'USD']);
    expect(summary.fillModel).toMatchObject({ makerFee: '0.0004', takerFee: '0.001' });
    expect(orderPrices(out).length).toBeGreaterThan(2);
    expect(onTick(orderPrices(out))).toBe(true);
  }, 120_000);

  it('bot record against bot sim records the pair and its rules; the recording replays by them', async () => {
    const source = join(work, 'rec', 'BTCUSD-2023-03-10.jsonl.gz');
    expect(existsSync(source)).toBe(true);
    const sim = botProcess(['sim', '--data', source, '--lockstep']);
    let record: ReturnType<typeof botProcess> | undefined;
    const recorded = join(work, 'recorded', 'BTCUSD', '2023-03-10.jsonl.gz');
    try {
      const url = await waitFor('the simulated exchange URL', () =>
        sim.lines.map((l) => /simulated exchange at (http:\/\/\S+) /.exec(l)?.[1]).find((u) => u !== undefined),
      );
      record = botProcess(['record', '--symbols', 'BTCUSD', '--every', '100ms', '--out', 'recorded'], {
        EXCHANGE_BASE_URL: url,
      });
      // One recorded ticker per poll (lockstep): 100 polls are 25 minutes of the candles. The file is read as
      // far as it is flushed (the recorder flushes after every poll).
      const recordedLines = () =>
        existsSync(recorded)
          ? gunzipSync(readFileSync(recorded), { finishFlush: constants.Z_SYNC_FLUSH }).toString().split('\n').length
          : 0;
      await waitFor('100 recorded tickers', () => recordedLines() > 100);
    } finally {
      if (record) expect(await stop(record.child)).toBe(0);
      await stop(sim.child);
    }

    // A backtest of the recording trades by the recorded rules: every price on the tick of 5.
    const out = join(work, 'out-recorded');
    const run = bot(['backtest', '--config', config, '--data', 'recorded', '--balance', 'USD=10000', '--out', out]);
    expect(run.status, run.err).toBe(0);
    expect(orderPrices(out).length).toBeGreaterThan(2);
    expect(onTick(orderPrices(out))).toBe(true);

    // So does paper on it: the start line names the pair's rules as the recording's, and the orders keep them.
    const db = join(work, 'paper.db');
    const daemon = new DaemonProcess(
      daemonEnv({
        DB_PATH: db,
        CONFIG_DIR: join(work, 'config'),
        KILL_SWITCH_FILE: join(work, 'KILL'),
        PAPER_DATA: join(work, 'recorded'),
        PAPER_LOCKSTEP: 'true',
        PAPER_BALANCES: 'USD=10000,BTC=0',
      }),
    );
    try {
      await waitFor('three grid orders on paper', () => journal(db).length >= 3, { daemon });
    } finally {
      expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    }
    expect(daemon.messages(/PAPER TRADING on recorded data/).join('\n')).toMatch(
      /pairs BTCUSD \(BTC\/USD, tick 5, rules from the recording, \d+ tickers\)/,
    );
    const prices = readDb(
      db,
      (d) => d.prepare('SELECT price FROM orders WHERE price IS NOT NULL').pluck().all() as string[],
    );
    expect(onTick(prices.map(Number))).toBe(true);
  }, 180_000);
});
