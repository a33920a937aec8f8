/**
 * Paper on recordings starting at a replay position (PAPER_FROM) decides from its first tick with full lookbacks,
 * as a backtest from that time does: the strategies' candles and indicators warm up on the recording's data before
 * the position. The daemon (the real composition root, the simulated exchange's HTTP server fed by the replay
 * feed, the signed client, a SQLite file) on a virtual clock the test moves through the recording, against the
 * backtester with --from at the same time, order for order; and a backtest of the same hours without the data
 * before them decides otherwise, so the warm-up is what makes them agree. Without PAPER_FROM (as `npm start`), a
 * new replay starts once the data have filled the instances' warm-up (warmUpMs after the recording's first
 * ticker), again order for order with a backtest --from that time.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runJob, warmUpMs } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { storeTrace } from '../../src/backtest/runner.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { DEFAULT_PAPER_BALANCES } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { writeSlice } from '../support/recording-slice.js';
import { ROOT } from './daemon-process.js';
import { paperOnVirtualClock } from './paper-on-virtual-clock.js';
import { tempDir } from '../support/temp-dir.js';
import { ema } from '../../src/strategy/api.js';

const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
const HOUR = 3_600_000;
const DATA_FROM = Date.parse('2023-03-10T00:00:00Z');
/** Where the paper replay and the backtest start: 12 recorded hours in, 12 before the end. */
const START = DATA_FROM + 12 * HOUR;
const DATA_TO = DATA_FROM + 24 * HOUR;
const JOBS = { ordersPoll: '30 * * * * *', refresh: '0 */5 * * * *' };
/**
 * 15-minute candles, a slow EMA of 8 converged after 37 of them (9 h 15), the longest warm-up of the four: all of it
 * before START.
 */
const PARAMS = { timeframe: '15m', fast: 3, slow: 8, rsiPeriod: 3, rsiMax: 80, atrPeriod: 3 };
const COLD_WAIT = ema('15m', 8).warmUp * 15 * 60_000;

const dir = tempDir('paper-warm-up');

function strategyFiles(under = '.'): { configDir: string; strategiesDir: string; file: string } {
  const configDir = join(dir, under, 'config');
  const strategiesDir = join(dir, under, 'strategies');
  mkdirSync(configDir, { recursive: true });
  mkdirSync(strategiesDir, { recursive: true });
  writeFileSync(
    join(strategiesDir, 'ema-trend.ts'),
    `export { default } from '${pathToFileURL(join(ROOT, 'strategies/ema-trend.ts')).href}';\n`,
  );
  const shipped = JSON.parse(readFileSync(join(ROOT, 'config/ema-trend-btcusdt.json'), 'utf8')) as {
    params: object;
  };
  const file = join(configDir, 'ema-trend.json');
  writeFileSync(
    file,
    JSON.stringify({ ...shipped, schedule: '*/20 * * * * *', params: { ...shipped.params, ...PARAMS } }),
  );
  return { configDir, strategiesDir, file };
}

describe('paper on recordings from a replay position', () => {
  it('decides from its first tick with the lookback a backtest from that time has', { timeout: 300_000 }, async () => {
    const recording = join(dir, 'BTCUSDT-day.jsonl.gz');
    const { last } = await writeSlice(SAMPLE, recording, DATA_FROM, DATA_TO);
    const { configDir, strategiesDir, file } = strategyFiles();
    const { sources } = await readConfigs([file], strategiesDir);
    const name = sources[0]!.raw.name as string;
    const settings = { ...DEFAULT_JOB_SETTINGS, balances: { ...DEFAULT_PAPER_BALANCES }, jobs: JOBS };

    const warm = await runJob(sources, await loadTicks([recording]), {
      ...settings,
      from: new Date(START).toISOString(),
    });
    const expected = warm.run.traces.get(name)!;
    expect(expected.orders.length).toBeGreaterThan(1);

    // The same hours without the data before them: the strategy waits for its lookback and decides otherwise.
    const cold = join(dir, 'BTCUSDT-from-start.jsonl.gz');
    await writeSlice(SAMPLE, cold, START, DATA_TO);
    const coldRun = await runJob(sources, await loadTicks([cold]), settings);
    expect(coldRun.run.traces.get(name)!.orders).not.toEqual(expected.orders);
    // The first order comes before a cold start could have made one (its slow EMA converges after COLD_WAIT).
    expect(COLD_WAIT).toBeLessThan(12 * HOUR);
    expect(Math.min(...expected.orders.map((o) => o.time))).toBeLessThan(START + COLD_WAIT);

    const db = await paperOnVirtualClock({
      dir,
      recording,
      configDir,
      strategiesDir,
      jobs: JOBS,
      from: START,
      to: last,
      env: { PAPER_FROM: new Date(START).toISOString() },
    });
    const store = openStore({ path: db, clock: wallClock });
    try {
      expect(storeTrace(store, [name])).toEqual(expected);
    } finally {
      store.close();
    }
  });
  it(
    'without PAPER_FROM starts once the data have filled the warm-up, deciding as a backtest from that time',
    { timeout: 300_000 },
    async () => {
      // Two recorded days: the warm-up (the slow EMA's 37 quarter-hours, converged, and a day) fits, and hours are left after it.
      const recording = join(dir, 'BTCUSDT-two-days.jsonl.gz');
      const { first, last } = await writeSlice(SAMPLE, recording, DATA_FROM - 24 * HOUR, DATA_TO);
      const { configDir, strategiesDir, file } = strategyFiles('default-start');
      const instances = await loadStrategyFiles(configDir, { strategiesDir });
      const start = first + warmUpMs(instances);
      expect(start).toBeLessThan(last - 6 * HOUR);
      const { sources } = await readConfigs([file], strategiesDir);
      const name = sources[0]!.raw.name as string;
      const backtest = await runJob(sources, await loadTicks([recording]), {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
        jobs: JOBS,
        from: new Date(start).toISOString(),
      });
      const expected = backtest.run.traces.get(name)!;
      expect(expected.orders.length).toBeGreaterThan(1);

      const db = await paperOnVirtualClock({
        dir: join(dir, 'default-start'),
        recording,
        configDir,
        strategiesDir,
        jobs: JOBS,
        from: start,
        to: last,
      });
      const store = openStore({ path: db, clock: wallClock });
      try {
        expect(storeTrace(store, [name])).toEqual(expected);
        // It started where the warm-up ends: no order before it.
        expect(Math.min(...expected.orders.map((o) => o.time))).toBeGreaterThanOrEqual(start);
      } finally {
        store.close();
      }
    },
  );
});
