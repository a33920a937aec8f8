/**
 * Performance metrics of a backtest, each a plain function of the run's equity samples or fills so that it
 * can be checked by hand.
 *
 * - Returns: exact decimals. Total return = final / initial equity - 1; buy-and-hold = last / first price - 1.
 * - Sharpe and Sortino: from the simple returns between consecutive equity samples (a fixed virtual interval,
 *   hourly by default), annualised by sqrt(periods per year) with 365-day years (crypto trades every day),
 *   risk-free rate 0. Sharpe = mean / sample standard deviation (n - 1); Sortino = mean / downside deviation,
 *   sqrt(sum(min(r, 0)^2) / n). Undefined when there are fewer than two returns or the deviation is zero.
 * - Closed trades (round trips) and their win rate, profit factor and expectancy: market/round-trips.ts, shared
 *   with the daemon's operator layer.
 * - Exposure: share of the run's time during which some instance had a non-zero net position (base bought
 *   minus sold by its fills; starting balances are not a position). Fee dust (a residue below the pair's
 *   quantity step, which no order can sell) does not count.
 */
import { type Dec, ZERO } from '../market/decimal.js';
import { netOfFees, type TradeFill } from '../market/round-trips.js';

const DAY_MS = 86_400_000;
const YEAR_MS = 365 * DAY_MS;

/**
 * Each book's stretches [from, to] of holding a net position (bought - sold by its fills, fee dust below the step
 * counting as flat), in time order; a position still held at the end runs to `end`.
 */
export function heldSpans(fills: readonly TradeFill[], end: number): Map<string, [number, number][]> {
  const net = new Map<string, Dec>();
  const since = new Map<string, number>();
  const spans = new Map<string, [number, number][]>();
  for (const f of fills) {
    const before = net.get(f.book) ?? ZERO;
    const moved = netOfFees(f).base;
    const after = f.side === 'BUY' ? before.plus(moved) : before.minus(moved);
    net.set(f.book, after);
    const flat = (q: Dec) => (f.step ? q.abs().lt(f.step) : q.isZero());
    if (flat(before) && !flat(after)) since.set(f.book, f.time);
    else if (!flat(before) && flat(after)) {
      const list = spans.get(f.book) ?? [];
      list.push([since.get(f.book) as number, f.time]);
      spans.set(f.book, list);
      since.delete(f.book);
    }
  }
  for (const [book, from] of since) spans.set(book, [...(spans.get(book) ?? []), [from, end]]);
  return spans;
}

/** Share of [start, end] during which some book's net position (bought - sold) was not zero. */
export function exposure(fills: readonly TradeFill[], start: number, end: number): number {
  if (end <= start) return 0;
  // The union of every book's spans: a sweep over their ends, counting the books held.
  const edges: [number, number][] = [];
  for (const list of heldSpans(fills, end).values()) for (const [from, to] of list) edges.push([from, 1], [to, -1]);
  edges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let held = 0;
  let since = start;
  let exposed = 0;
  for (const [time, step] of edges) {
    if (held === 0 && step > 0) since = time;
    held += step;
    if (held === 0) exposed += time - since;
  }
  return exposed / (end - start);
}

export interface RiskRatios {
  sharpe: number | undefined;
  sortino: number | undefined;
}

/** The simple returns between consecutive equity samples (after a sample at zero or below: none). */
export function sampleReturns(equity: readonly Dec[]): number[] {
  const returns: number[] = [];
  for (let i = 1; i < equity.length; i++) {
    const previous = equity[i - 1] as Dec;
    if (previous.gt(0)) returns.push((equity[i] as Dec).div(previous).minus(1).toNumber());
  }
  return returns;
}

/** Annualised Sharpe and Sortino of an equity series sampled every `intervalMs` (see the module doc). */
export function riskRatios(equity: readonly Dec[], intervalMs: number): RiskRatios {
  const returns = sampleReturns(equity);
  const n = returns.length;
  if (n < 2) return { sharpe: undefined, sortino: undefined };
  const mean = returns.reduce((s, r) => s + r, 0) / n;
  const variance = returns.reduce((s, r) => s + (r - mean) ** 2, 0) / (n - 1);
  const downside = Math.sqrt(returns.reduce((s, r) => s + Math.min(r, 0) ** 2, 0) / n);
  const annual = Math.sqrt(YEAR_MS / intervalMs);
  const sd = Math.sqrt(variance);
  return {
    sharpe: sd > 0 ? (mean / sd) * annual : undefined,
    sortino: downside > 0 ? (mean / downside) * annual : undefined,
  };
}

