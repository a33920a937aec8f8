/**
 * Issue 21: results that do not flatter and outputs that do not overwrite one another. Real candles (six
 * hours, test/fixtures/README.md) imported as a pair of their own.
 */
import {
  rmSync,
  existsSync,
  readdirSync,
  readFileSync,
  truncateSync,
  statSync,
  copyFileSync,
  mkdirSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run as importCandles } from '../../src/cli/import-candles.js';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { riskRatios } from '../../src/backtest/performance-metrics.js';
import { csvRecords } from '../support/csv-records.js';
import { D } from '../../src/market/decimal.js';
import { capture } from '../support/command-output.js';
import { bot } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const CANDLES = 'test/fixtures/binanceus-BTCUSDT-1m-2023-03-10-0000_0559.csv';
let dir: string;
let data: string;
let downTick: string;

/** One-minute candles imported as BTCUSD, a pair of their own (tick 0.01, 6 base decimals). */
async function importBtcusd(csv: string, out: string): Promise<void> {
  const r = await capture(importCandles, [
    '--symbol',
    'BTCUSD',
    '--tick-size',
    '0.01',
    '--base-precision',
    '6',
    '--out',
    out,
    csv,
  ]);
  expect(r.code, r.err.join('\n')).toBe(0);
}

beforeAll(async () => {
  dir = tempDir('backtest-test');
  data = join(dir, 'rec');
  await importBtcusd(CANDLES, data);
  downTick = join(dir, 'down-tick.json');
  writeFileSync(
    downTick,
    JSON.stringify({
      name: 'down-tick',
      strategy: 'down-tick',
      symbol: 'BTCUSD',
      schedule: '*/5 * * * * *',
      params: { quantity: '0.01' },
      risk: { maxOrderNotional: '1000', maxOpenOrders: 2, maxPosition: '0.05', dailyLossLimit: '100000' },
    }),
  );
});

// The down-tick probe decides on every recorded ticker (--every-tick): what is under test is the fill model.
const runOn = (recordings: string, out: string, ...extra: string[]) =>
  bot([
    '--every-tick',
    '--config',
    downTick,
    '--strategies',
    'bench/strategies',
    '--data',
    recordings,
    '--balance',
    'USD=10000',
    '--out',
    out,
    ...extra,
  ]);
const run = (out: string, ...extra: string[]) => runOn(data, out, ...extra);

