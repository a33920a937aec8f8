/**
 * Issue 21, fills that do not flatter: the path inside a candle is a model chosen at replay time (default the
 * shortest), and resting fills on candle data are capped by the volume traded. On the shipped sample (two days
 * of real BTCUSDT candles) and the six-hour fixture imported as a pair of its own.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { run as importCandles } from '../../src/cli/import-candles.js';
import { csvRecords } from '../support/csv-records.js';
import { capture } from '../support/command-output.js';
import { bot, sliceFlags } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const CANDLES = 'test/fixtures/binanceus-BTCUSDT-1m-2023-03-10-0000_0559.csv';
let dir: string;

beforeAll(() => {
  dir = tempDir('fill-model');
});

const summaryOf = (out: string) => JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;

/** fills.csv as rows of its columns. */
const fills = (out: string) => csvRecords(join(out, 'fills.csv'));

describe('--candle-path', () => {
  let data: string;
  beforeAll(async () => {
    data = join(dir, 'rec');
    const r = await capture(importCandles, ['--symbol', 'BTCUSDT', '--out', data, CANDLES]);
    expect(r.code, r.err.join('\n')).toBe(0);
  });
  // The down-tick probe (bench/strategies) decides on every recorded ticker: what is under test is the fill model.
  const run = (out: string, ...extra: string[]) =>
    bot([
      ...['--every-tick', '--config', 'bench/configs/down-tick-btcusdt.json', '--strategies', 'bench/strategies'],
      ...['--data', data, '--fee', '0', '--out', out, ...extra],
    ]);

  it('defaults to the shortest path, which walks candles otherwise than imported and changes the fills', async () => {
    const byDefault = join(dir, 'default');
    const imported = join(dir, 'nearer-first');
    expect((await run(byDefault)).code).toBe(0);
    expect((await run(imported, '--candle-path', 'nearer-first')).code).toBe(0);
    const summary = summaryOf(byDefault);
    expect(summary.fillModel.candlePath).toBe('shortest');
    expect(summaryOf(imported).fillModel.candlePath).toBe('nearer-first');
    const statement = summary.fillModel.statements.join(' ');
    expect(statement).toMatch(/moves inside a candle are modelled, not seen/);
    expect(statement).toMatch(/'shortest' path \(--candle-path\): open, the extreme against the candle’s direction/);
    expect(readFileSync(join(byDefault, 'report.html'), 'utf8')).toContain('the extreme against the candle');
    // Same ticks, same times, other prices at the candles' extremes: the fills differ.
    expect(summary.period.ticks).toBe(summaryOf(imported).period.ticks);
    expect(fills(byDefault).map((f) => `${f.time} ${f.price}`)).not.toEqual(
      fills(imported).map((f) => `${f.time} ${f.price}`),
    );
    // Each model: its own result, the same one run after run (byte for byte).
    const again = join(dir, 'default-again');
    expect((await run(again)).code).toBe(0);
    for (const file of ['summary.json', 'fills.csv', 'orders.csv'])
      expect(readFileSync(join(again, file), 'utf8')).toBe(readFileSync(join(byDefault, file), 'utf8'));
  });

  it('refuses an unknown model in one line naming the flag and the models', async () => {
    const r = await run(join(dir, 'bad-path'), '--candle-path', 'random');
    expect(r.code).toBe(2);
    expect(r.err).toEqual([
      "backtest: --candle-path must be one of shortest, nearer-first, longest, high-first, low-first, got 'random'",
    ]);
  });
});

describe('--participation', () => {
  /** A grid whose orders (1 BTC) are larger than a tenth of a tick's volume (a median candle: 0.83 BTC). */
  let grid: string;
  beforeAll(() => {
    grid = join(dir, 'big-grid.json');
    writeFileSync(
      grid,
      JSON.stringify({
        name: 'big-grid',
        strategy: 'grid',
        symbol: 'BTCUSDT',
        schedule: '*/5 * * * * *',
        params: { levels: 4, spacingPct: '0.4', quantity: '1' },
        risk: { maxOrderNotional: '30000', maxOpenOrders: 12, maxPosition: '5' },
      }),
    );
  });

  it('caps resting fills on candle data at 10% of the volume by default: an order fills in parts', async () => {
    const capped = join(dir, 'capped');
    const whole = join(dir, 'uncapped');
    const balance = ['--balance', 'USDT=100000,BTC=5'];
    expect((await bot(sliceFlags(grid, capped, balance))).code).toBe(0);
    expect((await bot(sliceFlags(grid, whole, [...balance, '--participation', 'off']))).code).toBe(0);
    const summary = summaryOf(capped);
    expect(summary.fillModel.participation).toBe('0.1');
    expect(summary.fillModel.statements.join(' ')).toMatch(/take at most 10% of the base volume traded on each tick/);
    expect(summaryOf(whole).fillModel.participation).toBeNull();
    expect(summaryOf(whole).fillModel.statements.join(' ')).toMatch(
      /not capped by traded volume \(--participation off\)/,
    );

    const perOrder = (rows: Record<string, string>[]) => {
      const n = new Map<string, number>();
      for (const f of rows) n.set(f.order_id!, (n.get(f.order_id!) ?? 0) + 1);
      return [...n.values()];
    };
    const cappedFills = fills(capped).filter((f) => f.maker === 'true');
    expect(cappedFills.length).toBeGreaterThan(0);
    // 1 BTC orders fill in parts, over several ticks.
    expect(Math.max(...perOrder(cappedFills))).toBeGreaterThan(1);
    expect(cappedFills.some((f) => Number(f.quantity) < 0.5)).toBe(true);
    // Without the cap every order fills at once, in full.
    expect(Math.max(...perOrder(fills(whole)))).toBe(1);
  });

  it('takes a percentage or a ratio, and refuses anything else naming the flag', async () => {
    const ratio = join(dir, 'ratio');
    expect((await bot(sliceFlags(grid, ratio, ['--participation', '0.25']))).code).toBe(0);
    expect(summaryOf(ratio).fillModel.participation).toBe('0.25');
    for (const bad of ['150%', '2', 'much', '1.5']) {
      const r = await bot(sliceFlags(grid, join(dir, 'bad-participation'), ['--participation', bad]));
      expect(r.code, bad).toBe(2);
      expect(r.err).toEqual([
        `backtest: --participation must be a share of the traded volume within [0, 1] or [0%, 100%] (10%, 0.25), or off, got '${bad}'`,
      ]);
    }
  });
});
