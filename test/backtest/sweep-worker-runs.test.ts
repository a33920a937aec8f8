/**
 * A sweep's worker runs backtest after backtest on one data object: the candle path's walk on copies of the
 * columns is made once per path and taken again by the runs that follow (CandleWalks), each with its own
 * CandleInfo, and no report chart is gathered (RunOptions.charts). The runs give exactly what a run alone gives.
 */
import { expect, it } from 'vitest';
import { CandleWalks } from '../../src/backtest/candle-ticks.js';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';

const APRIL_BTC = 'data/samples/2023-04/BTCUSDT-2023-04-13_15.jsonl.gz';

it('walks candles once per path for the runs on one data object, gathers no chart, and runs as a run alone', async () => {
  const from = Date.parse('2023-04-15T00:00:00Z');
  const data = await loadTicks([APRIL_BTC], { from, to: from + 6 * 3_600_000 });
  const { sources } = await readConfigs(['config/grid-btcusdt.json']);
  const walks = new CandleWalks();
  const first = walks.of(data, 'nearer-first');
  const again = walks.of(data, 'nearer-first');
  expect(first.candles).toBeGreaterThan(300);
  expect(again.data.columns.price).toBe(first.data.columns.price);
  expect(again.data.columns.price).not.toBe(data.columns.price); // a copy: the loaded columns stay as recorded
  expect(again.volume).not.toBe(first.volume);
  expect(walks.of(data, 'longest').data.columns.price).not.toBe(first.data.columns.price);

  const settings = { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '1000', BTC: '0.002' } };
  for (const spacingPct of ['0.1', '0.2', '0.1']) {
    const shared = await runJob(sources, data, settings, { spacingPct }, { walks, charts: false });
    const own = await runJob(sources, data, settings, { spacingPct });
    expect(shared.run.fills.length).toBeGreaterThan(2);
    expect(shared.run.charts).toEqual([]);
    expect(own.run.charts.map((c) => c.symbol)).toEqual(['BTCUSDT']);
    expect(shared.run.trace).toEqual(own.run.trace);
    expect(shared.run.equity).toEqual(own.run.equity);
    expect(shared.summary.metrics).toEqual(own.summary.metrics);
  }
});
