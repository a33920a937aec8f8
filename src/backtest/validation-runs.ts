/**
 * Holdout and walk-forward runs on the sweep's worker threads (sweep.ts): each part of the data is one sweep of
 * the combinations restricted to that part's ticks, so a result never depends on which worker ran it.
 */
import { D, type Dec, dec } from '../market/decimal.js';
import type { Metrics } from './summary.js';
import { iso } from './summary.js';
import {
  objective,
  type Ranking,
  runSweep,
  type SweepJob,
  type SweepProgress,
  type SweepResult,
  type SweepWorkers,
} from './sweep.js';
import { holdoutSplit, maxDrawdown, perYear, type Span, stitch, type WalkWindow } from './validation.js';

export interface SpanText {
  from: string;
  to: string;
}

const spanText = (s: Span): SpanText => ({ from: iso(s.from), to: iso(s.to) });

export interface HoldoutRecord {
  percent: number;
  inSample: SpanText;
  outOfSample: SpanText;
  /** In-sample ranking order: each combination's in-sample and out-of-sample rank and metrics. */
  results: {
    index: number;
    overrides: Record<string, unknown>;
    inSample: { rank: number | null; status: string; metrics: Metrics };
    outOfSample: {
      rank: number | null;
      status: string;
      metrics: Metrics;
      equity: [number, number][];
      /** Its instances that ended early on the held-out part (status 'failed'). */
      ended: string[];
    };
  }[];
}

/** A combination that failed (an instance ended early) on one part of the data: its results are not results. */
export interface PartFailure {
  part: string;
  overrides: Record<string, unknown>;
  ended: string[];
}

/** What a walk-forward window's test part gave: a result, a failure, or nothing (no pick on its train part). */
export type WindowOutcome = 'tested' | 'failed' | 'not tested';

export interface WalkForwardRecord {
  windows: {
    train: SpanText;
    test: SpanText;
    /** The combination ranked best on the train part; null when none could be ranked there. */
    chosen: { index: number; overrides: Record<string, unknown>; inSample: Metrics } | null;
    outcome: WindowOutcome;
    /** The pick's results on the test part; null unless it ran to the end there ('tested'). */
    outOfSample: Metrics | null;
    /** Why the test part failed (its instances that ended early), or why nothing was tested. */
    ended: string[];
    /** Combinations that failed on the train part (never picked, but failures all the same). */
    trainFailures: PartFailure[];
  }[];
  stitched: {
    equity: [number, number][];
    returnPct: string;
    maxDrawdownPct: string;
    /** Every window tested to its end: false when a test part failed or had no pick (the stitch leaves it out). */
    complete: boolean;
    windowsTested: number;
  };
  /** Out-of-sample return per year over the chosen combinations' mean in-sample return per year. */
  efficiency: string | null;
  /** Why the efficiency is null, in words (null when it is a number). */
  efficiencyNote: string | null;
  /** The data after the last test part, which no window tests (null when the windows reach the data's end). */
  untested: SpanText | null;
}

type Progress = (phase: string) => ((p: SweepProgress) => void) | undefined;

/** Every combination on the in-sample part (ranked: the sweep's result) and on the held-out part. */
export async function runHoldout(
  job: SweepJob,
  workers: SweepWorkers,
  span: Span,
  percent: number,
  progress: Progress,
): Promise<{ inSample: SweepResult[]; record: HoldoutRecord }> {
  const { inSample, outOfSample } = holdoutSplit(span, percent);
  const ins = await runSweep({ ...job, window: inSample }, workers, progress('in-sample'));
  const outs = await runSweep({ ...job, window: outOfSample }, workers, progress('held out'));
  const byIndex = new Map(outs.map((r) => [r.index, r]));
  return {
    inSample: ins,
    record: {
      percent,
      inSample: spanText(inSample),
      outOfSample: spanText(outOfSample),
      results: ins.map((r) => {
        const o = byIndex.get(r.index) as SweepResult;
        return {
          index: r.index,
          overrides: r.overrides,
          inSample: { rank: r.rank, status: r.status, metrics: r.metrics },
          outOfSample: { rank: o.rank, status: o.status, metrics: o.metrics, equity: o.equity, ended: o.ended },
        };
      }),
    },
  };
}

/** A run's growth factor (final over initial equity), exact; undefined without initial equity. */
function growth(m: Metrics): Dec | undefined {
  const initial = dec(m.initialEquity);
  return initial.gt(0) ? dec(m.finalEquity).div(initial) : undefined;
}

const failuresOf = (results: readonly SweepResult[], part: string): PartFailure[] =>
  results.filter((r) => r.status === 'failed').map((r) => ({ part, overrides: r.overrides, ended: r.ended }));

/**
 * Per window: every combination on the train part, the best of them on the test part; then the stitch of the
 * parts tested to their end. `span` is the data's (what follows the last test part is reported as untested).
 */
