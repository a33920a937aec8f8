/**
 * Sweeps on worker threads: per combination exactly what the same run alone gives, ranked; progress as they
 * run; the sweep page; strategies from another directory; combinations that ended early.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { equityCurve } from '../../src/backtest/equity-tracker.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { sweepHtml } from '../../src/backtest/sweep-html.js';
import {
  parseSweep,
  runSweep,
  SweepPool,
  type SweepProgress,
  sweepGrid,
  sweepThreads,
} from '../../src/backtest/sweep.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { D } from '../../src/market/decimal.js';
import { tempProject } from '../config/temp-project.js';
import { bot, FROM, gridConfig, SAMPLE, TO, userStrategy, WRECK_STRATEGY } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('backtest-test');
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
  const ranking = { rankBy: 'return', minTrades: 0 } as const;
  const results = await runSweep({ sources, data, settings, combos, ranking }, 2, (p) => seen.push(p));

  expect(results.map((r) => r.rank)).toEqual([1, 2, 3, 4]);
  expect(new Set(results.map((r) => r.index))).toEqual(new Set([0, 1, 2, 3]));
  for (const r of results) {
    const alone = await runJob(sources, data, settings, r.overrides);
    expect(r.metrics).toEqual(alone.summary.metrics);
    expect(r.ended).toEqual([]);
    expect(r.equity).toEqual(equityCurve(alone.run.equity));
    expect(r.equity.at(-1)![1]).toBeCloseTo(Number(r.metrics.finalEquity), 2);
    expect(alone.summary.inputs.configs[0]!.config).toMatchObject({
      params: { spacingPct: r.overrides.spacingPct },
      risk: { maxOpenOrders: r.overrides['risk.maxOpenOrders'] },
    });
  }
  // Progress: ticks over all combinations, never going back, ending with every combination's every tick.
  const perRun = (await runJob(sources, data, settings)).summary.period.ticks;
  expect(perRun).toBeGreaterThan(0);
  expect(seen.at(-1)).toEqual({ runs: 4, runsTotal: 4, ticks: 4 * perRun, ticksTotal: 4 * perRun });
  expect([...new Set(seen.map((p) => p.runs))]).toEqual([0, 1, 2, 3, 4]);
  // Different params must make different runs, or this test proves nothing.
  expect(new Set(results.map((r) => r.metrics.fills)).size).toBeGreaterThan(1);
  for (let i = 1; i < results.length; i++) {
    expect(new D(results[i - 1]!.metrics.totalReturnPct).gte(results[i]!.metrics.totalReturnPct)).toBe(true);
  }

  // sweep.html: a self-contained page whose heatmap cell for each pair of values is that combination's return.
  const html = await sweepHtml({ title: 'sweep', inputs: [], axes, sampleMs: settings.sampleMs, ranking, results });
  expect(html).not.toMatch(/<(script|img|iframe|link)[^>]+(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
  const table = /<table class="heat" id="heatmap">(.*?)<\/table>/s.exec(html)![1]!;
  const rows = [...table.matchAll(/<tr><th>([^<]*)<\/th>(.*?)<\/tr>/g)].slice(1);
  expect(rows.map((m) => m[1])).toEqual(['0.3', '0.5']);
  for (const [, spacing, cells] of rows) {
    const values = [...cells!.matchAll(/data-rank="(\d+)">([^<]*)<\/td>/g)];
    expect(values).toHaveLength(2);
    values.forEach(([, rank, value], k) => {
      const r = results.find(
        (x) => x.overrides.spacingPct === spacing && x.overrides['risk.maxOpenOrders'] === [3, 12][k],
      )!;
      expect([Number(rank), value]).toEqual([r.rank, r.metrics.totalReturnPct]);
    });
  }
  expect(table).toMatch(/class="best"[^>]*data-rank="1"/);
  const embedded = JSON.parse(/<script type="application\/json" id="sweep-data">(.*?)<\/script>/s.exec(html)![1]!) as {
    curves: { rank: number; equity: [number, number][] }[];
  };
  expect(embedded.curves.map((c) => c.rank)).toEqual([1, 2, 3, 4]);
  expect(embedded.curves.map((c) => c.equity)).toEqual(results.map((r) => r.equity));
});

it('runs a sweep on every core by default, never on more threads than cores or combinations', () => {
  expect(sweepThreads(undefined, 100, 8)).toEqual({ threads: 8, capped: false });
  expect(sweepThreads(4, 100, 8)).toEqual({ threads: 4, capped: false });
  expect(sweepThreads(16, 100, 8)).toEqual({ threads: 8, capped: true });
  expect(sweepThreads(undefined, 3, 8)).toEqual({ threads: 3, capped: false });
  expect(sweepThreads(16, 3, 8)).toEqual({ threads: 3, capped: true });
  expect(sweepThreads(1, 1, 1)).toEqual({ threads: 1, capped: false });
});

it('reports progress while the combinations run, not only when each ends', async () => {
  const data = await loadTicks([SAMPLE]);
  const { sources } = await readConfigs([gridConfig(dir)]);
  const combos = sweepGrid([parseSweep('spacingPct=0.3,0.5', sources)]);
  const seen: SweepProgress[] = [];
  await runSweep({ sources, data, settings: DEFAULT_JOB_SETTINGS, combos }, 2, (p) => seen.push(p));
  // Every 65,536 ticks of each combination: the sample's 120,960 ticks give reports from inside a run, which
  // reports at run ends alone (whole multiples of the run's ticks) could not.
  expect(seen.some((p) => p.ticks % data.length !== 0)).toBe(true);
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i]!.ticks).toBeGreaterThanOrEqual(seen[i - 1]!.ticks);
    expect(seen[i]!.runs).toBeGreaterThanOrEqual(seen[i - 1]!.runs);
  }
  expect(seen.at(-1)).toEqual({ runs: 2, runsTotal: 2, ticks: 2 * data.length, ticksTotal: 2 * data.length });
});

it('refuses a sweep value that does not fit the key', async () => {
  const { sources } = await readConfigs([gridConfig(dir)]);
  expect(() => parseSweep('levels=3,many', sources)).toThrow(/--sweep levels: expected numbers, found 'many'/);
  const bad = sweepGrid([parseSweep('levels=0', sources)]);
  const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(FROM) + 3_600_000 });
  await expect(runJob(sources, data, DEFAULT_JOB_SETTINGS, bad[0])).rejects.toThrow(/grid-test\.json.*levels/);

  // From the command line, every combination is checked before any runs: each bad value named, nothing written.
  const out = join(dir, 'bad-sweep');
  const r = await bot(['--config', gridConfig(dir), '--data', SAMPLE, '--sweep', 'levels=4,0,-2', '--out', out]);
  expect(r.code).toBe(1);
  expect(r.err).toHaveLength(2);
  expect(r.err.join('\n')).toMatch(
    /grid-test\.json \(with levels=0\): params\.levels.*\n.*\(with levels=-2\): params\.levels/,
  );
  expect(r.err.join('\n')).toMatch(/found 0[^]*found -2/);
  expect(existsSync(out)).toBe(false);
});

/** A strategy of the user's own, outside the project: it throws once it has seen `fuse` ticks. */
const FUSE_STRATEGY = `
import { z } from 'zod';
export default {
  name: 'fuse',
  params: z.object({ fuse: z.number().int().min(1) }),
  onTick(ctx) {
    ctx.state.ticks = (ctx.state.ticks ?? 0) + 1;
    if (ctx.state.ticks > ctx.params.fuse) throw new Error('fuse blown after ' + ctx.params.fuse + ' ticks');
  },
};
`;

