/**
 * bot hyperopt --walk-forward and --holdout: each window's search runs on its train part's ticks only and its
 * best is run on the test part after it (per-window picks, out-of-sample results, the stitch, the efficiency, as
 * a sweep's walk-forward records them); a holdout searches the in-sample part and runs its best on the held-out
 * part; both byte-identical for a seed, on one worker or two.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import type { Trial } from '../../src/backtest/hyperopt/search.js';
import type { Metrics } from '../../src/backtest/summary.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks, sliceTicks } from '../../src/backtest/tick-data.js';
import type { HoldoutRecord, WalkForwardRecord } from '../../src/backtest/validation-runs.js';
import { perYear } from '../../src/backtest/validation.js';
import { run as hyperopt } from '../../src/cli/hyperopt.js';
import { D, type Dec } from '../../src/market/decimal.js';
import { capture } from '../support/command-output.js';
import { tempDir } from '../support/temp-dir.js';
import { FROM, gridConfig, LATE_THROW, SAMPLE, sliceFlags, userStrategy } from './fixtures.js';
import { tempProject } from '../config/temp-project.js';

const dir = tempDir('hyperopt-validation-test');
// One day of the two-day slice: 12 h train and 6 h test parts, [0, 12) then [12, 18), [6, 18) then [18, 24).
const TO = '2023-03-10T00:00:00Z';
const HOUR = 3_600_000;
const at = (h: number) => new Date(Date.parse(FROM) + h * HOUR).toISOString();
const SEARCH = ['--space', 'spacingPct=0.2..1.0', '--epochs', '4', '--batch', '2', '--seed', '3', '--min-trades', '0'];

/** `bot hyperopt` on the one-day slice of the grid fixture into `out`. */
async function search(out: string, more: string[]) {
  const r = await capture(hyperopt, sliceFlags(gridConfig(dir), join(dir, out), [...SEARCH, ...more], TO));
  expect(r.code, r.err.join('\n')).toBe(0);
  return r;
}

const read = (out: string, file: string) => readFileSync(join(dir, out, file), 'utf8');
const trialsIn = (out: string, file: string) =>
  read(out, file)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Trial);
/** The lowest-loss trial (the first in trial order among equals), as the search ranks them. */
const bestOf = (trials: Trial[]) =>
  trials.filter((t) => t.status === 'ranked').reduce((a, b) => ((b.loss ?? Infinity) < (a.loss ?? Infinity) ? b : a));
/** Every point of an equity curve (times in seconds) inside [from, to]. */
const within = (equity: [number, number][], from: string, to: string) =>
  equity.length > 0 && equity.every(([s]) => s * 1000 >= Date.parse(from) && s * 1000 <= Date.parse(to));

/** The grid with these values run alone on the ticks of [from, to): what a part's result must equal. */
async function alone(overrides: Record<string, unknown>, from: string, to: string) {
  const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
  const { sources } = await readConfigs([gridConfig(dir)]);
  const slice = sliceTicks(data, Date.parse(from), Date.parse(to));
  return (await runJob(sources, slice, DEFAULT_JOB_SETTINGS, overrides)).summary.metrics;
}

describe('bot hyperopt --walk-forward', () => {
  it('searches each train part alone, runs its best on the test part after it: byte-identical on 1 worker and 2', async () => {
    const walk = ['--walk-forward', '2', '--train', '12h', '--test', '6h'];
    const one = await search('wf1', [...walk, '--workers', '1']);
    const two = await search('wf2', [...walk, '--workers', '2']);
    for (const f of ['hyperopt.json', 'hyperopt.csv', 'hyperopt.html', 'trials-window-1.jsonl', 'trials.jsonl'])
      expect(read('wf2', f), f).toBe(read('wf1', f));
    expect(two.out).toEqual(one.out);

    const { walkForward: w, trials } = JSON.parse(read('wf1', 'hyperopt.json')) as {
      walkForward: WalkForwardRecord;
      trials: { trial: number; values: Record<string, unknown> }[];
    };
    expect(w.windows.map((x) => [x.train.from, x.train.to, x.test.from, x.test.to])).toEqual([
      [at(0), at(12), at(12), at(18)],
      [at(6), at(18), at(18), at(24)],
    ]);
    const searched = [trialsIn('wf1', 'trials-window-1.jsonl'), trialsIn('wf1', 'trials.jsonl')];
    for (const [i, x] of w.windows.entries()) {
      // Every trial of the window's search ran on its train part only, and its best is the window's pick.
      expect(searched[i]).toHaveLength(4);
      for (const t of searched[i]!) expect(within(t.equity, x.train.from, x.train.to), `window ${i + 1}`).toBe(true);
      const best = bestOf(searched[i]!);
      expect(x.chosen).toMatchObject({ index: best.trial, overrides: best.values, inSample: best.metrics });
      // The pick's out-of-sample result is that pick alone on the test part's ticks.
      expect(x.outcome).toBe('tested');
      expect(x.outOfSample).toEqual(await alone(best.values, x.test.from, x.test.to));
    }
    // The same seed draws the same values in each window; the parts differ, so their results do.
    expect(searched[1]!.map((t) => t.values)).toEqual(searched[0]!.map((t) => t.values));
    expect(searched[1]!.map((t) => t.metrics)).not.toEqual(searched[0]!.map((t) => t.metrics));
    // hyperopt.json's trials are the last window's search.
    expect(trials.map((t) => t.values)).toEqual(searched[1]!.map((t) => t.values));

    // The stitch: the test parts' curves, back to back, and their compounded return.
    expect(w.stitched).toMatchObject({ complete: true, windowsTested: 2 });
    expect(within(w.stitched.equity, at(12), at(24))).toBe(true);
    // By hand from the exact equities (train parts of 12 h, test parts of 6 h twice): the stitch is the product of
    // the test parts' growth, the efficiency its return a year over the picks' mean in-sample return a year.
    const growth = (m: Metrics) => new D(m.finalEquity).div(m.initialEquity);
    const oos = w.windows.reduce((g, x) => g.mul(growth(x.outOfSample!)), new D(1)).minus(1);
    expect(w.stitched.returnPct).toBe(oos.mul(100).toFixed(4));
    const yearly = (g: Dec, hours: number) => perYear(g.minus(1).toNumber(), hours * HOUR);
    const meanIs = w.windows.reduce((a, x) => a + yearly(growth(x.chosen!.inSample), 12), 0) / 2;
    expect(w.efficiency).toBe(meanIs > 0 ? (yearly(oos.plus(1), 12) / meanIs).toFixed(4) : null);
    expect(w.efficiencyNote === null).toBe(w.efficiency !== null);
    expect(one.out.join('\n')).toMatch(/walk-forward:\n[^]*stitched out-of-sample: return .* walk-forward efficiency/);
  }, 240_000);
});

