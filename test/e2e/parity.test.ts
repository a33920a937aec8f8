/**
 * Backtest and paper trading agree (issue 20: one clock). Every shipped strategy (grid, breakout, mean reversion,
 * DCA, EMA trend), with its shipped parameters and risk limits, and a strategy that decides by the clock alone,
 * run together over the first 36 recorded hours `npm start` plays of real data (the BTCUSDT sample from
 * 2023-03-06 09:00, where a new replay starts once the data have filled the EMA trend's hourly warm-up; the
 * recorded days before it warm the candles up on both sides), in the backtester with --from at that time
 * (matching engine in process, virtual clock stepped by the replay loop, each instance's schedule applied) and
 * in the daemon on paper on recordings without PAPER_FROM, as `npm start` (the real composition root, the
 * simulated exchange's HTTP server fed by the replay feed, the signed client, a SQLite file): the same orders
 * and fills, order for order, type, side, price, quantity and time in the data's time. The daemon runs on a
 * virtual clock the test moves through the recording (the only difference from `npm start`, whose replay clock
 * moves at PAPER_SPEED): every recorded ticker and every job fires at its recorded time, each awaited before
 * the next, so the comparison is exact rather than subject to timing.
 *
 * Then the shipped multi-pair file (issue 41: config/ema-trend-usdt.json, a pair list of the five USDT pairs of
 * data/samples/2023-04, maxOpenTrades 3, BTCUSDT's trend read as an informative pair) over an hour of those pairs
 * from PAPER_FROM (--from in the backtest): the same orders and fills per pair, and the same entries refused for
 * the limit. The daemon is paper on recordings of the sample folder, as `PAPER_DATA=data/samples/2023-04 npm start`
 * with the file enabled.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type JobResult, runJob, warmUpMs } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { storeTrace } from '../../src/backtest/runner.js';
import { tradeFills } from '../../src/backtest/summary.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { type ClosedTrade, closedTrades } from '../../src/market/round-trips.js';
import { allTrades } from '../../src/operator/trades.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { DEFAULT_PAPER_BALANCES } from '../../src/sim/sim-server.js';
import { openStore, type Store } from '../../src/store/store.js';
import { recordingFiles, recordedSymbols } from '../../src/record/recording-reader.js';
import { writeSlice } from '../support/recording-slice.js';
import { ROOT } from './daemon-process.js';
import { paperOnVirtualClock } from './paper-on-virtual-clock.js';
import { tempDir } from '../support/temp-dir.js';

const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
/** Where `npm start` replays the sample from (test/e2e/npm-start-lookbacks.test.ts checks its start line). */
const NPM_START_FROM = Date.parse('2023-03-07T21:00:00Z');
const HOURS = 36;
const dir = tempDir('parity');
/** Five USDT pairs over three days of April 2023, each with its rules (data/samples/2023-04/PROVENANCE.md). */
const APRIL = join(ROOT, 'data/samples/2023-04');
/** An hour in which three pairs enter at once (20:30) and the other two are refused by maxOpenTrades. */
const APRIL_FROM = Date.parse('2023-04-14T20:15:00Z');
const APRIL_TO = Date.parse('2023-04-14T21:14:50Z');

/** The daemon's jobs other than the market jobs, the same on both sides. */
const JOBS = { ordersPoll: '30 * * * * *', refresh: '0 */5 * * * *' };

/**
 * The instances: the shipped files' strategies, parameters and risk, on schedules of their own (market jobs
 * between the recorded minutes as well as on them, five distinct schedules), and the clock-reading one.
 */
const INSTANCES: { file: string; schedule: string; params?: Record<string, unknown> }[] = [
  { file: 'grid-btcusdt', schedule: '*/30 * * * * *' },
  { file: 'breakout-btcusdt', schedule: '0 * * * * *' },
  { file: 'mean-reversion-btcusdt', schedule: '15 */2 * * * *' },
  { file: 'dca-btcusdt', schedule: '45 */3 * * * *' },
  // On its shipped hourly candles, warmed up on the recorded days before the start; shorter EMAs than shipped,
  // so that its crosses come within the HOURS (its RSI(14), converged after 140 hours, still sets the start).
  { file: 'ema-trend-btcusdt', schedule: '*/20 * * * * *', params: { fast: 4, slow: 9 } },
  { file: 'on-the-clock', schedule: '0 * * * * *' },
];