describe('fills that do not flatter', () => {
  it('fills a MARKET order decided on a tick at a later tick, never at the price the strategy saw', async () => {
    const out = join(dir, 'latency');
    const r = await run(out, '--fee', '0');
    expect(r.code, r.err.join('\n')).toBe(0);
    const orders = csvRecords(join(out, 'orders.csv'));
    const fills = csvRecords(join(out, 'fills.csv'));
    expect(fills.length).toBeGreaterThan(50);
    const decided = new Map(orders.map((o) => [o.exchange_id, o.time]));
    for (const f of fills)
      expect(Date.parse(f.time!)).toBeGreaterThanOrEqual(Date.parse(decided.get(f.order_id)!) + 15_000);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.fillModel).toMatchObject({ latencyMs: 15_000, dataStepMs: 15_000, slippageBps: '0', makerFee: '0' });
    expect(summary.fillModel.candlePath).toBe('shortest');
    expect(summary.fillModel.statements.join(' ')).toMatch(/moves inside a candle are modelled, not seen/);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('<h2>Fill model</h2>');
    expect(report).toContain('moves inside a candle are modelled, not seen');
    // Zero latency fills at the very tick decided on. It flattered when the strategy saw the path inside a
    // candle (every down-tick it bought was a low); now it sees an open or a close, and fills only there.
    const zero = join(dir, 'zero-latency');
    expect((await run(zero, '--fee', '0', '--latency-ms', '0')).code).toBe(0);
    const zeroFills = csvRecords(join(zero, 'fills.csv'));
    expect(zeroFills.length).toBeGreaterThan(50);
    for (const f of zeroFills) expect([0, 45_000], f.time).toContain(Date.parse(f.time!) % 60_000);
  });

  it("prints money to the quote's precision, and says how to read Sharpe and a short run's CAGR", async () => {
    const out = join(dir, 'table');
    const r = await run(out);
    expect(r.code, r.err.join('\n')).toBe(0);
    const lines = r.out.join('\n').split('\n');
    const row = (label: string) =>
      lines
        .find((l) => l.startsWith(label))
        ?.slice(label.length)
        .trim();
    // BTCUSD's quote (USD) has 2 decimals: summary.json keeps every digit, the table and the report show cents.
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.period.quotePrecision).toBe(2);
    expect(summary.metrics.feesQuote).toMatch(/\.\d{3,}$/);
    expect(row('fees (quote)')).toBe(new D(summary.metrics.feesQuote).toDecimalPlaces(2).toFixed());
    expect(row('final equity')).toBe(new D(summary.metrics.finalEquity).toDecimalPlaces(2).toFixed());
    expect(row('expectancy (quote)')).toMatch(/^-?\d+(\.\d{1,2})?$/);
    const printed = r.out.join('\n');
    expect(printed).toContain(
      "Sharpe and Sortino: the equity's simple returns every 60 minutes of data time, annualised by sqrt(8760 " +
        'periods a year, 365-day years), risk-free rate 0',
    );
    expect(printed).toMatch(/CAGR and Calmar compound 0\.25 days of data into a year: a rate .* not a forecast/);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    for (const label of ['Fees (quote)', 'Final equity', 'PnL', 'Initial equity'])
      expect(report).toMatch(new RegExp(`<th>${label.replace(/[()]/g, '\\$&')}</th><td>-?\\d+\\.\\d{2}</td>`));
    expect(report).toContain('CAGR and Calmar compound 0.25 days of data into a year');
  });

  it('charges --slippage-bps to takers', async () => {
    const out = join(dir, 'slip');
    expect((await run(out, '--fee', '0', '--slippage-bps', '10')).code).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;
    const plain = JSON.parse(readFileSync(join(dir, 'latency', 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.fillModel.slippageBps).toBe('10');
    expect(Number(summary.metrics.finalEquity)).toBeLessThan(Number(plain.metrics.finalEquity));
  });
});

