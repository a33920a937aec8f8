/**
 * The probability of backtest overfitting (Bailey, Borwein, López de Prado and Zhu, "The Probability of
 * Backtest Overfitting", 2015), by combinatorially symmetric cross-validation (CSCV):
 *
 * 1. The trials' returns over the same T periods are cut into S contiguous blocks of (nearly) equal length.
 * 2. For each of the C(S, S/2) ways to take half of the blocks as in-sample (the rest out-of-sample), the
 *    trial with the best in-sample Sharpe is chosen (the first in trial order on a tie), and its out-of-sample
 *    Sharpe is ranked among all the trials' (1 = worst, N = best; ties share the mean of their ranks).
 * 3. ω = rank / (N + 1), λ = ln(ω / (1 - ω)): λ ≤ 0 means the in-sample best did no better than the median out
 *    of sample. PBO is the share of splits with λ ≤ 0.
 *
 * Pure noise gives a PBO near 0.5 (the in-sample best is a random draw out of sample); a trial with a real edge
 * among noise is chosen in sample and stays on top out of sample, a PBO near 0. The Sharpe of a block set is
 * mean / sample deviation of its returns (0 without deviation), from per-block sums.
 */

export interface BacktestOverfitting {
  /** Share of splits whose in-sample best ranked at or below the median out of sample. */
  pbo: number;
  /** S: the blocks the returns were cut into. */
  blocks: number;
  /** The logit λ of each split (C(S, S/2) of them), in the order the splits were enumerated. */
  logits: number[];
}

/** The most blocks used (C(16, 8) = 12,870 splits), and the fewest returns a block may hold. */
export const MAX_BLOCKS = 16;
const MIN_BLOCK_RETURNS = 4;

/** S for T returns: even, at most MAX_BLOCKS, each block at least MIN_BLOCK_RETURNS long; < 4: none possible. */
export function blocksFor(periods: number): number {
  const s = Math.min(MAX_BLOCKS, Math.floor(periods / MIN_BLOCK_RETURNS));
  return s - (s % 2);
}

/** Every S/2-subset of 0..S-1, as bit masks, in increasing order. */
function halves(s: number): number[] {
  const out: number[] = [];
  for (let mask = 0; mask < 1 << s; mask++) {
    let bits = 0;
    for (let m = mask; m > 0; m &= m - 1) bits++;
    if (bits === s / 2) out.push(mask);
  }
  return out;
}

/**
 * PBO of trials given as their returns over the same periods (`returns[i]` trial i's; a longer series is cut to
 * the shortest). Undefined (null) with fewer than two trials or too few periods for four blocks.
 */
export function backtestOverfitting(
  returns: readonly (readonly number[])[],
  blocks?: number,
): BacktestOverfitting | null {
  const trials = returns.length;
  const periods = Math.min(...returns.map((r) => r.length));
  const s = blocks ?? blocksFor(periods);
  if (trials < 2 || s < 4 || s % 2 !== 0 || periods < s) return null;
  // Per block and trial: count, sum and sum of squares of the returns.
  const count = new Float64Array(s);
  const sum = new Float64Array(s * trials);
  const squares = new Float64Array(s * trials);
  for (let b = 0; b < s; b++) {
    const from = Math.floor((b * periods) / s);
    const to = Math.floor(((b + 1) * periods) / s);
    count[b] = to - from;
    for (let i = 0; i < trials; i++) {
      const r = returns[i] as readonly number[];
      let x = 0;
      let x2 = 0;
      for (let t = from; t < to; t++) {
        const v = r[t] as number;
        x += v;
        x2 += v * v;
      }
      sum[b * trials + i] = x;
      squares[b * trials + i] = x2;
    }
  }
  // Each trial's totals: a split's out-of-sample sums are the totals less its in-sample ones.
  const total = { n: periods, x: new Float64Array(trials), x2: new Float64Array(trials) };
  for (let b = 0; b < s; b++)
    for (let i = 0; i < trials; i++) {
      total.x[i] = (total.x[i] as number) + (sum[b * trials + i] as number);
      total.x2[i] = (total.x2[i] as number) + (squares[b * trials + i] as number);
    }
  const sharpeOf = (n: number, x: number, x2: number): number => {
    const mean = x / n;
    const variance = (x2 - n * mean * mean) / (n - 1);
    return variance > 0 ? mean / Math.sqrt(variance) : 0;
  };
  const logits: number[] = [];
  const outOfSample = new Float64Array(trials);
  let overfit = 0;
  for (const mask of halves(s)) {
    let n = 0;
    for (let b = 0; b < s; b++) if ((mask & (1 << b)) !== 0) n += count[b] as number;
    let best = 0;
    let bestSharpe = -Infinity;
    for (let i = 0; i < trials; i++) {
      let x = 0;
      let x2 = 0;
      for (let b = 0; b < s; b++) {
        if ((mask & (1 << b)) === 0) continue;
        x += sum[b * trials + i] as number;
        x2 += squares[b * trials + i] as number;
      }
      const v = sharpeOf(n, x, x2);
      if (v > bestSharpe) {
        bestSharpe = v;
        best = i;
      }
      outOfSample[i] = sharpeOf(total.n - n, (total.x[i] as number) - x, (total.x2[i] as number) - x2);
    }
    const chosen = outOfSample[best] as number;
    let below = 0;
    let equal = 0;
    for (let i = 0; i < trials; i++) {
      const v = outOfSample[i] as number;
      if (v < chosen) below++;
      else if (v === chosen) equal++;
    }
    // Ranks 1..N, ties sharing the mean of theirs.
    const rank = below + (equal + 1) / 2;
    const omega = rank / (trials + 1);
    const logit = Math.log(omega / (1 - omega));
    logits.push(logit);
    if (logit <= 0) overfit++;
  }
  return { pbo: overfit / logits.length, blocks: s, logits };
}