it('takes strategies from --strategies DIR on every worker and says which combinations ended early', async () => {
  const project = tempProject();
  try {
    const config = userStrategy(project, 'fuse', FUSE_STRATEGY, { fuse: 100000 });
    const out = join(project.root, 'out');
    const flags = ['--config', config, '--data', SAMPLE, '--from', FROM, '--to', TO, '--out', out];
    const sweep = ['--sweep', 'fuse=10,100000', '--workers', '2'];

    const missing = await bot([...flags, ...sweep]);
    expect(missing.code).toBe(1);
    expect(missing.err.join('\n')).toMatch(/strategies\/.*fuse\.ts or fuse\.js/);

    const r = await bot([...flags, '--strategies', project.strategiesDir, ...sweep]);
    // A combination whose hook threw failed: the sweep says so and exits 1, after writing everything.
    expect(r.code).toBe(1);
    const [header, ...rows] = readFileSync(join(out, 'sweep.csv'), 'utf8').trimEnd().split('\n');
    expect(header).toMatch(/^rank,status,index,fuse,.*,ended$/);
    const cells = new Map(rows.map((row) => [row.split(',')[3], row.split(',')]));
    const at = `${join(project.strategiesDir, 'fuse.js')}:8:50`;
    expect(cells.get('10')!.at(-1)).toBe(
      `instance fuse-test ended paused: onTick threw: Error: fuse blown after 10 ticks (at ${at})`,
    );
    // Never ranked, never the best, never offered as flags: the one that ran to the end is.
    expect(cells.get('10')!.slice(0, 2)).toEqual(['', 'failed']);
    expect(cells.get('100000')!.slice(0, 2)).toEqual(['1', 'ranked']);
    expect(cells.get('100000')!.at(-1)).toBe('');
    expect(r.err.join('\n')).toContain('run it alone with --set fuse=100000');
    expect(r.err.join('\n')).not.toContain('--set fuse=10 ');
    const [table, luck] = r.out
      .join('\n')
      .split('\n\n')
      .map((part) => part.split('\n'));
    expect(table![0]).toMatch(/^rank +fuse +sharpe/);
    expect(table!.at(-1)).toMatch(/^failed +10 /);
    // Beside the best, the luck of it: the failed combination ran too, so the best is the best of two.
    expect(luck!.at(-1)).toMatch(/^luck: the best of 2 trials: deflated Sharpe .*, PBO .*: /);
    expect(r.out.join('\n')).toMatch(/ended early/);
    const recorded = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as {
      precision: string;
      configs: { module: { file: string; sha256: string } }[];
      luck: { trials: number; dsr: string; verdict: string };
    };
    expect(recorded.luck.trials).toBe(2);
    expect(recorded.precision).toBe('full'); // the metrics (and sweep.csv's) are not rounded for display
    expect(luck!.at(-1)).toBe(`luck: ${recorded.luck.verdict}`);
    expect(recorded.configs[0]!.module).toEqual({
      file: join(project.strategiesDir, 'fuse.js'),
      sha256: createHash('sha256').update(FUSE_STRATEGY).digest('hex'),
    });
    const page = readFileSync(join(out, 'sweep.html'), 'utf8');
    expect(page.match(/data-rank="\d"/g)).toEqual(['data-rank="1"']);
    expect(page).toMatch(/class="best"[^>]*data-rank="1">/);
    expect(page).toContain('data-status="failed"');
    expect(page).toContain('instance fuse-test ended paused: onTick threw');
    expect(page).toContain(`<div class="luck`);
    expect(r.err.join('\n')).toMatch(
      /FAILED: in 1 of 2 combinations an instance ended early .*fuse=10: instance fuse-test ended paused: onTick threw/,
    );
  } finally {
    project.remove();
  }
});

