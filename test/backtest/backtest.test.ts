/**
 * The backtester end to end on a two-day slice of the sample recording with the real grid strategy: exact
 * accounting, fills only at prices the recording reached, byte-identical outputs, a self-contained report,
 * and the CLI's errors.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobResult, runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { equityCsv } from '../../src/backtest/report-files.js';
import { reportHtml } from '../../src/backtest/report-html.js';
import { checkAccounting } from '../../src/backtest/runner.js';
import { type ConfigSource, readConfigs } from '../../src/backtest/strategy-configs.js';
import { CronSchedule } from '../../src/clocks/cron-schedule.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { D, type Dec, ZERO } from '../../src/market/decimal.js';
import { bot, FROM, gridConfig, SAMPLE, sliceFlags, TO } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { columnValues, valueAt } from '../../src/backtest/number-column.js';

const dir = tempDir('backtest-test');
let data: TickData;
let sources: ConfigSource[];
let result: JobResult;

beforeAll(async () => {
  data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
  ({ sources } = await readConfigs([gridConfig(dir, { initialBase: '0.002' })]));
  result = await runJob(sources, data, { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '1000', BTC: '0.002' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** stdout and stderr lines of one CLI call, and its exit code. */
/** The chart data report.html embeds. */
interface ReportData {
  symbols: {
    symbol: string;
    chart: { start: number; step: number; candles: ([number, number, number, number] | null)[] };
    fills: [number, number, number][];
  }[];
  equity: [number, number][];
}

function embeddedData(html: string): ReportData {
  const json = /<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)?.[1];
  return JSON.parse(json!) as ReportData;
}

describe('accounting', () => {
  it('ends with the initial balances plus the fills minus the fees, exactly', () => {
    const { run } = result;
    expect(run.fills.length).toBeGreaterThan(4);
    expect(new Set(run.fills.map((f) => f.side))).toEqual(new Set(['BUY', 'SELL']));
    const expected: Record<string, Dec> = { USDT: new D('1000'), BTC: new D('0.002') };
    for (const f of run.fills) {
      const sign = f.side === 'BUY' ? 1 : -1;
      expected.BTC = expected.BTC!.plus(f.baseQty.mul(sign));
      expected.USDT = expected.USDT!.minus(f.quoteQty.mul(sign));
      expected[f.feeAsset.code] = expected[f.feeAsset.code]!.minus(f.fee);
    }
    expect(run.final.BTC!.toFixed()).toBe(expected.BTC!.toFixed());
    expect(run.final.USDT!.toFixed()).toBe(expected.USDT!.toFixed());
    expect(result.summary.balances.final).toEqual({ BTC: expected.BTC!.toFixed(), USDT: expected.USDT!.toFixed() });
  });

  it('treats any difference as an error', () => {
    const { run } = result;
    const pairs = new Map([['BTCUSDT', { base: 'BTC', quote: 'USDT' }]]);
    expect(() => checkAccounting(run.initial, run.final, run.fills, pairs)).not.toThrow();
    const off = { ...run.final, USDT: run.final.USDT!.plus('0.00000001') };
    expect(() => checkAccounting(run.initial, off, run.fills, pairs)).toThrow(/USDT: expected .* holds/);
  });

  it('fills limits only at prices the recording reached while the order was open', () => {
    const { run } = result;
    const { time, price } = data.columns;
    for (const f of run.fills) {
      const order = run.orderOwner.get(f.orderId)!;
      expect(order.type).toBe('LIMIT');
      let low = Infinity;
      let high = -Infinity;
      for (let i = 0; i < data.length; i++) {
        const t = valueAt(time, i);
        if (t < order.createdAt || t > f.time) continue;
        low = Math.min(low, valueAt(price, i));
        high = Math.max(high, valueAt(price, i));
      }
      const p = f.price.toNumber();
      expect(p).toBeGreaterThanOrEqual(low);
      expect(p).toBeLessThanOrEqual(high);
    }
  });

  it('exposes the order and fill sequence for parity checks', () => {
    const { trace, fills, orders } = result.run;
    expect(trace.orders).toHaveLength(orders.length);
    expect(trace.fills).toHaveLength(fills.length);
    // At the first firing of the instance's schedule after the first tick, as on paper.
    const schedule = new CronSchedule(String(sources[0]!.raw.schedule));
    expect(trace.orders[0]).toEqual({
      time: schedule.next(Date.parse(FROM)),
      type: 'LIMIT',
      side: orders[0]!.side,
      price: orders[0]!.price,
      quantity: '0.001',
    });
    // The engine's recorded fills (what a daemon's database holds) are the venue's fills, one for one.
    expect(trace.fills.map((f) => [f.type, f.side, new D(f.price!).toFixed(), new D(f.quantity!).toFixed()])).toEqual(
      fills.map((f) => ['LIMIT', f.side, f.price.toFixed(), f.baseQty.toFixed()]),
    );
  });

  it('reports the fees it charged', () => {
    const { metrics } = result.summary;
    const fees = result.run.fills.reduce((sum, f) => (f.feeAsset.code === 'USDT' ? sum.plus(f.fee) : sum), ZERO);
    expect(metrics.fees.USDT).toBe(fees.toFixed());
    expect(metrics.fills).toBe(result.run.fills.length);
  });
});

