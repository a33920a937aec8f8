/**
 * Guards against overfitting a sweep: where the data is split, and what the out-of-sample runs add up to.
 *
 * - Spans are half-open, [from, to), in epoch ms; the data's span runs from its first tick to one ms past its
 *   last, so every tick is in exactly one part.
 * - Holdout: the first (100 - p) % of the span is in-sample, the rest out-of-sample; the boundary is
 *   from + floor(span x (100 - p) / 100).
 * - Walk-forward: N windows, each a train part followed at once by a test part; window i starts at
 *   from + i x test, so the test parts follow each other without gap or overlap. With --train and --test the
 *   lengths are given (the windows must fit in the data); without, the span is cut into N + 3 equal test
 *   lengths (floored to the ms) and train is three of them (train : test = 3 : 1).
 * - Stitched out-of-sample equity: each test part starts again from the same balances; the curves are chained
 *   by scaling each to start where the previous one ended, so the stitched return is the product of theirs.
 * - Walk-forward efficiency: the stitched out-of-sample return per year over the mean in-sample return per
 *   year of the chosen combinations (simple annualisation: return x year / span). Undefined when the in-sample
 *   mean is not positive.
 */
import { BotError } from '../errors.js';

export interface Span {
  from: number;
  to: number;
}

export interface WalkWindow {
  train: Span;
  test: Span;
}

const YEAR_MS = 365 * 86_400_000;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** "7d", "36h", "90m", "2w", "45s" in ms; `flag` names the flag in the error, `examples` the lengths it suggests. */
export function parseDuration(text: string, flag: string, examples = '7d, 36h, 90m or 2w'): number {
  const m = /^(\d+(?:\.\d+)?)([smhdw])$/.exec(text.trim());
  const ms = m ? Math.round(Number(m[1]) * (UNIT_MS[m[2]!] as number)) : 0;
  if (!m || !(ms > 0 && Number.isFinite(ms)))
    throw new BotError('E_USAGE', `backtest: ${flag} expects a length such as ${examples}, got '${text}'`);
  return ms;
}

/** `--holdout 30%` (or 30): the held-out percentage, strictly between 0 and 100. */
export function parseHoldout(text: string): number {
  const m = /^(\d+(?:\.\d+)?)%?$/.exec(text.trim());
  const pct = m ? Number(m[1]) : NaN;
  if (!(pct > 0 && pct < 100))
    throw new BotError(
      'E_USAGE',
      `backtest: --holdout expects a percentage between 0 and 100 such as 30%, got '${text}'`,
    );
  return pct;
}

export function holdoutSplit(span: Span, pct: number): { inSample: Span; outOfSample: Span } {
  const boundary = span.from + Math.floor(((span.to - span.from) * (100 - pct)) / 100);
  return { inSample: { from: span.from, to: boundary }, outOfSample: { from: boundary, to: span.to } };
}

export function walkForwardWindows(span: Span, n: number, lengths?: { train: number; test: number }): WalkWindow[] {
  const total = span.to - span.from;
  const test = lengths?.test ?? Math.floor(total / (n + 3));
  const train = lengths?.train ?? 3 * test;
  const needed = train + n * test;
  if (test <= 0 || needed > total)
    throw new BotError(
      'E_USAGE',
      `backtest: --walk-forward ${n} with train ${days(train)} and test ${days(test)} needs ${days(needed)} of data, the data span ${days(total)}`,
    );
  return Array.from({ length: n }, (_, i) => {
    const start = span.from + i * test;
    return { train: { from: start, to: start + train }, test: { from: start + train, to: start + train + test } };
  });
}

function days(ms: number): string {
  return `${(ms / 86_400_000).toFixed(2)} days`;
}

/** Chains equity curves ([seconds, equity]) so each starts where the previous ended. */
export function stitch(curves: readonly (readonly [number, number][])[]): [number, number][] {
  const out: [number, number][] = [];
  let level: number | undefined;
  for (const curve of curves) {
    const start = curve[0]?.[1];
    if (start === undefined || start <= 0) continue;
    const scale = level === undefined ? 1 : level / start;
    for (const [t, e] of curve) {
      const point: [number, number] = [t, Math.round(e * scale * 100) / 100];
      if (out.length > 0 && (out[out.length - 1] as [number, number])[0] >= t) out[out.length - 1] = point;
      else out.push(point);
    }
    level = (out[out.length - 1] as [number, number])[1];
  }
  return out;
}

/** Return per year, simple: ratio x year / span. */
export function perYear(ratio: number, spanMs: number): number {
  return spanMs > 0 ? (ratio * YEAR_MS) / spanMs : 0;
}

/** Largest fall from a previous peak of a curve, as a ratio (0.05 = 5 %). */
export function maxDrawdown(curve: readonly [number, number][]): number {
  let peak = -Infinity;
  let worst = 0;
  for (const [, e] of curve) {
    peak = Math.max(peak, e);
    if (peak > 0) worst = Math.max(worst, 1 - e / peak);
  }
  return worst;
}