it('names the combination whose worker died, however it died', async () => {
  const project = tempProject();
  try {
    const config = userStrategy(project, 'wreck', WRECK_STRATEGY, { how: 'none' });
    const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(FROM) + 3_600_000 });
    const { sources } = await readConfigs([config], project.strategiesDir);
    const job = (how: string) => ({
      sources,
      data,
      settings: DEFAULT_JOB_SETTINGS,
      // A combination after the one that fails: the failure must not be laid at its door.
      combos: [{ how: 'none' }, { how }, { how: 'none' }],
    });
    await expect(runSweep(job('exit'), 1)).rejects.toThrow(
      /a sweep worker exited \(code 0\) while running combination \{"how":"exit"\}/,
    );
    await expect(runSweep(job('throw'), 1)).rejects.toThrow(
      /a sweep worker failed: thrown outside any hook while running combination \{"how":"throw"\} \(after combination \{"how":"none"\}\)/,
    );
    expect(await runSweep(job('none'), 1)).toHaveLength(3);
  } finally {
    project.remove();
  }
});

/** A strategy whose module notes, each time it is loaded, the thread that loaded it. */
const MARKED_STRATEGY = (marker: string) => `
import { appendFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { z } from 'zod';
appendFileSync(${JSON.stringify(marker)}, threadId + '\\n');
export default {
  name: 'marked',
  params: z.object({ buyBelow: z.number() }),
  onTick(ctx) {
    if (ctx.ticker.last < ctx.params.buyBelow && !ctx.state.bought) {
      ctx.state.bought = true;
      ctx.market('BUY', { quantity: '0.001' });
    }
  },
};
`;

it(
  'starts its workers before the data is read, and keeps them for every part of a sweep',
  { timeout: 180_000 },
  async () => {
    const project = tempProject();
    const marker = join(project.root, 'loads.txt');
    const workerLoads = () =>
      existsSync(marker)
        ? readFileSync(marker, 'utf8')
            .split('\n')
            .filter((t) => t !== '' && t !== '0').length
        : 0;
    try {
      const config = userStrategy(project, 'marked', MARKED_STRATEGY(marker), { buyBelow: 0 });
      const { sources } = await readConfigs([config], project.strategiesDir);
      const pool = new SweepPool(2, sources, DEFAULT_JOB_SETTINGS);
      try {
        // Both workers load the strategy with no data handed to them yet.
        await vi.waitFor(() => expect(workerLoads()).toBe(2), { timeout: 60_000, interval: 50 });
        const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
        pool.setData(data);
        const combos = sweepGrid([{ key: 'buyBelow', values: [0, 20000, 21000, 23000] }]);
        const job = { sources, data, settings: DEFAULT_JOB_SETTINGS, combos };
        const half = Date.parse(FROM) + 86_400_000;
        const parts = [
          { from: Date.parse(FROM), to: half },
          { from: half, to: Date.parse(TO) },
        ];
        const onPool = [];
        for (const window of parts) onPool.push(await runSweep({ ...job, window }, pool));
        expect(workerLoads()).toBe(2);
        // The same as fresh workers give each part.
        for (const [i, window] of parts.entries()) expect(onPool[i]).toEqual(await runSweep({ ...job, window }, 2));
        expect(onPool[0]!.map((r) => r.metrics.roundTrips + r.metrics.totalReturnPct)).not.toEqual(
          onPool[1]!.map((r) => r.metrics.roundTrips + r.metrics.totalReturnPct),
        );
      } finally {
        await pool.close();
      }
    } finally {
      project.remove();
    }
  },
);
