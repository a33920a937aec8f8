/**
 * Holdout and walk-forward: window boundaries exact (worked out by hand), each part's runs exactly what the same
 * combination gives alone on that part's ticks, and byte-identical outputs on one worker or two.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_JOB_SETTINGS, runJob } from '../../src/backtest/job.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks, sliceTicks } from '../../src/backtest/tick-data.js';
import type { HoldoutRecord, WalkForwardRecord } from '../../src/backtest/validation-runs.js';
import { holdoutSplit, parseDuration, stitch, walkForwardWindows } from '../../src/backtest/validation.js';
import { bot, FROM, gridConfig, SAMPLE, sliceFlags, tempDir, TO } from './fixtures.js';
import { valueAt } from '../../src/backtest/number-column.js';

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DAY = 86_400_000;

describe('where the data is split', () => {
  it('holds out the last part, the boundary floored to the ms', () => {
    expect(holdoutSplit({ from: 0, to: 1000 }, 30)).toEqual({
      inSample: { from: 0, to: 700 },
      outOfSample: { from: 700, to: 1000 },
    });
    // 1001 x 0.7 = 700.7: floored.
    expect(holdoutSplit({ from: 5, to: 1006 }, 30).inSample.to).toBe(705);
  });

  it('walks forward in test-length steps, the test parts back to back', () => {
    // 1000 ms in 3 + 3 = 6 test lengths of 166; train 498.
    expect(walkForwardWindows({ from: 0, to: 1000 }, 3)).toEqual([
      { train: { from: 0, to: 498 }, test: { from: 498, to: 664 } },
      { train: { from: 166, to: 664 }, test: { from: 664, to: 830 } },
      { train: { from: 332, to: 830 }, test: { from: 830, to: 996 } },
    ]);
    const given = walkForwardWindows({ from: 0, to: 10 * DAY }, 2, { train: 4 * DAY, test: 3 * DAY });
    expect(given).toEqual([
      { train: { from: 0, to: 4 * DAY }, test: { from: 4 * DAY, to: 7 * DAY } },
      { train: { from: 3 * DAY, to: 7 * DAY }, test: { from: 7 * DAY, to: 10 * DAY } },
    ]);
    expect(() => walkForwardWindows({ from: 0, to: 10 * DAY }, 3, { train: 4 * DAY, test: 3 * DAY })).toThrow(
      '--walk-forward 3 with train 4.00 days and test 3.00 days needs 13.00 days of data, the data span 10.00 days',
    );
    expect(parseDuration('36h', '--train')).toBe(36 * 3_600_000);
    expect(() => parseDuration('3 days', '--test')).toThrow(/--test expects a length such as 7d/);
  });

  it('stitches test curves so each starts where the previous ended', () => {
    expect(
      stitch([
        [
          [1, 100],
          [2, 110],
        ],
        [
          [3, 100],
          [4, 90],
        ],
      ]),
    ).toEqual([
      [1, 100],
      [2, 110],
      [3, 110],
      [4, 99],
    ]);
  });

  it('slices the ticks of a span, every tick in exactly one part', async () => {
    const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
    const mid = Date.parse(FROM) + DAY + 12_345;
    const [a, b] = [sliceTicks(data, Date.parse(FROM), mid), sliceTicks(data, mid, Date.parse(TO))];
    expect(a.length + b.length).toBe(data.length);
    expect(valueAt(a.columns.time, a.length - 1)).toBeLessThan(mid);
    expect(valueAt(b.columns.time, 0)).toBeGreaterThanOrEqual(mid);
  });
});

describe('bot backtest --holdout and --walk-forward', () => {
  const sweep = ['--sweep', 'spacingPct=0.3,0.5'];

  it('runs every combination on each part exactly as alone on its ticks, and says where the parts are', async () => {
    const config = gridConfig(dir);
    const out = join(dir, 'holdout');
    const r = await bot(sliceFlags(config, out, [...sweep, '--holdout', '25%', '--rank-by', 'return']));
    expect(r.code).toBe(0);
    const { holdout } = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as { holdout: HoldoutRecord };
    const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
    const first = valueAt(data.columns.time, 0);
    const end = valueAt(data.columns.time, data.length - 1) + 1;
    const boundary = first + Math.floor(((end - first) * 75) / 100);
    expect(holdout.inSample).toEqual({ from: new Date(first).toISOString(), to: new Date(boundary).toISOString() });
    expect(holdout.outOfSample.from).toBe(new Date(boundary).toISOString());
    const { sources } = await readConfigs([config]);
    for (const res of holdout.results) {
      const alone = await runJob(sources, sliceTicks(data, boundary, end), DEFAULT_JOB_SETTINGS, res.overrides);
      expect(res.outOfSample.metrics).toEqual(alone.summary.metrics);
    }
    expect(r.out.join('\n')).toMatch(/holdout: ranked on .* held out/);
    expect(readFileSync(join(out, 'sweep.html'), 'utf8')).toContain('In-sample against out-of-sample (holdout 25 %)');
  }, 120_000);

  it('picks per window on its train part, runs the pick on its test part: identical on 1 worker and 2', async () => {
    const config = gridConfig(dir);
    const walk = [...sweep, '--walk-forward', '2', '--train', '12h', '--test', '6h'];
    const a = await bot(sliceFlags(config, join(dir, 'wf1'), [...walk, '--workers', '1']));
    const b = await bot(sliceFlags(config, join(dir, 'wf2'), [...walk, '--workers', '2']));
    expect([a.code, b.code]).toEqual([0, 0]);
    for (const f of ['sweep.json', 'sweep.csv', 'sweep.html'])
      expect(readFileSync(join(dir, 'wf2', f))).toEqual(readFileSync(join(dir, 'wf1', f)));
    const { walkForward } = JSON.parse(readFileSync(join(dir, 'wf1', 'sweep.json'), 'utf8')) as {
      walkForward: WalkForwardRecord;
    };
    const start = Date.parse(FROM);
    const at = (h: number) => new Date(start + h * 3_600_000).toISOString();
    expect(walkForward.windows.map((w) => [w.train.from, w.train.to, w.test.from, w.test.to])).toEqual([
      [at(0), at(12), at(12), at(18)],
      [at(6), at(18), at(18), at(24)],
    ]);
    for (const w of walkForward.windows) expect(w.chosen).not.toBeNull();
    // Each pick's test run is that combination alone on the test part's ticks.
    const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
    const { sources } = await readConfigs([config]);
    const w0 = walkForward.windows[0]!;
    const alone = await runJob(
      sources,
      sliceTicks(data, Date.parse(w0.test.from), Date.parse(w0.test.to)),
      DEFAULT_JOB_SETTINGS,
      w0.chosen!.overrides,
    );
    expect(w0.outOfSample).toEqual(alone.summary.metrics);
    expect(a.out.join('\n')).toMatch(/stitched out-of-sample: return .* walk-forward efficiency/);
  }, 240_000);

  it.each([
    [['--holdout', '0%'], /--holdout expects a percentage between 0 and 100/],
    [['--holdout', '30%', '--walk-forward', '2'], /--holdout and --walk-forward: one or the other/],
    [['--train', '1d', '--test', '1d'], /--train and --test go with --walk-forward N/],
    [['--walk-forward', '2', '--train', '1d'], /--train and --test: both, or neither/],
    [['--walk-forward', '3', '--train', '1d', '--test', '1d'], /needs 4\.00 days of data, the data span 2\.00 days/],
    [['--rank-by', 'luck'], /--rank-by must be one of return, sharpe, sortino, calmar, profit-factor, expectancy/],
  ])('refuses %j with one line naming the flag', async (flags, message) => {
    const r = await bot(sliceFlags(gridConfig(dir), join(dir, 'bad'), [...sweep, ...flags]));
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
  });

  it('takes --holdout only with a --sweep', async () => {
    const r = await bot(sliceFlags(gridConfig(dir), join(dir, 'bad'), ['--holdout', '30%']));
    expect(r.err).toEqual(['backtest: --holdout takes a --sweep: it chooses among combinations']);
  });
});