describe('closed trades of the grid', () => {
  it("pair each slot's sale with its own buy (the sell names it), so every round trip of the grid wins", async () => {
    const { sources: grid } = await readConfigs([gridConfig(dir, { spacingPct: '0.25', levels: 8 })]);
    const { summary } = await runJob(grid, data, DEFAULT_JOB_SETTINGS);
    const level = (tag: string | null) => Number(/^grid:(-?\d+):/.exec(tag ?? '')?.[1]);
    expect(summary.trades.length).toBeGreaterThan(10);
    // A slot buys at level j and sells at level j + 1: first in, first out paired other levels' buys.
    for (const t of summary.trades) expect(level(t.exitTag) - level(t.entryTag), JSON.stringify(t)).toBe(1);
    // 0.25 % apart with 0.1 % fees each side: each slot's round trip gains.
    expect(summary.metrics.winRatePct).toBe('100.000000');
    expect(summary.pairing).toMatch(/^by the entry each exit names/);
  });
});

describe('a venue without cancel (--no-cancel)', () => {
  it('never cancels: the breakout re-prices its entry by cancelling only where it can', async () => {
    const { sources: breakout } = await readConfigs(['config/breakout-btcusdt.json']);
    const settings = { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '1000', BTC: '0' } };
    const canceled = (r: JobResult) => r.run.orders.filter((o) => o.status === 'CANCELED').length;
    const withCancel = await runJob(breakout, data, settings);
    const without = await runJob(breakout, data, { ...settings, cancel: false });
    expect(canceled(withCancel)).toBeGreaterThan(0);
    expect(canceled(without)).toBe(0);
    expect(without.run.orders.length).toBeGreaterThan(0);
  });
});

