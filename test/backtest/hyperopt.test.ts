/**
 * bot hyperopt: its spaces and constraints, its samplers (deterministic for a seed; TPE beats random search on
 * a standard test function for the same number of trials), its losses, and the command itself over the shipped
 * grid and over a strategy's declared exits and protections: byte-identical with one worker or two.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { afterAll, describe, expect, it } from 'vitest';
import { lossFunction } from '../../src/backtest/hyperopt/loss.js';
import { type Observation, RandomSampler, type Sampler } from '../../src/backtest/hyperopt/sampler.js';
import { decodePoint, encodeValue, feasible, parseSpace, placesOf } from '../../src/backtest/hyperopt/space.js';
import { TpeSampler } from '../../src/backtest/hyperopt/tpe.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import type { Metrics } from '../../src/backtest/summary.js';
import { run as backtest } from '../../src/cli/backtest.js';
import { run as hyperopt } from '../../src/cli/hyperopt.js';
import { TEST_STRATEGIES } from '../e2e/daemon-process.js';
import { capture } from '../support/command-output.js';
import { gridConfig, SAMPLE } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('hyperopt-test');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the space', () => {
  it('reads floats, integers, log scales, choices and constraints, typed as the strategy file types each key', async () => {
    const { sources } = await readConfigs([gridConfig(dir)]);
    const space = parseSpace(
      [
        'spacingPct=0.2..1.0',
        'levels=2..8:int',
        'risk.maxOpenOrders=2,6,12',
        'exits.stopLossPct=0.5..20:log',
        'levels<risk.maxOpenOrders',
      ],
      sources,
      {},
    );
    expect(space.dimensions.map((d) => d.kind)).toEqual(['float', 'int', 'choice', 'log']);
    expect(space.constraints.map((c) => c.text)).toEqual(['levels<risk.maxOpenOrders']);
    // spacingPct is text in the file (exact decimals), rounded to a thousandth of its range; levels a number.
    expect(placesOf(0.2, 1)).toBe(3);
    const values = decodePoint(space, [0.51234, 0.5, 2, 0.5]);
    expect(values).toEqual({ spacingPct: '0.61', levels: 5, 'risk.maxOpenOrders': 12, 'exits.stopLossPct': 3.162 });
    expect(decodePoint(space, [1, 1, 0, 1])).toMatchObject({ spacingPct: '1', levels: 8, 'exits.stopLossPct': 20 });
    // Each value's point decodes back to it.
    for (const d of space.dimensions)
      expect(decodePoint({ ...space, dimensions: [d] }, [encodeValue(d, values[d.key])])).toEqual({
        [d.key]: values[d.key],
      });
    expect(feasible(space, { ...values, levels: 5, 'risk.maxOpenOrders': 6 }, {}, sources[0]!.raw)).toBe(true);
    expect(feasible(space, { ...values, levels: 7, 'risk.maxOpenOrders': 6 }, {}, sources[0]!.raw)).toBe(false);
  });

  it('refuses a malformed space with one line naming the key', async () => {
    const { sources } = await readConfigs([gridConfig(dir)]);
    const bad: [string[], RegExp][] = [
      [['levels=8..2:int'], /levels: LO must be under HI/],
      [['levels=1.5..4:int'], /an :int range takes whole numbers/],
      [['spacingPct=0..1:log'], /a :log range must be above zero/],
      [['levels=2..x'], /plain numbers/],
      [['levels=3,3'], /each value once/],
      [['levels=2..8:int', 'levels<nothing'], /nothing is not a --space key/],
      [['fast<slow'], /at least one KEY=LO..HI/],
    ];
    for (const [specs, message] of bad) expect(() => parseSpace(specs, sources, {}), specs.join(' ')).toThrow(message);
    expect(() => parseSpace(['levels=2..8:int'], sources, { levels: 4 })).toThrow(/levels is given twice/);
  });
});

/** Branin on [0, 1]^2 (x in [-5, 10], y in [0, 15]); its minimum is 0.397887. */
function branin(p: readonly number[]): number {
  const x = -5 + 15 * p[0]!;
  const y = 15 * p[1]!;
  const b = 5.1 / (4 * Math.PI ** 2);
  return (y - b * x * x + (5 / Math.PI) * x - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(x) + 10 - 0.397887;
}

const UNIT = [
  { key: 'x', kind: 'float', lo: 0, hi: 1, text: false },
  { key: 'y', kind: 'float', lo: 0, hi: 1, text: false },
] as const;

/** The best Branin value after `trials` trials in batches of 8, as the search draws them. */
function bestAfter(sampler: Sampler, seed: number, trials: number): { best: number; points: number[][] } {
  const stream = xoroshiro128plus(seed);
  const done: Observation[] = [];
  while (done.length < trials) {
    stream.jump();
    for (const point of sampler.ask(done, 8, stream.clone(), () => true)) done.push({ point, loss: branin(point) });
  }
  return { best: Math.min(...done.map((o) => o.loss!)), points: done.map((o) => [...o.point]) };
}

describe('the samplers', () => {
  it('draw the same points for the same seed, other points for another, and keep the constraints', () => {
    for (const sampler of [new TpeSampler([...UNIT]), new RandomSampler([...UNIT])]) {
      expect(bestAfter(sampler, 3, 24).points).toEqual(bestAfter(sampler, 3, 24).points);
      expect(bestAfter(sampler, 3, 24).points).not.toEqual(bestAfter(sampler, 4, 24).points);
      const kept = sampler.ask([], 20, xoroshiro128plus(1), (p) => p[0]! < p[1]!);
      expect(kept.every((p) => p[0]! < p[1]!)).toBe(true);
    }
  });

  it('TPE finds a lower Branin than random search in the same 48 trials, over 10 seeds', () => {
    const tpe: number[] = [];
    const random: number[] = [];
    for (let seed = 1; seed <= 10; seed++) {
      tpe.push(bestAfter(new TpeSampler([...UNIT]), seed, 48).best);
      random.push(bestAfter(new RandomSampler([...UNIT]), seed, 48).best);
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[5]!;
    expect(median(tpe)).toBeLessThan(median(random));
    expect(tpe.filter((t, i) => t < random[i]!).length).toBeGreaterThanOrEqual(6);
  });
});

describe('the losses', () => {
  const m = (x: Partial<Metrics>) =>
    ({ totalReturnPct: '2', maxDrawdownPct: '5', sharpe: '1.5', sortino: null, calmar: '3', ...x }) as Metrics;
  it('are lower for better trials, null where the figure is undefined', () => {
    expect(lossFunction('sharpe')(m({}), [])).toBe(-1.5);
    expect(lossFunction('sortino')(m({}), [])).toBeNull();
    expect(lossFunction('calmar')(m({}), [])).toBe(-3);
    expect(lossFunction('profit')(m({}), [])).toBe(-2);
    expect(lossFunction('profit-drawdown')(m({}), [])).toBe(3);
    // The smallest drawdown that made money; any loss of money is worse than any drawdown.
    expect(lossFunction('max-drawdown')(m({}), [])).toBe(5);
    expect(lossFunction('max-drawdown')(m({ totalReturnPct: '-0.5', maxDrawdownPct: '1' }), [])).toBe(100.5);
    const own = lossFunction('strategy', { name: 'own', hyperoptLoss: (t) => t.maxDrawdownPct - t.equity.length });
    expect(
      own(m({}), [
        [1, 10],
        [2, 11],
      ]),
    ).toBe(3);
    expect(() => lossFunction('strategy', { name: 'plain' })).toThrow(/strategy plain exports no hyperoptLoss/);
  });
});

const FROM = '2023-03-09T00:00:00Z';
const TO = '2023-03-10T00:00:00Z';
const OUTPUTS = ['hyperopt.json', 'hyperopt.csv', 'hyperopt.html', 'best.json', 'trials.jsonl'];
const outputs = (out: string) => OUTPUTS.map((f) => readFileSync(join(out, f), 'utf8'));

describe('bot hyperopt', () => {
  it('searches the shipped grid byte-identically on one worker and on two, and prints the best with its luck', async () => {
    const args = (out: string, workers: string) => [
      '--config',
      'config/grid-btcusdt.json',
      '--data',
      SAMPLE,
      '--from',
      FROM,
      '--to',
      TO,
      '--space',
      'spacingPct=0.2..1.0',
      '--space',
      'levels=2..8:int',
      '--epochs',
      '12',
      '--batch',
      '4',
      '--seed',
      '7',
      '--min-trades',
      '0',
      '--workers',
      workers,
      '--out',
      join(dir, out),
    ];
    const one = await capture(hyperopt, args('one', '1'));
    expect(one.code, one.err.join('\n')).toBe(0);
    const two = await capture(hyperopt, args('two', '2'));
    expect(two.code, two.err.join('\n')).toBe(0);
    expect(outputs(join(dir, 'two'))).toEqual(outputs(join(dir, 'one')));
    expect(two.out).toEqual(one.out);

    const record = JSON.parse(readFileSync(join(dir, 'one', 'hyperopt.json'), 'utf8')) as {
      precision: string;
      trials: { trial: number; batch: number; values: Record<string, unknown>; status: string; loss: number | null }[];
      best: { trial: number; sets: string[] };
      luck: { trials: number; dsr: string | null; verdict: string };
    };
    expect(record.trials.map((t) => t.trial)).toEqual([...Array(12).keys()]);
    expect(record.precision).toBe('full'); // the metrics (and hyperopt.csv's) are not rounded for display
    expect(record.trials.map((t) => t.batch)).toEqual([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    // The best is the lowest loss, its flags those printed, and best.json the file with them.
    const ranked = record.trials.filter((t) => t.status === 'ranked' && t.loss !== null);
    const lowest = ranked.reduce((a, b) => (b.loss! < a.loss! ? b : a));
    expect(record.best.trial).toBe(lowest.trial);
    const flags = `--set spacingPct=${lowest.values.spacingPct as string} --set levels=${lowest.values.levels as number}`;
    expect(record.best.sets.join(' ')).toBe(flags);
    expect(one.out.join('\n')).toContain(`best: ${flags}`);
    const best = JSON.parse(readFileSync(join(dir, 'one', 'best.json'), 'utf8')) as { params: Record<string, unknown> };
    expect(best.params).toMatchObject(lowest.values);
    expect(one.out.join('\n')).toMatch(/\nluck: the best of \d+ trials: deflated Sharpe \d\.\d\d, PBO \d\.\d\d: /);
    expect(record.luck.verdict).toMatch(/^the best of \d+ trials/);

    // Another seed draws other trials; the same folder without --resume is refused (it holds these trials).
    const again = await capture(hyperopt, args('one', '1'));
    expect(again.code).toBe(1);
    expect(again.err.join('\n')).toMatch(/holds the trials of this search \(trials\.jsonl\): --resume/);
  }, 300_000);

  it('searches declared exits (a ROI row) and protections under a constraint, and refuses flags under --min-dsr', async () => {
    const out = join(dir, 'exits');
    // The test strategy that buys when flat and never sells: the declared exits alone decide every sale.
    const reenter = join(dir, 'reenter.json');
    writeFileSync(
      reenter,
      JSON.stringify({
        name: 'reenter-test',
        strategy: 'reenter',
        symbol: 'BTCUSDT',
        params: {},
        exits: { stopLossPct: 2 },
      }),
    );
    const r = await capture(hyperopt, [
      '--config',
      reenter,
      '--strategies',
      TEST_STRATEGIES,
      '--data',
      SAMPLE,
      '--from',
      FROM,
      '--to',
      TO,
      '--space',
      'exits.stopLossPct=0.5..5',
      '--space',
      'exits.roi.0=1..4',
      '--space',
      'exits.roi.60=0.2..3',
      '--space',
      'protections.cooldownMinutes=10..240:int',
      '--space',
      'exits.roi.60<exits.roi.0',
      '--sampler',
      'random',
      '--epochs',
      '8',
      '--batch',
      '4',
      '--min-trades',
      '0',
      '--min-dsr',
      '1',
      '--workers',
      '2',
      '--out',
      out,
    ]);
    expect(r.code, r.err.join('\n')).toBe(0);
    const record = JSON.parse(readFileSync(join(out, 'hyperopt.json'), 'utf8')) as {
      trials: { values: Record<string, number>; metrics: { fills: number } | null }[];
      best: { sets: null } | null;
    };
    expect(record.trials).toHaveLength(8);
    for (const t of record.trials) expect(t.values['exits.roi.60']!).toBeLessThan(t.values['exits.roi.0']!);
    // The values were applied: different exits make different runs.
    expect(new Set(record.trials.map((t) => t.metrics?.fills)).size).toBeGreaterThan(1);
    // --min-dsr 1: no flags, no best.json, and the reason.
    expect(record.best?.sets ?? null).toBeNull();
    expect(r.err.join('\n')).toMatch(/no --set flags for the best: its deflated Sharpe ratio .* is under --min-dsr 1/);
    expect(() => readFileSync(join(out, 'best.json'))).toThrow();
  }, 300_000);
});

describe('bot hyperopt --from (issue 38)', () => {
  it("warms each trial up as its own lookback asks, not the strategy file's: a trial gives what it gives run alone", async () => {
    // when-ready buys at the first tick its EMA of five-minute candles has converged. The file's period 20 needs
    // a day and a few hours before --from; periods 150 and 200 need days. Warmed for the file only, no trial
    // had its EMA ready in the two hours searched (it converged a day later): none bought.
    const config = join(dir, 'when-ready.json');
    writeFileSync(
      config,
      JSON.stringify({ name: 'when-ready', strategy: 'when-ready', symbol: 'BTCUSDT', params: { period: 20 } }),
    );
    const span = ['--data', SAMPLE, '--from', FROM, '--to', '2023-03-09T02:00:00Z'];
    const out = join(dir, 'when-ready');
    const r = await capture(hyperopt, [
      ...['--config', config, '--strategies', TEST_STRATEGIES, ...span],
      ...['--space', 'period=150,200', '--sampler', 'random', '--epochs', '2', '--batch', '2', '--seed', '1'],
      ...['--min-trades', '0', '--workers', '1', '--out', out],
    ]);
    expect(r.code, r.err.join('\n')).toBe(0);
    const trials = readFileSync(join(out, 'trials.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { values: { period: number }; metrics: Metrics });
    expect(trials).toHaveLength(2);
    for (const t of trials) {
      expect(t.metrics.fills, `period ${t.values.period}`).toBe(1);
      const alone = await capture(backtest, [
        ...['--config', config, '--strategies', TEST_STRATEGIES, ...span],
        ...['--set', `period=${t.values.period}`, '--out', join(dir, `when-ready-${t.values.period}`), '--force'],
      ]);
      expect(alone.code, alone.err.join('\n')).toBe(0);
      const summary = JSON.parse(readFileSync(join(dir, `when-ready-${t.values.period}`, 'summary.json'), 'utf8')) as {
        metrics: Metrics;
      };
      expect(t.metrics).toEqual(summary.metrics);
    }
  }, 60_000);
});