describe('bot hyperopt --holdout', () => {
  it('searches the in-sample part, runs its best on the held-out part, byte-identical for a seed', async () => {
    const a = await search('ho1', ['--holdout', '25%', '--workers', '1']);
    const b = await search('ho2', ['--holdout', '25%', '--workers', '2']);
    for (const f of ['hyperopt.json', 'hyperopt.csv', 'hyperopt.html', 'trials.jsonl'])
      expect(read('ho2', f), f).toBe(read('ho1', f));
    expect(b.out).toEqual(a.out);

    const { holdout: h, best } = JSON.parse(read('ho1', 'hyperopt.json')) as {
      holdout: HoldoutRecord;
      best: { trial: number };
    };
    // The slice's first tick is at FROM; 25 % of the day held out: from hour 18.
    expect([h.inSample, h.outOfSample]).toEqual([
      { from: at(0), to: at(18) },
      { from: at(18), to: at(24) },
    ]);
    const trials = trialsIn('ho1', 'trials.jsonl');
    for (const t of trials) expect(within(t.equity, h.inSample.from, h.inSample.to)).toBe(true);
    // Ranked in-sample, best first; the best's held-out result is it alone on the held-out ticks.
    expect(h.results[0]).toMatchObject({ index: bestOf(trials).trial, inSample: { rank: 1 } });
    expect(best.trial).toBe(bestOf(trials).trial);
    expect(h.results.map((r) => r.inSample.rank)).toEqual(h.results.map((_, i) => i + 1));
    const first = h.results[0]!;
    expect(within(first.outOfSample.equity, h.outOfSample.from, h.outOfSample.to)).toBe(true);
    expect(first.outOfSample.metrics).toEqual(await alone(first.overrides, h.outOfSample.from, h.outOfSample.to));
    expect(a.out.join('\n')).toContain(`holdout: ranked on ${at(0)} to ${at(18)}, held out ${at(18)} to ${at(24)}`);
  }, 240_000);
});

describe('bot hyperopt: a failure out of sample (issue 38)', () => {
  it('a best that throws on the held-out part fails the search: named, exit 1', async () => {
    const project = tempProject();
    const config = userStrategy(project, 'late-throw', LATE_THROW, { failAfterHours: 20 });
    // 25 % of the day held out, from hour 18: both values run clean in-sample, 20 throws after.
    const flags = ['--strategies', project.strategiesDir, '--holdout', '25%', '--workers', '1', '--loss', 'profit'];
    flags.push(
      '--space',
      'failAfterHours=20,30',
      '--sampler',
      'random',
      '--epochs',
      '2',
      '--batch',
      '2',
      '--seed',
      '3',
    );
    const r = await capture(
      hyperopt,
      sliceFlags(config, join(project.root, 'out'), [...flags, '--min-trades', '0'], TO),
    );
    expect(r.code, r.err.join('\n')).toBe(1);
    // Each trial of 20 among the best run on the held-out part (a value drawn twice is run twice).
    const failed = r.err.filter((l) => l.startsWith('hyperopt: FAILED'));
    expect(failed.length).toBeGreaterThan(0);
    for (const line of failed)
      expect(line).toMatch(/^hyperopt: FAILED: held-out part: failAfterHours=20: instance .* past my date/);
  }, 60_000);
});