describe('the command', () => {
  const args = (out: string) =>
    sliceFlags(gridConfig(dir, { initialBase: '0.002' }), out, ['--balance', 'USDT=1000,BTC=0.002']);
  const files = ['summary.json', 'orders.csv', 'fills.csv', 'equity.csv', 'log.jsonl', 'report.html'];

  it('writes byte-identical outputs for identical inputs, matching the run in process', async () => {
    const a = await bot(args(join(dir, 'a')));
    const b = await bot(args(join(dir, 'b')));
    expect(a.code).toBe(0);
    expect(b.code).toBe(0);
    for (const f of files) expect(readFileSync(join(dir, 'b', f))).toEqual(readFileSync(join(dir, 'a', f)));
    const summary = JSON.parse(readFileSync(join(dir, 'a', 'summary.json'), 'utf8')) as typeof result.summary;
    expect(summary.metrics).toEqual(result.summary.metrics);
    expect(summary.inputs.data[0]!.sha256).toMatch(/^[0-9a-f]{64}$/);
    // The strategy code's version: the module file that ran and its hash.
    const grid = readFileSync('strategies/grid.ts');
    expect(summary.inputs.configs[0]!.module).toEqual({
      file: 'strategies/grid.ts',
      sha256: createHash('sha256').update(grid).digest('hex'),
    });
    expect(a.out.join('\n')).toMatch(new RegExp(`total return % +${result.summary.metrics.totalReturnPct}`));
  });

  it('writes a self-contained report with the data embedded', () => {
    const html = readFileSync(join(dir, 'a', 'report.html'), 'utf8');
    expect(html).not.toMatch(/<(script|img|iframe)[^>]+src\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).not.toMatch(/<link[^>]+href\s*=\s*["']?\s*(https?:)?\/\//i);
    expect(html).toContain('TradingView Lightweight Charts');
    expect(html).toMatch(/@license/);
    const embedded = embeddedData(html);
    expect(embedded.symbols.map((s) => s.symbol)).toEqual(['BTCUSDT']);
    const [btc] = embedded.symbols;
    expect(btc!.fills).toHaveLength(result.run.fills.length);
    // Candles of the two days, a minute each (the finest that draws them in at most 3,000), and the equity at the
    // end of each.
    expect(btc!.chart.step).toBe(60_000);
    expect(btc!.chart.candles.length).toBe((Date.parse(TO) - Date.parse(FROM)) / 60_000);
    expect(embedded.equity).toHaveLength(btc!.chart.candles.filter((c) => c !== null).length);
    // Rounded for reading: percentages to two places (summary.json has them exact).
    expect(html).toContain(
      `<th>Total return %</th><td>${new D(result.summary.metrics.totalReturnPct).toFixed(2)}</td>`,
    );
  });

  it.each([
    [['--config', 'config/grid-btcusdt.json'], /--data is required/],
    [['--data', SAMPLE], /--config is required/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--fee', 'abc'], /--fee/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--from', 'yesterday'], /--from/],
    [
      ['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--balance', 'XYZ=1'],
      /--balance: XYZ is not an asset of the pairs replayed \(they have BTC, USDT/,
    ],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--workers', '0'], /--workers/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--bogus'], /bogus/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--sweep', 'levels'], /--sweep/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--set', 'levels'], /--set: expected key=value/],
    [['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--set', 'levels=3,6'], /--set levels: one value/],
    [
      ['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--set', 'levels=6', '--sweep', 'levels=3,4'],
      /levels is given twice \(--set levels and --sweep levels\)/,
    ],
    [
      ['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--set', 'levels=6', '--set', 'params.levels=3'],
      /params\.levels is given twice \(--set levels and --set params\.levels\)/,
    ],
    [
      ['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--set', 'levels=0'],
      /grid-btcusdt\.json \(with levels=0\): params\.levels/,
    ],
  ])('refuses bad flags with one line naming the flag: %j', async (argv, message) => {
    const r = await bot(argv);
    expect(r.code).not.toBe(0);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
  });

  it('runs with --set as the same combination of a sweep would, leaving the file as it is', async () => {
    const file = gridConfig(dir);
    const base = ['--config', file, '--data', SAMPLE, '--from', FROM, '--to', TO];
    const swept = await bot([...base, '--sweep', 'levels=3,6', '--out', join(dir, 'swept')]);
    expect(swept.code).toBe(0);
    expect(swept.err.join('\n')).toMatch(/run it alone with --set levels=[36]$/m);
    const { results } = JSON.parse(readFileSync(join(dir, 'swept', 'sweep.json'), 'utf8')) as {
      results: { overrides: { levels: number }; metrics: unknown }[];
    };
    const six = results.find((r) => r.overrides.levels === 6)!;

    const alone = await bot([...base, '--set', 'levels=6', '--out', join(dir, 'set')]);
    expect(alone.code).toBe(0);
    const summary = JSON.parse(readFileSync(join(dir, 'set', 'summary.json'), 'utf8')) as typeof result.summary;
    expect(summary.metrics).toEqual(six.metrics);
    expect(summary.inputs.overrides).toEqual({ levels: 6 });
    expect(summary.inputs.configs[0]!.config).toMatchObject({ params: { levels: 6 } });
    expect(readFileSync(join(dir, 'set', 'report.html'), 'utf8')).toContain('override levels = 6');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ params: { levels: 4 } });

    // Without --out, a run with --set has a folder of its own beside the plain run's.
    const own = await bot(base.concat('--set', 'levels=6'));
    const made = /report in (\S+)$/m.exec(own.err.join('\n'))?.[1];
    try {
      expect(own.code).toBe(0);
      expect(made).toMatch(/^backtests\/grid-test-BTCUSDT-2023-03-01_21-levels_6-[0-9a-f]{10}$/);
    } finally {
      if (made !== undefined) rmSync(made, { recursive: true, force: true });
    }
  });

  it('refuses a --set key that means different types in two strategy files run together', async () => {
    const other = join(dir, 'grid-number.json');
    const text = readFileSync(gridConfig(dir), 'utf8');
    writeFileSync(other, text.replace('"spacingPct":"0.4"', '"spacingPct":0.4').replace('grid-test', 'grid-number'));
    expect(readFileSync(other, 'utf8')).toContain('"spacingPct":0.4');
    const r = await bot(['--config', gridConfig(dir), '--config', other, '--data', SAMPLE, '--set', 'spacingPct=0.5']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual([
      expect.stringMatching(/--set spacingPct: .*grid-test\.json and .*grid-number\.json give it different types/),
    ]);
  });

  it('reads a folder of day files as the recorder writes them, opening only the days in the window', async () => {
    // The sample cut into the recorder's layout: <folder>/BTCUSDT/YYYY-MM-DD.jsonl.gz, a header line each.
    const [header, ...lines] = gunzipSync(readFileSync(SAMPLE)).toString('utf8').trimEnd().split('\n');
    const days = new Map<string, string[]>();
    for (const line of lines) {
      const day = new Date((JSON.parse(line) as { t: number }).t).toISOString().slice(0, 10);
      days.set(day, [...(days.get(day) ?? []), line]);
    }
    const folder = join(dir, 'recordings');
    mkdirSync(join(folder, 'BTCUSDT'), { recursive: true });
    for (const [day, dayLines] of days)
      writeFileSync(join(folder, 'BTCUSDT', `${day}.jsonl.gz`), gzipSync(`${[header, ...dayLines].join('\n')}\n`));
    // A day outside --from/--to that would fail to parse: read, it would fail the run.
    writeFileSync(join(folder, 'BTCUSDT', '2023-03-20.jsonl.gz'), 'not a recording');

    // The same through a symbolic link to the symbol's folder.
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    symlinkSync(join(folder, 'BTCUSDT'), join(linked, 'BTCUSDT'));

    const withFolder = (data: string) => args(join(dir, 'folder')).map((a) => (a === SAMPLE ? data : a));
    // A folder and its symbol folder both given: each file read once.
    for (const data of [folder, join(folder, 'BTCUSDT'), linked, `${folder},${join(folder, 'BTCUSDT')}`]) {
      const r = await bot(withFolder(data));
      expect(r.code).toBe(0);
      const summary = JSON.parse(readFileSync(join(dir, 'folder', 'summary.json'), 'utf8')) as typeof result.summary;
      expect(summary.metrics).toEqual(result.summary.metrics);
      // 2023-03-09 and -10, not the other days of the folder.
      expect(summary.inputs.data.map((d) => d.name)).toEqual(['BTCUSDT-2023-03-09', 'BTCUSDT-2023-03-10']);
    }
    // A folder with another symbol's recordings only is refused, not read.
    const other = join(dir, 'ETHUSDT');
    mkdirSync(other);
    writeFileSync(join(other, '2023-03-09.jsonl.gz'), 'not read either');
    for (const none of [join(dir, 'empty'), other]) {
      mkdirSync(none, { recursive: true });
      const r = await bot(withFolder(none));
      expect(r.code).toBe(1);
      expect(r.err).toEqual([expect.stringMatching(/(empty|ETHUSDT): no recordings of BTCUSDT in this folder/)]);
    }
  });

  it('names a missing data file or config file', async () => {
    const data = await bot(['--config', 'config/grid-btcusdt.json', '--data', join(dir, 'missing.jsonl.gz')]);
    expect(data.code).toBe(1);
    expect(data.err).toEqual([expect.stringContaining('missing.jsonl.gz') as string]);
    const config = await bot(['--config', join(dir, 'none.json'), '--data', SAMPLE]);
    expect(config.code).toBe(1);
    expect(config.err).toEqual([expect.stringContaining('none.json') as string]);
  });
});

