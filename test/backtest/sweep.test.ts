/** A 2 x 2 sweep on worker threads gives, per combination, exactly what the same run alone gives, ranked. */
import { rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { DEFAULT_JOB_SETTINGS, runJob } from '../../src/backtest/job.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { parseSweep, runSweep, type SweepProgress, sweepGrid } from '../../src/backtest/sweep.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { D } from '../../src/market/decimal.js';
import { FROM, gridConfig, SAMPLE, tempDir } from './fixtures.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('runs a 2 x 2 grid on two workers, identical to each combination run alone, ranked', async () => {
  const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(FROM) + 8 * 3_600_000 });
  const { sources } = await readConfigs([gridConfig(dir)]);
  const axes = [parseSweep('spacingPct=0.3,0.5', sources), parseSweep('risk.maxOpenOrders=3,12', sources)];
  expect(axes.map((a) => a.values)).toEqual([
    ['0.3', '0.5'],
    [3, 12],
  ]);
  const combos = sweepGrid(axes);
  expect(combos).toEqual([
    { spacingPct: '0.3', 'risk.maxOpenOrders': 3 },
    { spacingPct: '0.3', 'risk.maxOpenOrders': 12 },
    { spacingPct: '0.5', 'risk.maxOpenOrders': 3 },
    { spacingPct: '0.5', 'risk.maxOpenOrders': 12 },
  ]);
  const settings = { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '1000', BTC: '0.002' } };
  const seen: SweepProgress[] = [];
  const results = await runSweep({ sources, data, settings, combos }, 2, (p) => seen.push(p));

  expect(results.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
  expect(new Set(results.map((r) => r.index))).toEqual(new Set([0, 1, 2, 3]));
  for (const r of results) {
    const alone = await runJob(sources, data, settings, r.overrides);
    expect(r.metrics).toEqual(alone.summary.metrics);
    expect(alone.summary.inputs.configs[0]!.config).toMatchObject({
      params: { spacingPct: r.overrides.spacingPct },
      risk: { maxOpenOrders: r.overrides['risk.maxOpenOrders'] },
    });
  }
  // Progress: ticks over all combinations, never going back, ending with every combination's every tick.
  const perRun = (await runJob(sources, data, settings)).summary.period.ticks;
  expect(perRun).toBeGreaterThan(0);
  expect(seen.at(-1)).toEqual({ runs: 4, runsTotal: 4, ticks: 4 * perRun, ticksTotal: 4 * perRun });
  expect(seen.map((p) => p.runs)).toContain(1);
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i]!.ticks).toBeGreaterThanOrEqual(seen[i - 1]!.ticks);
    expect(seen[i]!.runs).toBeGreaterThanOrEqual(seen[i - 1]!.runs);
  }
  // Different params must make different runs, or this test proves nothing.
  expect(new Set(results.map((r) => r.metrics.fills)).size).toBeGreaterThan(1);
  for (let i = 1; i < results.length; i++) {
    expect(new D(results[i - 1]!.metrics.totalReturnPct).gte(results[i]!.metrics.totalReturnPct)).toBe(true);
  }
});

it('refuses a sweep value that does not fit the key', async () => {
  const { sources } = await readConfigs([gridConfig(dir)]);
  expect(() => parseSweep('levels=3,many', sources)).toThrow(/--sweep levels: expected numbers, found 'many'/);
  const bad = sweepGrid([parseSweep('levels=0', sources)]);
  const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(FROM) + 3_600_000 });
  await expect(runJob(sources, data, DEFAULT_JOB_SETTINGS, bad[0])).rejects.toThrow(/grid-test\.json.*levels/);
});