export async function runWalkForward(
  job: SweepJob,
  workers: SweepWorkers,
  windows: readonly WalkWindow[],
  span: Span,
  progress: Progress,
  /** How a train part chooses: every combination of the job ranked (a hyperopt searches instead). */
  train: (window: Span, progress: ReturnType<Progress>) => Promise<SweepResult[]> = (window, p) =>
    runSweep({ ...job, window }, workers, p),
): Promise<{ lastTrain: SweepResult[]; record: WalkForwardRecord }> {
  const out: WalkForwardRecord['windows'] = [];
  const curves: [number, number][][] = [];
  const inSampleYearly: number[] = [];
  let outOfSample = new D(1);
  let testSpan = 0;
  let lastTrain: SweepResult[] = [];
  for (const [i, w] of windows.entries()) {
    const trained = await train(w.train, progress(`window ${i + 1} train`));
    lastTrain = trained;
    const window = { train: spanText(w.train), test: spanText(w.test) };
    const trainFailures = failuresOf(trained, `window ${i + 1} train`);
    const best = trained.find((r) => r.rank === 1);
    if (!best) {
      const why = `no combination could be ranked on the train part (${trainFailures.length} of ${trained.length} failed)`;
      out.push({ ...window, chosen: null, outcome: 'not tested', outOfSample: null, ended: [why], trainFailures });
      continue;
    }
    const [test] = (await runSweep(
      { ...job, combos: [best.overrides], window: w.test },
      typeof workers === 'number' ? 1 : workers,
      progress(`window ${i + 1} test`),
    )) as [SweepResult];
    const chosen = { index: best.index, overrides: best.overrides, inSample: best.metrics };
    const ratio = growth(test.metrics);
    // A pick that failed on its test part has no result there: an instance that stopped early is not a result.
    if (test.ended.length > 0 || ratio === undefined) {
      out.push({ ...window, chosen, outcome: 'failed', outOfSample: null, ended: test.ended, trainFailures });
      continue;
    }
    curves.push(test.equity);
    outOfSample = outOfSample.mul(ratio);
    testSpan += w.test.to - w.test.from;
    const inSample = growth(best.metrics);
    inSampleYearly.push(perYear(inSample === undefined ? 0 : inSample.minus(1).toNumber(), w.train.to - w.train.from));
    out.push({ ...window, chosen, outcome: 'tested', outOfSample: test.metrics, ended: [], trainFailures });
  }
  const equity = stitch(curves);
  const total = outOfSample.minus(1);
  const tested = out.filter((x) => x.outcome === 'tested').length;
  const complete = tested === windows.length;
  const meanIs = inSampleYearly.reduce((a, b) => a + b, 0) / (inSampleYearly.length || 1);
  const last = windows[windows.length - 1]?.test.to ?? span.to;
  const { efficiency, note } = efficiencyOf(out, complete, meanIs, perYear(total.toNumber(), testSpan));
  return {
    lastTrain,
    record: {
      windows: out,
      stitched: {
        equity,
        returnPct: total.mul(100).toFixed(4),
        maxDrawdownPct: new D(maxDrawdown(equity)).mul(100).toFixed(4),
        complete,
        windowsTested: tested,
      },
      efficiency,
      efficiencyNote: note,
      untested: last < span.to ? spanText({ from: last, to: span.to }) : null,
    },
  };
}

/** The walk-forward efficiency, or why there is none. */
function efficiencyOf(
  windows: WalkForwardRecord['windows'],
  complete: boolean,
  meanInSample: number,
  outOfSampleYearly: number,
): { efficiency: string | null; note: string | null } {
  if (!complete) {
    const missing = windows.flatMap((w, i) => (w.outcome === 'tested' ? [] : [`window ${i + 1} ${w.outcome}`]));
    return { efficiency: null, note: `n/a: the out-of-sample result is incomplete (${missing.join(', ')})` };
  }
  if (!(meanInSample > 0))
    return {
      efficiency: null,
      note:
        `n/a: the picks' mean in-sample return is not positive (${(meanInSample * 100).toFixed(2)} % a year), ` +
        'so a ratio to it means nothing',
    };
  return { efficiency: (outOfSampleYearly / meanInSample).toFixed(4), note: null };
}

/**
 * Every failure of a sweep's runs, in the order they ran: the ranked part's (the whole data, or a holdout's
 * in-sample part), a holdout's held-out part, every walk-forward window's train and test parts.
 */
export function sweepFailures(
  results: readonly SweepResult[],
  holdout?: HoldoutRecord,
  walkForward?: WalkForwardRecord,
): PartFailure[] {
  if (walkForward)
    return walkForward.windows.flatMap((w, i) => [
      ...w.trainFailures,
      ...(w.outcome === 'failed' && w.chosen
        ? [{ part: `window ${i + 1} test`, overrides: w.chosen.overrides, ended: w.ended }]
        : []),
    ]);
  const out = failuresOf(results, holdout ? 'in-sample part' : '');
  for (const r of holdout?.results ?? [])
    if (r.outOfSample.status === 'failed')
      out.push({ part: 'held-out part', overrides: r.overrides, ended: r.outOfSample.ended });
  return out;
}

/** The objective of a run for the scatter (in-sample against out-of-sample); null when undefined. */
export function objectiveNumber(metrics: Metrics | null, ranking: Ranking): number | null {
  const v = metrics && objective(metrics, ranking.rankBy);
  return v === null || v === undefined ? null : Number(v);
}