describe('outputs that never overwrite another run silently', () => {
  it('refuses a folder holding other inputs outputs without --force, and a sweep in a single run folder always', async () => {
    const out = join(dir, 'shared');
    expect((await run(out)).code).toBe(0);
    expect((await run(out)).code).toBe(0); // the same inputs: the same outputs, rewritten
    const other = await run(out, '--fee', '0.002');
    expect(other.code).toBe(1);
    expect(other.err.join('\n')).toMatch(/shared holds the outputs of other inputs .*--force to replace them/);
    expect((await run(out, '--fee', '0.002', '--force')).code).toBe(0);
    const sweep = await run(out, '--sweep', 'quantity=0.01,0.02');
    expect(sweep.code).toBe(1);
    expect(sweep.err.join('\n')).toMatch(/holds a run's outputs: a sweep never writes into it/);
    const foreign = join(dir, 'foreign');
    mkdirSync(foreign);
    copyFileSync(CANDLES, join(foreign, 'mine.csv'));
    const refused = await run(foreign);
    expect(refused.code).toBe(1);
    expect(readdirSync(foreign)).toEqual(['mine.csv']);
  });

  it('names default folders with a hash of the inputs, so different inputs get different folders', async () => {
    const args = ['--config', downTick, '--strategies', 'bench/strategies', '--data', data, '--balance', 'USD=10000'];
    const made: string[] = [];
    try {
      for (const fee of ['0.001', '0']) {
        const r = await bot([...args, '--fee', fee]);
        expect(r.code, r.err.join('\n')).toBe(0);
        made.push(/report in (\S+)/.exec(r.err.join('\n'))![1]!);
      }
      for (const name of made) expect(name).toMatch(/^backtests\/down-tick-BTCUSD-2023-03-10-[0-9a-f]{10}$/);
      expect(made[0]).not.toBe(made[1]);
    } finally {
      for (const name of made) rmSync(name, { recursive: true, force: true });
    }
  });
});

describe('data you can trust', () => {
  it('refuses --from/--to asking for more than the data hold, naming the flag and the data read', async () => {
    const args = ['--config', downTick, '--strategies', 'bench/strategies', '--data', data, '--balance', 'USD=10000'];
    const early = await bot([...args, '--out', join(dir, 'span1'), '--from', '2023-03-09T00:00:00Z']);
    expect(early.code).toBe(2);
    expect(early.err.join('\n')).toMatch(
      /^backtest: --from 2023-03-09T00:00:00\.000Z asks for more than the data hold: \S+ have no tick from then until 2023-03-10T00:00:00\.000Z \(the data read span 2023-03-10T00:00:00\.000Z to 2023-03-10T05:59:45\.000Z\); give a --from within the data, or leave it out$/,
    );
    const late = await bot([...args, '--out', join(dir, 'span2'), '--to', '2023-03-11T00:00:00Z']);
    expect(late.code).toBe(2);
    expect(late.err.join('\n')).toMatch(
      /^backtest: --to 2023-03-11T00:00:00\.000Z asks for more than the data hold: .* no tick after 2023-03-10T05:59:45\.000Z/,
    );
    // Within the data (to the end of the last candle): runs.
    const within = await bot([
      ...args,
      '--out',
      join(dir, 'span3'),
      '--from',
      '2023-03-10T00:00:00Z',
      '--to',
      '2023-03-10T06:00:00Z',
    ]);
    expect(within.code, within.err.join('\n')).toBe(0);
  });

  it('stops at a truncated recording naming the file, line and byte, unless --allow-partial, then says how much', async () => {
    const cut = join(dir, 'cut');
    mkdirSync(cut);
    const file = join(cut, 'BTCUSD-2023-03-10.jsonl.gz');
    copyFileSync(join(data, 'BTCUSD-2023-03-10.jsonl.gz'), file);
    const size = statSync(file).size;
    truncateSync(file, Math.floor(size / 2));
    const args = ['--config', downTick, '--strategies', 'bench/strategies', '--data', file, '--balance', 'USD=10000'];
    const refused = await bot([...args, '--out', join(dir, 'p1')]);
    expect(refused.code).toBe(1);
    expect(refused.err).toHaveLength(1);
    expect(refused.err[0]).toMatch(
      new RegExp(
        `${file}:\\d+ \\(compressed byte ${Math.floor(size / 2)}\\): the gzip data ends early \\(truncated\\)`,
      ),
    );
    expect(existsSync(join(dir, 'p1', 'summary.json'))).toBe(false);
    const partial = await bot([...args, '--out', join(dir, 'p2'), '--allow-partial']);
    expect(partial.code, partial.err.join('\n')).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'p2', 'summary.json'), 'utf8')) as BacktestSummary;
    expect(summary.inputs.data[0]?.partial).toMatchObject({
      byte: Math.floor(size / 2),
      reason: 'the gzip data ends early (truncated)',
    });
    expect(summary.fillModel.statements.join(' ')).toMatch(/was read only up to line \d+/);
    // The printed table says so too, not only the files.
    expect(partial.out.join('\n')).toMatch(/PARTIAL DATA: .*BTCUSD-2023-03-10\.jsonl\.gz was read only up to line \d+/);
  });

  it('lists the gaps longer than --max-gap and takes no made-up equity sample inside one', async () => {
    // The candles with two holes: 01:30 to 03:09 (100 minutes: the hourly samples of 02:00 and 03:00 fall in it)
    // and the candle of 04:30 alone (75 s between ticks: over the default bound of a minute).
    const [head, ...rows] = readFileSync(CANDLES, 'utf8').trim().split('\n');
    const missing = (row: string) => {
      const t = row.slice(11, 16);
      return (t >= '01:30' && t < '03:10') || t === '04:30';
    };
    const csv = join(dir, 'holes.csv');
    writeFileSync(csv, [head, ...rows.filter((r) => !missing(r))].join('\n') + '\n');
    const holes = join(dir, 'holes');
    await importBtcusd(csv, holes);
    const read = (out: string) => JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as BacktestSummary;

    const out = join(dir, 'gaps');
    const r = await runOn(holes, out);
    expect(r.code, r.err.join('\n')).toBe(0);
    const summary = read(out);
    expect(summary.maxGapMs).toBe(60_000);
    expect(summary.gaps).toEqual([
      { symbol: 'BTCUSD', from: '2023-03-10T01:29:45.000Z', to: '2023-03-10T03:10:00.000Z', ms: 6_015_000 },
      { symbol: 'BTCUSD', from: '2023-03-10T04:29:45.000Z', to: '2023-03-10T04:31:00.000Z', ms: 75_000 },
    ]);
    const report = readFileSync(join(out, 'report.html'), 'utf8');
    expect(report).toContain('Gaps in the data: 2 longer than 60 s (--max-gap)');
    expect(r.out.join('\n')).toContain(
      'GAPS: 2 stretch(es) without a price longer than 60 s (--max-gap), the longest 100.3 min of BTCUSD from ' +
        '2023-03-10T01:29:45.000Z',
    );
    expect(report).toContain('<td>2023-03-10T01:29:45.000Z</td><td>2023-03-10T03:10:00.000Z</td>');
    const times = csvRecords(join(out, 'equity.csv')).map((row) => row.time);
    expect(times).toContain('2023-03-10T01:00:00.000Z');
    expect(times).not.toContain('2023-03-10T02:00:00.000Z');
    expect(times).not.toContain('2023-03-10T03:00:00.000Z');
    expect(times).toContain('2023-03-10T04:00:00.000Z');

    // The same run with a bound the holes fit in: nothing listed, and the equity of 01:29:45 (the last price
    // before the hole) sampled at 02:00 and again at 03:00. Sharpe without those made-up samples is the one the run above reports.
    const lax = join(dir, 'gaps-lax');
    expect((await runOn(holes, lax, '--max-gap', '2h')).code).toBe(0);
    expect(read(lax)).toMatchObject({ maxGapMs: 7_200_000, gaps: [] });
    const all = csvRecords(join(lax, 'equity.csv'));
    const madeUp = all.filter(
      (row) => row.time === '2023-03-10T02:00:00.000Z' || row.time === '2023-03-10T03:00:00.000Z',
    );
    expect(madeUp).toHaveLength(2);
    expect(madeUp[1]!.equity_USD).toBe(madeUp[0]!.equity_USD);
    const kept = all.filter((row) => !madeUp.includes(row)).map((row) => new D(row.equity_USD!));
    const sharpe = riskRatios(kept, 3_600_000).sharpe!;
    expect(summary.metrics.sharpe).toBe(sharpe.toFixed(4));
    expect(read(lax).metrics.sharpe).not.toBe(summary.metrics.sharpe);
    expect(read(lax).metrics.finalEquity).toBe(summary.metrics.finalEquity);

    // A bound of 90 s lets the missing candle through and still lists the long hole.
    const ninety = join(dir, 'gaps-90');
    expect((await runOn(holes, ninety, '--max-gap', '90s')).code).toBe(0);
    expect(read(ninety).gaps.map((g) => g.ms)).toEqual([6_015_000]);

    // A sweep on the same data says so too: sweep.json lists the gaps its runs replayed, sweep.html warns.
    const sweep = join(dir, 'gaps-sweep');
    const swept = await runOn(holes, sweep, '--sweep', 'quantity=0.01,0.02', '--workers', '1');
    expect(swept.code, swept.err.join('\n')).toBe(0);
    const record = JSON.parse(readFileSync(join(sweep, 'sweep.json'), 'utf8')) as Pick<
      BacktestSummary,
      'maxGapMs' | 'gaps'
    >;
    expect(record).toMatchObject({ maxGapMs: 60_000, gaps: summary.gaps });
    const page = readFileSync(join(sweep, 'sweep.html'), 'utf8');
    expect(page).toContain('Gaps in the data: 2 longer than 60 s (--max-gap)');
    expect(page).toContain('<td>2023-03-10T01:29:45.000Z</td><td>2023-03-10T03:10:00.000Z</td>');
  });

  it('refuses a --max-gap that is not a length, naming the flag', async () => {
    for (const bad of ['0s', '60', 'a minute', '5 min', `${'9'.repeat(400)}s`]) {
      const r = await bot(['--config', downTick, '--strategies', 'bench/strategies', '--data', data, '--max-gap', bad]);
      expect(r.code).toBe(2);
      expect(r.err).toEqual([`backtest: --max-gap expects a length such as 90s, 5m or 2h, got '${bad}'`]);
    }
  });
});