describe('two symbols on one account', () => {
  it('charts each symbol with its own fills, and one equity line over both', async () => {
    // ETHUSDT: the sample's ticks with the prices scaled down, as a second recording.
    const eth = join(dir, 'ETHUSDT-test.jsonl.gz');
    const scaled = gunzipSync(readFileSync(SAMPLE))
      .toString('utf8')
      .split('\n')
      .filter((line) => line.startsWith('{"s":'))
      .map((line) => {
        const t = JSON.parse(line) as Record<string, number>;
        const scale = (x: number) => Math.round((x / 15) * 100) / 100;
        return JSON.stringify({ ...t, s: 'ETHUSDT', b: 'ETH', bi: 4, p: scale(t.p!), h: scale(t.h!), l: scale(t.l!) });
      });
    writeFileSync(eth, gzipSync(`${scaled.join('\n')}\n`));
    const ethDir = join(dir, 'eth');
    mkdirSync(ethDir);
    const ethConfig = join(ethDir, 'grid-eth.json');
    writeFileSync(
      ethConfig,
      JSON.stringify({
        name: 'grid-eth',
        strategy: 'grid',
        symbol: 'ETHUSDT',
        params: { levels: 4, spacingPct: '0.4', quantity: '0.01' },
        risk: { maxOrderNotional: '50', maxOpenOrders: 12 },
      }),
    );
    const both = await loadTicks([SAMPLE, eth], { from: Date.parse(FROM), to: Date.parse(TO) });
    const { sources } = await readConfigs([gridConfig(dir), ethConfig]);
    const { run, summary } = await runJob(sources, both, { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '2000' } });

    const embedded = embeddedData(await reportHtml(run, summary));
    expect(embedded.symbols.map((s) => s.symbol)).toEqual(['BTCUSDT', 'ETHUSDT']);
    for (const s of embedded.symbols) {
      const fills = run.fills.filter((f) => f.symbol === s.symbol);
      expect(fills.length).toBeGreaterThan(2);
      expect(s.fills).toHaveLength(fills.length);
      // Every fill sits in a candle of its own symbol's chart, within its low and high.
      const { start, step, candles } = s.chart;
      for (const f of fills) {
        const candle = candles[Math.floor((f.time - start) / step)];
        expect(candle, `fill at ${f.time}`).not.toBeNull();
        expect(f.price.toNumber()).toBeGreaterThanOrEqual(candle![2]);
        expect(f.price.toNumber()).toBeLessThanOrEqual(candle![1]);
      }
    }
    // ETH's candles are ETH's prices, not BTC's.
    expect(Math.max(...embedded.symbols[1]!.chart.candles.map((c) => c?.[1] ?? 0))).toBeLessThan(3000);

    // equity.csv: each symbol's price and base asset, and each row's equity is the quote plus their products.
    const [header, ...rows] = equityCsv(run).trimEnd().split('\n');
    expect(header).toBe('time,equity_USDT,quote_USDT,price_BTCUSDT,base_BTC,price_ETHUSDT,base_ETH');
    expect(rows).toHaveLength(run.equity.length);
    for (const row of rows) {
      const [, equity, quote, btcPrice, btc, ethPrice, eth] = row.split(',');
      // A symbol before its first tick has no price yet (an empty cell) and counts for nothing.
      const worth = (qty: string, price: string) => (price === '' ? ZERO : new D(qty).mul(price));
      const value = new D(quote!).plus(worth(btc!, btcPrice!)).plus(worth(eth!, ethPrice!));
      expect(value.toFixed()).toBe(new D(equity!).toFixed());
    }
    // At the first sample only the first symbol has had a tick.
    expect(rows[0]!.split(',')[5]).toBe('');
    const last = rows.at(-1)!.split(',');
    expect([Number(last[3]), Number(last[5])]).toEqual(run.priceRange.map((r) => r.last));
    expect(new Set(rows.map((r) => r.split(',')[6])).size).toBeGreaterThan(1);
    const times = embedded.equity.map(([t]) => t);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    // One equity point at the end of each candle either symbol ticked in.
    const ticked = new Set(
      embedded.symbols.flatMap(({ chart }) =>
        chart.candles.flatMap((c, k) => (c === null ? [] : [chart.start + k * chart.step])),
      ),
    );
    expect(times).toEqual([...ticked].sort((a, b) => a - b));

    // Buy and hold: both symbols held in equal parts, whichever config comes first.
    const changes = both.symbols.map((_, s) => {
      const prices = columnValues(both.columns.price).filter((_p, i) => both.columns.sym[i] === s);
      return new D(prices[prices.length - 1]!).minus(prices[0]!).div(prices[0]!);
    });
    const expected = changes[0]!.plus(changes[1]!).div(2).mul(100).toDecimalPlaces(6).toFixed(6);
    expect(summary.metrics.buyAndHoldPct).toBe(expected);
    const reversed = await readConfigs([ethConfig, gridConfig(dir)]);
    const ethFirst = await runJob(reversed.sources, both, { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '2000' } });
    expect(ethFirst.summary.metrics.buyAndHoldPct).toBe(expected);
  });
});