/** A strategies folder with the shipped modules and the test's. */
function strategiesFolder(): string {
  const strategiesDir = join(dir, 'strategies');
  mkdirSync(strategiesDir);
  const module = (name: string, file: string) =>
    writeFileSync(join(strategiesDir, `${name}.ts`), `export { default } from '${pathToFileURL(file).href}';\n`);
  for (const name of ['grid', 'breakout', 'mean-reversion', 'dca', 'ema-trend'])
    module(name, join(ROOT, 'strategies', `${name}.ts`));
  module('on-the-clock', join(ROOT, 'test/e2e/strategies/on-the-clock.ts'));
  return strategiesDir;
}
const strategiesDir = strategiesFolder();

const shipped = (name: string) =>
  JSON.parse(readFileSync(join(ROOT, 'config', `${name}.json`), 'utf8')) as Record<string, unknown>;

/** Strategy files in a folder of their own (`folder` under the test's). */
function configs(folder: string, written: { file: string; config: Record<string, unknown> }[]) {
  const configDir = join(dir, folder, 'config');
  mkdirSync(configDir, { recursive: true });
  const files = written.map(({ file, config }) => {
    const path = join(configDir, `${file}.json`);
    writeFileSync(path, JSON.stringify(config));
    return path;
  });
  return { configDir, files };
}

/** The shipped files with the test's schedules and params, and the clock-reading one. */
function shippedConfigs() {
  return configs(
    'btc',
    INSTANCES.map(({ file, schedule, params }) => {
      const config =
        file === 'on-the-clock'
          ? { name: 'on-the-clock', strategy: 'on-the-clock', symbol: 'BTCUSDT', params: {} }
          : shipped(file);
      return { file, config: { ...config, schedule, params: { ...(config.params as object), ...params } } };
    }),
  );
}

/** Each instance's orders and fills in the daemon's journal equal the backtest's. */
function expectSameTraces(store: Store, backtest: JobResult, names: readonly string[]): void {
  for (const name of names) {
    const paper = storeTrace(store, [name]);
    const expected = backtest.run.traces.get(name)!;
    expect({ name, ...paper }).toEqual({ name, ...expected });
  }
}

