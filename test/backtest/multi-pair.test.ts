/**
 * Issue 41: one strategy file over several pairs. The shipped config/ema-trend-usdt.json (five USDT pairs) backtested
 * on data/samples/2023-04: one instance per pair, named `<file name>/<SYMBOL>`, on one account, and the results per
 * pair beside the total.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { D } from '../../src/market/decimal.js';
import { csvRecords } from '../support/csv-records.js';
import { tempDir } from '../support/temp-dir.js';
import { bot } from './fixtures.js';

const FILE = 'config/ema-trend-usdt.json';
const PAIRS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT', 'ADAUSDT'];
const NAMES = PAIRS.map((s) => `ema-trend-usdt/${s}`);

describe('a strategy file over several pairs', () => {
  it('runs one instance per pair on one account, and reports each pair and the total', async () => {
    const out = tempDir('multi-pair-');
    // 60 USDT: one entry of 50 leaves too little for another pair's while it is held.
    const args = ['--config', FILE, '--data', 'data/samples/2023-04', '--from', '2023-04-14', '--to', '2023-04-15'];
    const { code, out: stdout, err } = await bot([...args, '--balance', 'USDT=60', '--out', out]);
    expect(code, err.join('\n')).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;

    expect(summary.inputs.configs.map((c) => [c.name, c.symbols])).toEqual([['ema-trend-usdt', PAIRS]]);
    expect(summary.instances.map((i) => [i.name, i.symbol])).toEqual(NAMES.map((n, i) => [n, PAIRS[i]]));
    expect(summary.period.symbols.sort()).toEqual([...PAIRS].sort());

    // One account: one USDT balance, the pairs' bases in it, and entries refused for the balance another pair holds.
    expect(summary.balances.initial).toMatchObject({ USDT: '60', BTC: '0', ETH: '0' });
    const refusedForBalance = summary.refusals.filter((r) => r.side === 'BUY' && /^insufficient USDT/.test(r.reason));
    expect(new Set(refusedForBalance.map((r) => r.instance)).size).toBeGreaterThan(1);
    const traded = new Set(csvRecords(join(out, 'orders.csv')).map((o) => o.instance));
    expect(traded.size).toBeGreaterThan(1);
    for (const name of traded) expect(NAMES).toContain(name);

    // Each pair's row, adding up to the total.
    expect(summary.pairs.map((p) => [p.instance, p.symbol])).toEqual(NAMES.map((n, i) => [n, PAIRS[i]]));
    expect(summary.pairs.reduce((n, p) => n + p.fills, 0)).toBe(summary.metrics.fills);
    expect(summary.pairs.reduce((n, p) => n + p.trades, 0)).toBe(summary.metrics.roundTrips);
    const pnl = (rows: readonly { pnl: string }[]) => rows.reduce((sum, r) => sum.plus(r.pnl), new D(0)).toFixed();
    expect(pnl(summary.pairs)).toBe(pnl(summary.trades));
    for (const p of summary.pairs)
      expect(pnl(summary.pairs.filter((q) => q === p))).toBe(
        pnl(summary.trades.filter((t) => t.instance === p.instance)),
      );

    // Printed: a row per pair and the total; the report has the same table.
    const table = stdout.join('\n');
    for (const name of [...NAMES, 'total']) expect(table).toMatch(new RegExp(`^${name} +\\d+ `, 'm'));
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<h2>Pairs (5)</h2>');
    for (const name of NAMES) expect(html).toContain(`<td>${name}</td>`);
  });
});
