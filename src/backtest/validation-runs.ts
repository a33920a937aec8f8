/**
 * Holdout and walk-forward runs on the sweep's worker threads (sweep.ts): each part of the data is one sweep of
 * the combinations restricted to that part's ticks, so a result never depends on which worker ran it.
 */
import { D } from '../market/decimal.js';
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
    outOfSample: { rank: number | null; status: string; metrics: Metrics; equity: [number, number][] };
  }[];
}

export interface WalkForwardRecord {
  windows: {
    train: SpanText;
    test: SpanText;
    /** The combination ranked best on the train part; null when none could be ranked there. */
    chosen: { index: number; overrides: Record<string, unknown>; inSample: Metrics } | null;
    outOfSample: Metrics | null;
  }[];
  stitched: { equity: [number, number][]; returnPct: string; maxDrawdownPct: string };
  /** Out-of-sample return per year over the chosen combinations' mean in-sample return per year. */
  efficiency: string | null;
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
          outOfSample: { rank: o.rank, status: o.status, metrics: o.metrics, equity: o.equity },
        };
      }),
    },
  };
}

const ratio = (pct: string) => Number(pct) / 100;

/** Per window: every combination on the train part, the best of them on the test part; then the stitch. */
export async function runWalkForward(
  job: SweepJob,
  workers: SweepWorkers,
  windows: readonly WalkWindow[],
  progress: Progress,
): Promise<{ lastTrain: SweepResult[]; record: WalkForwardRecord }> {
  const out: WalkForwardRecord['windows'] = [];
  const curves: [number, number][][] = [];
  const inSampleYearly: number[] = [];
  let lastTrain: SweepResult[] = [];
  for (const [i, w] of windows.entries()) {
    const train = await runSweep({ ...job, window: w.train }, workers, progress(`window ${i + 1} train`));
    lastTrain = train;
    const best = train.find((r) => r.rank === 1);
    if (!best) {
      out.push({ train: spanText(w.train), test: spanText(w.test), chosen: null, outOfSample: null });
      continue;
    }
    const [test] = await runSweep(
      { ...job, combos: [best.overrides], window: w.test },
      typeof workers === 'number' ? 1 : workers,
      progress(`window ${i + 1} test`),
    );
    curves.push((test as SweepResult).equity);
    inSampleYearly.push(perYear(ratio(best.metrics.totalReturnPct), w.train.to - w.train.from));
    out.push({
      train: spanText(w.train),
      test: spanText(w.test),
      chosen: { index: best.index, overrides: best.overrides, inSample: best.metrics },
      outOfSample: (test as SweepResult).metrics,
    });
  }
  const equity = stitch(curves);
  const first = equity[0]?.[1];
  const last = equity[equity.length - 1]?.[1];
  const total = first && last ? last / first - 1 : 0;
  const testSpan = windows.reduce((n, w) => n + (w.test.to - w.test.from), 0);
  const meanIs = inSampleYearly.reduce((a, b) => a + b, 0) / (inSampleYearly.length || 1);
  return {
    lastTrain,
    record: {
      windows: out,
      stitched: {
        equity,
        returnPct: new D(total).mul(100).toFixed(4),
        maxDrawdownPct: new D(maxDrawdown(equity)).mul(100).toFixed(4),
      },
      efficiency: inSampleYearly.length > 0 && meanIs > 0 ? (perYear(total, testSpan) / meanIs).toFixed(4) : null,
    },
  };
}

/** The objective of a run for the scatter (in-sample against out-of-sample); null when undefined. */
export function objectiveNumber(metrics: Metrics | null, ranking: Ranking): number | null {
  const v = metrics && objective(metrics, ranking.rankBy);
  return v === null || v === undefined ? null : Number(v);
}
