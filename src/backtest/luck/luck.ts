/**
 * How much of a search's best is luck: the deflated Sharpe ratio of the best (deflated-sharpe.ts) and the
 * probability of backtest overfitting of the search (backtest-overfitting.ts), over the returns between the
 * equity samples of every trial that ran (the returns the Sharpe of the report is computed from), with a plain
 * verdict. Every figure is formatted here, once, so the outputs stay byte-identical.
 *
 * The verdict:
 * - more likely luck than skill: DSR below 0.5, or PBO above 0.5;
 * - likely skill: DSR at least 0.95 and PBO at most 0.25 (or not measurable: a single trial);
 * - otherwise: some evidence of skill, not conclusive.
 */
import { BotError } from '../../errors.js';
import { backtestOverfitting } from './backtest-overfitting.js';
import { deflatedSharpe, returnMoments } from './deflated-sharpe.js';

const YEAR_MS = 365 * 86_400_000;

export interface LuckRecord {
  /** Trials that ran and count as tried (distinct combinations). */
  trials: number;
  /** The best's Sharpe, annualised as the report's (from the same returns), and what it was computed from. */
  bestSharpe: string;
  returns: number;
  skew: string;
  kurtosis: string;
  /** The expected maximum Sharpe of that many skill-less trials with the trials' spread, annualised. */
  expectedMaxSharpe: string;
  /** The deflated Sharpe ratio of the best: a probability; null when it cannot be estimated. */
  dsr: string | null;
  /** The probability of backtest overfitting; null with one trial or too few returns. */
  pbo: string | null;
  /** The blocks the returns were cut into for PBO, the splits, and the splits' logits binned for the page. */
  pboBlocks: number | null;
  logits: { from: number; to: number; count: number }[];
  verdict: string;
}

/** A trial as the luck figures see it: its returns between equity samples. */
export interface LuckTrial {
  returns: readonly number[];
}

const fixed = (x: number, places = 4): string => (Number.isFinite(x) ? x.toFixed(places) : 'n/a');

/** The logits in bins of 0.5 from the lowest to the highest (the page’s histogram). */
function bins(logits: readonly number[]): LuckRecord['logits'] {
  const finite = logits.filter((l) => Number.isFinite(l));
  if (finite.length === 0) return [];
  const width = 0.5;
  const lo = Math.floor(Math.min(...finite) / width) * width;
  const hi = Math.max(...finite);
  const out: LuckRecord['logits'] = [];
  for (let from = lo; from <= hi; from += width)
    out.push({ from: Number(from.toFixed(2)), to: Number((from + width).toFixed(2)), count: 0 });
  // Bins hold (from, to]: a logit of exactly 0 (the median) is counted with the overfit ones, as PBO counts it.
  for (const l of finite) {
    const at = Math.min(out.length - 1, Math.max(0, Math.ceil((l - lo) / width) - 1));
    (out[at] as LuckRecord['logits'][number]).count++;
  }
  return out;
}

export function verdictOf(dsr: number | null, pbo: number | null): string {
  if (dsr === null || Number.isNaN(dsr)) return 'too few returns to tell skill from luck';
  if (dsr < 0.5 || (pbo !== null && pbo > 0.5)) return 'more likely luck than skill';
  if (dsr >= 0.95 && (pbo === null || pbo <= 0.25)) return 'likely skill';
  return 'some evidence of skill, not conclusive';
}

/**
 * The luck figures of a search whose best is `trials[best]`; `sampleMs` is the equity sampling interval (the
 * annualisation of the report's Sharpe). Null without a best.
 */
export function luckOf(trials: readonly LuckTrial[], best: number | undefined, sampleMs: number): LuckRecord | null {
  const chosen = best === undefined ? undefined : trials[best];
  if (chosen === undefined) return null;
  const annual = Math.sqrt(YEAR_MS / sampleMs);
  const sharpes = trials.map((t) => returnMoments(t.returns).sharpe);
  const d = deflatedSharpe(chosen.returns, sharpes);
  const o = backtestOverfitting(trials.map((t) => t.returns));
  const dsr = Number.isNaN(d.dsr) ? null : d.dsr;
  const pbo = o?.pbo ?? null;
  const verdict = verdictOf(dsr, pbo);
  const parts = [
    `the best of ${trials.length} trial${trials.length === 1 ? '' : 's'}: deflated Sharpe ${dsr === null ? 'n/a' : dsr.toFixed(2)}`,
    `PBO ${pbo === null ? 'n/a' : pbo.toFixed(2)}`,
  ];
  return {
    trials: trials.length,
    bestSharpe: fixed(d.sharpe * annual),
    returns: d.n,
    skew: fixed(d.skew),
    kurtosis: fixed(d.kurtosis),
    expectedMaxSharpe: fixed(d.expectedMax * annual),
    dsr: dsr === null ? null : fixed(dsr),
    pbo: pbo === null ? null : fixed(pbo),
    pboBlocks: o?.blocks ?? null,
    logits: o ? bins(o.logits) : [],
    verdict: `${parts.join(', ')}: ${verdict}`,
  };
}

/** Two lines for a terminal: the bar the best had to clear, and the verdict. */
export function luckLines(luck: LuckRecord): string[] {
  return [
    `luck: Sharpe ${luck.bestSharpe} of the best against ${luck.expectedMaxSharpe} expected of the best of ${luck.trials} skill-less trials; deflated Sharpe ${luck.dsr ?? 'n/a'}, PBO ${luck.pbo ?? 'n/a'}${luck.pboBlocks === null ? '' : ` (${luck.pboBlocks} blocks)`}`,
    `luck: ${luck.verdict}`,
  ];
}

/** `--min-dsr P`: a probability, 0 to 1. */
export function minDsrFlag(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const p = Number(value);
  if (value.trim() === '' || !(p >= 0 && p <= 1))
    throw new BotError('E_USAGE', `--min-dsr must be a probability from 0 to 1 (e.g. 0.95), got '${value}'`);
  return p;
}

/** Whether a best falls under `--min-dsr` (a DSR that cannot be estimated is under any bound). */
export function belowMinDsr(luck: LuckRecord, minDsr: number | undefined): boolean {
  return minDsr !== undefined && (luck.dsr === null || Number(luck.dsr) < minDsr);
}

/** What is printed instead of the best's flags when it is under `--min-dsr`. */
export function minDsrRefusal(luck: LuckRecord, minDsr: number): string {
  return `no --set flags for the best: its deflated Sharpe ratio ${luck.dsr ?? 'n/a'} is under --min-dsr ${minDsr} (${luck.verdict})`;
}
