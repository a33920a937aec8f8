/**
 * Issue 41: one strategy file over several pairs. The shipped config/ema-trend-usdt.json on five USDT pairs, backtested
 * on data/samples/2023-04: one instance per pair, named `<file name>/<SYMBOL>`, on one account, and the results per
 * pair beside the total; sweeps, hyperopt and walk-forward of the file on one account with its limits.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { D } from '../../src/market/decimal.js';
import { run as hyperopt } from '../../src/cli/hyperopt.js';
import { capture } from '../support/command-output.js';
import { csvRecords } from '../support/csv-records.js';
import { tempDir } from '../support/temp-dir.js';
import { bot } from './fixtures.js';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import type { WalkForwardRecord } from '../../src/backtest/validation-runs.js';
import { recordingFiles, recordedSymbols } from '../../src/record/recording-reader.js';

/**
 * The shipped config/ema-trend-usdt.json on the five pairs as `symbols` (the shipped file chooses its pairs with a
 * pairlist and filters entries by BTC's trend: test/backtest/pair-list.test.ts), so that every pair trades.
 */
const FILE = join(tempDir('multi-pair-file'), 'ema-trend-usdt.json');
{
  const {
    pairlist: _list,
    params,
    ...shipped
  } = JSON.parse(readFileSync('config/ema-trend-usdt.json', 'utf8')) as {
    pairlist: unknown;
    params: Record<string, unknown>;
  };
  const { trendSymbol: _t, trendTimeframe: _tf, trendPeriod: _p, ...own } = params;
  writeFileSync(
    FILE,
    JSON.stringify({ ...shipped, symbols: ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT', 'ADAUSDT'], params: own }),
  );
}
const SLICE = ['--config', FILE, '--data', 'data/samples/2023-04', '--from', '2023-04-15', '--to', '2023-04-16'];
/** Each pair's quantity step (data/samples/2023-04/pair-config.json): a position under it is dust, not a trade. */
const STEPS: Record<string, string> = {
  BTCUSDT: '0.00001',
  ETHUSDT: '0.0001',
  SOLUSDT: '0.01',
  XRPUSDT: '1',
  ADAUSDT: '0.1',
};
const PAIRS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT', 'ADAUSDT'];
const NAMES = PAIRS.map((s) => `ema-trend-usdt/${s}`);

describe('a strategy file over several pairs', () => {
  it('runs one instance per pair on one account, and reports each pair and the total', async () => {
    const out = tempDir('multi-pair');
    // 60 USDT: one entry of 50 leaves too little for another pair's while it is held.
    const { code, out: stdout, err } = await bot([...SLICE, '--balance', 'USDT=60', '--out', out]);
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
    // The pairs held over time: a lane per pair, a bar for each pair that held anything.
    const lanes = [
      ...html.matchAll(
        /<div class="held-row" data-pair="(\w+)"><span[^>]*>\w+<\/span><div class="held-lane">(.*?)<\/div><\/div>/g,
      ),
    ];
    expect(lanes.map((m) => m[1])).toEqual(PAIRS);
    for (const [, symbol, bars] of lanes)
      expect(bars!.length > 0, symbol).toBe(summary.pairs.find((p) => p.symbol === symbol)!.fills > 0);
  });

  /** The most pairs holding more than dust at once over a run's fills, and the summary. */
  async function run(set: string): Promise<{ summary: BacktestSummary; most: number; html: string }> {
    const out = tempDir('portfolio');
    const { code, err } = await bot([...SLICE, '--set', set, '--out', out]);
    expect(code, err.join('\n')).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    const held = new Map<string, InstanceType<typeof D>>();
    let most = 0;
    for (const f of csvRecords(join(out, 'fills.csv'))) {
      const before = held.get(f.symbol!) ?? new D(0);
      // A fee in the base asset is not held.
      const fee = f.fee_asset === f.symbol!.replace(/USDT$/, '') ? f.fee! : '0';
      held.set(
        f.symbol!,
        f.side === 'BUY' ? before.plus(f.quantity!).minus(fee) : before.minus(f.quantity!).minus(fee),
      );
      most = Math.max(most, [...held].filter(([s, q]) => q.gte(STEPS[s]!)).length);
    }
    return { summary, most, html: readFileSync(join(out, 'report.html'), 'utf8') };
  }

  it('refuses an entry past the portfolio limits, naming the limit, and never an exit', async () => {
    const one = await run('portfolio.maxOpenTrades=1');
    expect(one.most).toBe(1);
    // report.html's picture says so.
    expect(one.html).toContain('<span class="held-name">held: 1 at most</span>');
    expect(one.summary.refusals.length).toBeGreaterThan(0);
    for (const r of one.summary.refusals) {
      expect(r.side).toBe('BUY');
      expect(r.reason).toMatch(/^maxOpenTrades 1 of ema-trend-usdt reached: 1 pair holds a trade \([A-Z]+USDT\)$/);
    }

    // 50 USDT an entry: at most two pairs' trades under 120 (each valued at its last price).
    const exposure = await run('portfolio.maxExposure=120');
    expect(exposure.most).toBe(2);
    expect(exposure.html).toContain('<span class="held-name">held: 2 at most</span>');
    expect(exposure.summary.refusals.length).toBeGreaterThan(0);
    for (const r of exposure.summary.refusals) {
      expect(r.side).toBe('BUY');
      expect(r.reason).toMatch(
        /^maxExposure 120 USDT of ema-trend-usdt: its pairs would hold 1[2-9]\d(\.\d+)? USDT \(positions and working buys at their last price, with this order\)$/,
      );
    }

    const stake = await run('portfolio.stakePerTrade=40');
    expect(stake.summary.metrics.fills).toBe(0);
    expect(stake.summary.refusals.map((r) => r.reason)).toContain(
      'stakePerTrade 40 USDT: the trade would hold 50 USDT (position and working buys at the last price, with this order)',
    );
  });

  it('sweeps and searches the file on one account with its limits: each result is its combination run alone', async () => {
    // On the day's slice one pair held at once trades less than two.
    const metricsOf = (out: string) =>
      (JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary).metrics;
    const alone = new Map<number, BacktestSummary['metrics']>();
    for (const n of [1, 2]) {
      const out = tempDir('multi-pair-alone');
      expect((await bot([...SLICE, '--set', `portfolio.maxOpenTrades=${n}`, '--out', out])).code).toBe(0);
      alone.set(n, metricsOf(out));
    }
    expect(alone.get(1)!.fills).toBeLessThan(alone.get(2)!.fills);
    const sweepOut = tempDir('multi-pair-sweep');
    const sweep = await bot([...SLICE, '--sweep', 'portfolio.maxOpenTrades=1,2', '--workers', '1', '--out', sweepOut]);
    expect(sweep.code, sweep.err.join('\n')).toBe(0);
    const results = (
      JSON.parse(readFileSync(join(sweepOut, 'sweep.json'), 'utf8')) as {
        results: { overrides: Record<string, number>; metrics: BacktestSummary['metrics'] }[];
      }
    ).results;
    expect(results.map((r) => r.overrides['portfolio.maxOpenTrades']).sort()).toEqual([1, 2]);
    for (const r of results) expect(r.metrics).toEqual(alone.get(r.overrides['portfolio.maxOpenTrades']!));

    const searched = tempDir('multi-pair-hyperopt');
    const search = await capture(hyperopt, [
      ...SLICE,
      ...['--space', 'portfolio.maxOpenTrades=1..2:int', '--epochs', '2', '--batch', '2', '--out', searched],
    ]);
    expect(search.code, search.err.join('\n')).toBe(0);
    const trials = readFileSync(join(searched, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { values: Record<string, number>; metrics: BacktestSummary['metrics'] });
    expect(trials).toHaveLength(2);
    for (const t of trials) expect(t.metrics).toEqual(alone.get(t.values['portfolio.maxOpenTrades']!));
    // best.json is the file itself with the best values: its pairs and portfolio kept.
    const best = JSON.parse(readFileSync(join(searched, 'best.json'), 'utf8')) as {
      symbols: string[];
      portfolio: object;
    };
    expect(best.symbols).toEqual(PAIRS);
    expect(best.portfolio).toMatchObject({ maxExposure: '200' });
  });
  it('walks the shipped pair-list file forward: each window pick on its test part is that combination run alone there', async () => {
    // The shipped file as it is: its pair list, maxOpenTrades and BTCUSDT's trend as an informative pair.
    const out = tempDir('multi-pair-walk');
    const shipped = 'config/ema-trend-usdt.json';
    const walk = await bot([
      ...['--config', shipped, '--data', 'data/samples/2023-04', '--from', '2023-04-14T12:00:00Z'],
      ...['--sweep', 'portfolio.maxOpenTrades=1,3', '--walk-forward', '2', '--train', '12h', '--test', '6h'],
      ...['--workers', '1', '--out', out],
    ]);
    expect(walk.code, walk.err.join('\n')).toBe(0);
    const { walkForward } = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as {
      walkForward: WalkForwardRecord;
    };
    expect(walkForward.windows.map((w) => [w.test.from, w.test.to, w.outcome])).toEqual([
      ['2023-04-15T00:00:00.000Z', '2023-04-15T06:00:00.000Z', 'tested'],
      ['2023-04-15T06:00:00.000Z', '2023-04-15T12:00:00.000Z', 'tested'],
    ]);
    const symbols = await recordedSymbols(['data/samples/2023-04']);
    const data = await loadTicks(await recordingFiles(['data/samples/2023-04'], symbols));
    const { sources } = await readConfigs([shipped]);
    // Each window's pick alone on its test part, warmed up on the data before it as the walk-forward's part is.
    const alone = async (overrides: Record<string, unknown>, span: { from: string; to: string }) =>
      (
        await runJob(
          sources,
          data,
          DEFAULT_JOB_SETTINGS,
          overrides,
          {},
          { from: Date.parse(span.from), to: Date.parse(span.to) },
        )
      ).summary;
    let fills = 0;
    for (const w of walkForward.windows) {
      const test = await alone(w.chosen!.overrides, w.test);
      expect(w.outOfSample).toEqual(test.metrics);
      // All five pairs of the list ran in each part, on one account.
      expect(test.instances.map((i) => i.symbol).sort()).toEqual([...PAIRS].sort());
      fills += test.metrics.fills;
    }
    expect(fills).toBeGreaterThan(0);
  });
});
