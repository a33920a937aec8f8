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
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runJob, warmUpMs } from '../../src/backtest/job.js';
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
import { openStore } from '../../src/store/store.js';
import { writeSlice } from '../support/recording-slice.js';
import { ROOT } from './daemon-process.js';
import { paperOnVirtualClock } from './paper-on-virtual-clock.js';
import { tempDir } from '../support/temp-dir.js';

const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
/** Where `npm start` replays the sample from (test/e2e/npm-start-lookbacks.test.ts checks its start line). */
const NPM_START_FROM = Date.parse('2023-03-07T21:00:00Z');
const HOURS = 36;
const dir = tempDir('parity');

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

/** Strategy files in a folder of their own, and a strategies folder with the shipped ones and the test's. */
function configs(): { configDir: string; strategiesDir: string; files: string[] } {
  const configDir = join(dir, 'config');
  const strategiesDir = join(dir, 'strategies');
  mkdirSync(configDir);
  mkdirSync(strategiesDir);
  const module = (name: string, file: string) =>
    writeFileSync(join(strategiesDir, `${name}.ts`), `export { default } from '${pathToFileURL(file).href}';\n`);
  for (const name of ['grid', 'breakout', 'mean-reversion', 'dca', 'ema-trend'])
    module(name, join(ROOT, 'strategies', `${name}.ts`));
  module('on-the-clock', join(ROOT, 'test/e2e/strategies/on-the-clock.ts'));
  const shipped = (name: string) =>
    JSON.parse(readFileSync(join(ROOT, 'config', `${name}.json`), 'utf8')) as Record<string, unknown>;
  const files: string[] = [];
  for (const { file, schedule, params } of INSTANCES) {
    const config =
      file === 'on-the-clock'
        ? { name: 'on-the-clock', strategy: 'on-the-clock', symbol: 'BTCUSDT', params: {} }
        : shipped(file);
    const path = join(configDir, `${file}.json`);
    writeFileSync(path, JSON.stringify({ ...config, schedule, params: { ...(config.params as object), ...params } }));
    files.push(path);
  }
  return { configDir, strategiesDir, files };
}

describe('backtest / paper parity', () => {
  it(
    'every shipped strategy and a clock-reading one place the same orders and get the same fills, at the same recorded times',
    { timeout: 300_000 },
    async () => {
      const { configDir, strategiesDir, files } = configs();
      // The sample from its first recorded day to HOURS past where npm start's replay starts.
      const recording = join(dir, 'BTCUSDT-slice.jsonl.gz');
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
        dir,
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
        const names: string[] = [];
        for (const { file } of INSTANCES) {
          const name = sources.find((s) => s.file.endsWith(`${file}.json`))!.raw.name as string;
          names.push(name);
          const paper = storeTrace(store, [name]);
          const expected = backtest.run.traces.get(name)!;
          expect(expected.orders.length, `${name} orders`).toBeGreaterThan(0);
          expect(expected.fills.length, `${name} fills`).toBeGreaterThan(0);
          expect({ name, ...paper }).toEqual({ name, ...expected });
        }

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
});