/** (to - from) / from, exact; undefined when from is zero. */
export function change(from: Dec, to: Dec): Dec | undefined {
  return from.isZero() ? undefined : to.minus(from).div(from);
}

/** Compound annual growth rate: (final / initial)^(year / span) - 1; undefined without a span or equity. */
export function cagr(initial: Dec, final: Dec, spanMs: number): number | undefined {
  if (spanMs <= 0 || !initial.gt(0) || final.isNeg()) return undefined;
  return Math.pow(final.div(initial).toNumber(), YEAR_MS / spanMs) - 1;
}

export interface EquityPoint {
  time: number;
  equity: Dec;
}

export interface LongestDrawdown {
  /** The peak it fell from. */
  start: number;
  /** When equity first got back to the peak; undefined when it had not by the end. */
  end: number | undefined;
  durationMs: number;
}

/**
 * The longest time spent under a previous peak: from the peak to the first sample back at or above it (or
 * to the last sample when it never got back). On the equity samples, so as fine as their interval.
 */
export function longestDrawdown(samples: readonly EquityPoint[]): LongestDrawdown | undefined {
  let best: LongestDrawdown | undefined;
  let peak: EquityPoint | undefined;
  let under = false;
  for (const s of samples) {
    if (peak === undefined || s.equity.gte(peak.equity)) {
      if (under && peak && (best === undefined || s.time - peak.time > best.durationMs))
        best = { start: peak.time, end: s.time, durationMs: s.time - peak.time };
      peak = s;
      under = false;
    } else under = true;
  }
  const last = samples[samples.length - 1];
  if (under && peak && last && (best === undefined || last.time - peak.time > best.durationMs))
    best = { start: peak.time, end: undefined, durationMs: last.time - peak.time };
  return best;
}

export type ReturnPeriod = 'day' | 'week' | 'month';

/** The UTC period a time falls in: 2023-03-01 (day), the Monday starting its week, 2023-03 (month). */
export function periodKey(ms: number, period: ReturnPeriod): string {
  const date = new Date(ms);
  if (period === 'month') return date.toISOString().slice(0, 7);
  if (period === 'week') date.setUTCDate(date.getUTCDate() - ((date.getUTCDay() + 6) % 7));
  return date.toISOString().slice(0, 10);
}

/** The UTC period (periodKey's) that `ms` falls in, as [start, end) in epoch ms. */
export function periodSpan(ms: number, period: ReturnPeriod): [number, number] {
  const date = new Date(ms);
  if (period === 'month') {
    const [y, m] = [date.getUTCFullYear(), date.getUTCMonth()];
    return [Date.UTC(y, m, 1), Date.UTC(y, m + 1, 1)];
  }
  const day = Math.floor(ms / DAY_MS) * DAY_MS;
  if (period === 'day') return [day, day + DAY_MS];
  const monday = day - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return [monday, monday + 7 * DAY_MS];
}

/**
 * The return of each period: its last equity sample over the previous period's last (the first period: over
 * the first sample), minus one. Periods in time order. A sample's key is made only when it leaves the
 * period of the one before (hourly samples over a year: 26,000 dates formatted three times over otherwise).
 */
export function periodReturns(
  samples: readonly EquityPoint[],
  period: ReturnPeriod,
): { period: string; ret: Dec | undefined }[] {
  const out: { period: string; ret: Dec | undefined }[] = [];
  let base = samples[0]?.equity;
  let key: string | undefined;
  let last: Dec | undefined;
  const close = () => {
    if (key !== undefined && last !== undefined && base !== undefined) {
      out.push({ period: key, ret: change(base, last) });
      base = last;
    }
  };
  let [from, to] = [Infinity, -Infinity];
  for (const s of samples) {
    if (!(s.time >= from && s.time < to)) {
      const k = periodKey(s.time, period);
      [from, to] = periodSpan(s.time, period);
      if (k !== key) {
        close();
        key = k;
      }
    }
    last = s.equity;
  }
  close();
  return out;
}
