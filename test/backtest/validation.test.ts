/**
 * Holdout and walk-forward: window boundaries exact (worked out by hand), each part's runs exactly what the same
 * combination gives alone on that part's ticks, and byte-identical outputs on one worker or two.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks, sliceTicks } from '../../src/backtest/tick-data.js';
import type { HoldoutRecord, WalkForwardRecord } from '../../src/backtest/validation-runs.js';
import { holdoutSplit, parseDuration, stitch, walkForwardWindows } from '../../src/backtest/validation.js';
import { bot, FROM, gridConfig, LATE_THROW, SAMPLE, sliceFlags, TO, userStrategy } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { tempProject } from '../config/temp-project.js';
import { D } from '../../src/market/decimal.js';
import { valueAt } from '../../src/backtest/number-column.js';

const dir = tempDir('backtest-test');
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
    // The data span to the end of their last candle (TO), not to their last tick.
    const end = Date.parse(TO);
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

  it('spans the data to the end of their last candle, and takes the efficiency from unrounded figures', async () => {
    // 4 days of candles hold --walk-forward 3 of a day's train and a day's test (refused as 4.00 < 4.00 before).
    const out = join(dir, 'wf4');
    const to = '2023-03-13T00:00:00Z';
    const walk = [...sweep, '--walk-forward', '3', '--train', '1d', '--test', '1d', '--rank-by', 'return'];
    const r = await bot(sliceFlags(gridConfig(dir), out, walk, to));
    expect(r.err.filter((l) => l.includes('FAILED'))).toEqual([]);
    expect(r.code).toBe(0);
    const { walkForward: w } = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as {
      walkForward: WalkForwardRecord;
    };
    expect(w.windows.map((x) => [x.test.from, x.test.to, x.outcome])).toEqual([
      ['2023-03-10T00:00:00.000Z', '2023-03-11T00:00:00.000Z', 'tested'],
      ['2023-03-11T00:00:00.000Z', '2023-03-12T00:00:00.000Z', 'tested'],
      ['2023-03-12T00:00:00.000Z', '2023-03-13T00:00:00.000Z', 'tested'],
    ]);
    expect(w.untested).toBeNull();
    // By hand from the runs' exact equities: the stitch is the product of the test parts' growth, the efficiency
    // its return per year over the picks' mean in-sample return per year.
    const growth = (m: { initialEquity: string; finalEquity: string }) => new D(m.finalEquity).div(m.initialEquity);
    const oos = w.windows.reduce((g, x) => g.mul(growth(x.outOfSample!)), new D(1)).minus(1);
    expect(w.stitched.returnPct).toBe(oos.mul(100).toFixed(4));
    const year = 365 * DAY;
    const inSample = w.windows.map((x) => (growth(x.chosen!.inSample).minus(1).toNumber() * year) / DAY);
    const meanIs = inSample.reduce((a, b) => a + b, 0) / inSample.length;
    const expected = meanIs > 0 ? ((oos.toNumber() * year) / (3 * DAY) / meanIs).toFixed(4) : null;
    expect(w.efficiency).toBe(expected);
    expect(w.efficiencyNote === null).toBe(expected !== null);
  }, 240_000);

  it.each([
    [['--holdout', '0%'], /--holdout expects a percentage between 0 and 100/],
    [['--holdout', '30%', '--walk-forward', '2'], /--holdout and --walk-forward: one or the other/],
    [['--train', '1d', '--test', '1d'], /--train and --test go with --walk-forward N/],
    [['--walk-forward', '2', '--train', '1d'], /--train and --test: both, or neither/],
    [['--walk-forward', '2', '--train', '1d', '--test', '1d'], /needs 3\.00 days of data, the data span 2\.00 days/],
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

describe('a walk-forward tells every failure', () => {
  // Each test makes its own project: a folder made inside a test is removed when that test ends.
  it('a pick that throws on its test part is a failure, not a result: the stitch is incomplete, exit 1', async () => {
    const project = tempProject();
    const config = userStrategy(project, 'late-throw', LATE_THROW, { failAfterHours: 20 });
    const out = join(project.root, 'out');
    // Windows of 12h train and 6h test: [0, 12) then [12, 18); [6, 18) then [18, 24). failAfterHours=20 runs
    // clean on every train part and is picked (it ranks first by grid order), then throws in window 2's test part;
    // failAfterHours=3 throws on both train parts.
    const walk = ['--sweep', 'failAfterHours=20,3', '--walk-forward', '2', '--train', '12h', '--test', '6h'];
    const r = await bot(sliceFlags(config, out, [...walk, '--strategies', project.strategiesDir, '--workers', '1']));
    expect(r.code).toBe(1);
    const { walkForward: w } = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as {
      walkForward: WalkForwardRecord;
    };
    expect(w.windows.map((x) => [x.chosen?.overrides, x.outcome, x.outOfSample === null])).toEqual([
      [{ failAfterHours: 20 }, 'tested', false],
      [{ failAfterHours: 20 }, 'failed', true],
    ]);
    expect(w.windows[1]!.ended[0]).toMatch(/ended paused: .*past my date/);
    expect(w.stitched).toMatchObject({ complete: false, windowsTested: 1 });
    expect(w.efficiency).toBeNull();
    expect(w.efficiencyNote).toBe('n/a: the out-of-sample result is incomplete (window 2 failed)');
    const failed = r.err.filter((l) => l.startsWith('backtest: FAILED'));
    expect(failed.slice(0, 3)).toEqual([
      expect.stringMatching(/^backtest: FAILED: window 1 train: failAfterHours=3: instance .* past my date/),
      expect.stringMatching(/^backtest: FAILED: window 2 train: failAfterHours=3: /),
      expect.stringMatching(/^backtest: FAILED: window 2 test: failAfterHours=20: instance .* past my date/),
    ]);
    const printed = r.out.join('\n');
    expect(printed).toContain("window 2 train: ranking on the last window's train part");
    expect(printed).toContain('window 2 FAILED: instance');
    expect(printed).toContain('stitched out-of-sample (INCOMPLETE: 1 of 2 windows tested to their end)');
    // The slice holds two days; the windows end after one.
    expect(printed).toContain('not tested: 2023-03-10T00:00:00.000Z to 2023-03-11T00:00:00.000Z');
  }, 240_000);

  it('a combination that throws only on the held-out part fails the holdout: named, exit 1', async () => {
    const project = tempProject();
    const config = userStrategy(project, 'late-throw', LATE_THROW, { failAfterHours: 40 });
    const out = join(project.root, 'out-holdout');
    // 25 % held out: from hour 36 of the 48; failAfterHours=40 runs clean in-sample.
    const flags = ['--sweep', 'failAfterHours=40,50', '--holdout', '25%', '--strategies', project.strategiesDir];
    const r = await bot(sliceFlags(config, out, [...flags, '--workers', '1']));
    expect(r.code).toBe(1);
    expect(r.err.filter((l) => l.startsWith('backtest: FAILED'))[0]).toMatch(
      /^backtest: FAILED: held-out part: failAfterHours=40: instance .* past my date/,
    );
    expect(r.out.join('\n')).toContain('ranking on the in-sample part, 2023-03-09T00:00:00.000Z to 2023-03-10T12:00');
  }, 120_000);
});