describe('backtest / paper parity', () => {
  it(
    'every shipped strategy and a clock-reading one place the same orders and get the same fills, at the same recorded times',
    { timeout: 300_000 },
    async () => {
      const { configDir, files } = shippedConfigs();
      // The sample from its first recorded day to HOURS past where npm start's replay starts.
      const recording = join(dir, 'btc', 'BTCUSDT-slice.jsonl.gz');
      const { first, last } = await writeSlice(SAMPLE, recording, 0, NPM_START_FROM + HOURS * 3_600_000);
      // A new replay starts once the data have filled the instances' longest warm-up (the EMA trend's).
      const start = first + warmUpMs(await loadStrategyFiles(configDir, { strategiesDir }));
      expect(new Date(start).toISOString()).toBe(new Date(NPM_START_FROM).toISOString());
      expect(last - start).toBeGreaterThanOrEqual(24 * 3_600_000);

      const data = await loadTicks([recording]);
      const { sources } = await readConfigs(files, strategiesDir);
      const backtest = await runJob(sources, data, {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
        jobs: JOBS,
        from: new Date(start).toISOString(),
      });

      const db = await paperOnVirtualClock({
        dir: join(dir, 'btc'),
        recording,
        configDir,
        strategiesDir,
        jobs: JOBS,
        // No PAPER_FROM, as npm start: the replay starts where the backtest does, the days before warming up.
        from: start,
        to: last,
      });
      const store = openStore({ path: db, clock: wallClock });
      const rules = pairRulesFrom(DEFAULT_PAIRS[0]!);
      try {
        const names = INSTANCES.map(
          ({ file }) => sources.find((s) => s.file.endsWith(`${file}.json`))!.raw.name as string,
        );
        for (const name of names) {
          const expected = backtest.run.traces.get(name)!;
          expect(expected.orders.length, `${name} orders`).toBeGreaterThan(0);
          expect(expected.fills.length, `${name} fills`).toBeGreaterThan(0);
        }
        expectSameTraces(store, backtest, names);

        // Closed trades: the backtest report's table and the daemon's /api/v1/trades, one definition.
        const daemonTrades = allTrades({
          instances: names,
          fills: (i) => store.fills.forInstance(i),
          order: (id) => store.orders.get(id),
          rules: (symbol) => (symbol === 'BTCUSDT' ? rules : undefined),
        }).trades;
        expect(backtest.run.quantitySteps.get('BTCUSDT')?.toFixed()).toBe(rules.stepSize.toFixed());
        const comparable = (t: ClosedTrade) => ({
          quantity: t.quantity.toFixed(),
          entryPrice: t.entryPrice.toFixed(),
          exitPrice: t.exitPrice.toFixed(),
          pnl: t.pnl.toFixed(),
          entryTag: t.entryTag,
          exitTag: t.exitTag,
        });
        const byEntry = (a: ReturnType<typeof comparable>, b: ReturnType<typeof comparable>) =>
          JSON.stringify(a).localeCompare(JSON.stringify(b));
        const backtestTrades = closedTrades(tradeFills(backtest.run));
        expect(backtestTrades.length).toBeGreaterThan(3);
        expect(daemonTrades.map(comparable).sort(byEntry)).toEqual(backtestTrades.map(comparable).sort(byEntry));
      } finally {
        store.close();
      }
    },
  );
  it(
    'the shipped multi-pair file (a pair list of five pairs, maxOpenTrades, an informative pair) places the same orders, gets the same fills and is refused the same entries',
    { timeout: 120_000 },
    async () => {
      // Enabled (the shipped file is off: npm start's default data are BTC only), on a schedule of one firing a
      // recorded ticker (its own fires thrice a ticker, with nothing new to see twice).
      const { configDir, files } = configs('pairs', [
        { file: 'ema-trend-usdt', config: { ...shipped('ema-trend-usdt'), enabled: true, schedule: '*/15 * * * * *' } },
      ]);
      const symbols = await recordedSymbols([APRIL]);
      const data = await loadTicks(await recordingFiles([APRIL], symbols), { to: APRIL_TO });
      const { sources } = await readConfigs(files, strategiesDir);
      const backtest = await runJob(sources, data, {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
        jobs: JOBS,
        from: new Date(APRIL_FROM).toISOString(),
      });
      const db = await paperOnVirtualClock({
        dir: join(dir, 'pairs'),
        recording: APRIL,
        configDir,
        strategiesDir,
        jobs: JOBS,
        from: APRIL_FROM,
        to: APRIL_TO,
        env: { PAPER_FROM: new Date(APRIL_FROM).toISOString() },
      });
      const store = openStore({ path: db, clock: wallClock });
      try {
        const names = symbols.map((s) => `ema-trend-usdt/${s}`);
        expect([...backtest.run.traces.keys()].sort()).toEqual(names);
        expectSameTraces(store, backtest, names);
        // Several pairs traded, and the others were refused their entries by maxOpenTrades, on both sides.
        const traded = names.filter((n) => backtest.run.traces.get(n)!.fills.length > 0);
        expect(traded.length).toBeGreaterThanOrEqual(3);
        const refusals = (rows: { instance: string; reason: string }[]) =>
          [...new Set(rows.map((r) => `${r.instance}: ${r.reason}`))].sort();
        const expected = refusals(backtest.run.log.refusals());
        expect(expected.some((r) => / maxOpenTrades 3 of ema-trend-usdt reached: 3 pairs hold a trade /.test(r))).toBe(
          true,
        );
        const journal = store.events
          .list({ kinds: ['refused'] })
          .map((e) => ({ instance: e.instance!, reason: e.data.reason as string }));
        expect(refusals(journal)).toEqual(expected);
        // The list, worked out at the first market job (15 s in) on the pairs' 24-hour quote volumes, is journaled.
        expect(store.events.list({ kinds: ['pairlist-changed'] }).map((e) => [e.time, e.data])).toEqual([
          [
            APRIL_FROM + 15_000,
            {
              group: 'ema-trend-usdt',
              listed: ['BTCUSDT', 'ETHUSDT', 'XRPUSDT', 'SOLUSDT', 'ADAUSDT'],
              added: ['BTCUSDT', 'ETHUSDT', 'XRPUSDT', 'SOLUSDT', 'ADAUSDT'],
              removed: [],
            },
          ],
        ]);
      } finally {
        store.close();
      }
    },
  );
});
