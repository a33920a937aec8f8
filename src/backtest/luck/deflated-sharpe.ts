/**
 * The probabilistic and the deflated Sharpe ratio (Bailey and López de Prado, "The Sharpe Ratio Efficient
 * Frontier", 2012, and "The Deflated Sharpe Ratio: Correcting for Selection Bias, Backtest Overfitting and
 * Non-Normality", 2014). Every Sharpe ratio here is per period of the returns (not annualised).
 *
 * - PSR(SR*) = Φ((SR - SR*) √(T - 1) / √(1 - γ3 SR + (γ4 - 1) / 4 SR²)): the probability that the true Sharpe
 *   is above SR*, given the estimate SR from T returns of skewness γ3 and kurtosis γ4 (3 for a normal).
 * - The expected maximum Sharpe of N trials without skill whose estimates spread with variance V:
 *   SR0 = √V ((1 - γ) Φ⁻¹(1 - 1/N) + γ Φ⁻¹(1 - 1/(N e))), γ the Euler-Mascheroni constant; 0 for one trial.
 * - DSR = PSR(SR0): the probability that the best of N trials has a true Sharpe above zero, given how high
 *   the best of N skill-less ones would have come by luck. One trial: DSR = PSR(0).
 *
 * The normal distribution is jstat's (Φ from erfc, Φ⁻¹ from erfcinv, both to about 1e-15 in the body); the
 * moments are computed here, with their definitions.
 */
import { createRequire } from 'node:module';
import type jStat from 'jstat';

const EULER_GAMMA = 0.5772156649015329;

/**
 * jstat's normal distribution, loaded on first use: jstat is one CommonJS file of ~110 KB whose import (the
 * named-exports scan of its text included) cost a start ~30 ms, and most runs of a command that can show luck
 * figures show none (a backtest without a sweep, every `bot status`).
 */
let normal: (typeof jStat)['normal'] | undefined;
const normalDistribution = () => (normal ??= (createRequire(import.meta.url)('jstat') as typeof jStat).normal);

/** Φ, the standard normal CDF. */
export function normalCdf(x: number): number {
  return normalDistribution().cdf(x, 0, 1);
}

/** Φ⁻¹, the standard normal quantile. */
export function normalQuantile(p: number): number {
  return normalDistribution().inv(p, 0, 1);
}

export interface ReturnMoments {
  /** Number of returns. */
  n: number;
  mean: number;
  /** Sample standard deviation (n - 1). */
  sd: number;
  /** mean / sd; 0 when sd is 0 (a series that never moved has no edge to measure). */
  sharpe: number;
  /** Third standardised moment, E[(r - m)³] / σ³ with the population σ; 0 when σ is 0. */
  skew: number;
  /** Fourth standardised moment (not excess: 3 for a normal), E[(r - m)⁴] / σ⁴; 3 when σ is 0. */
  kurtosis: number;
}

/** The moments of a series of returns (see ReturnMoments for each definition). */
export function returnMoments(returns: readonly number[]): ReturnMoments {
  const n = returns.length;
  const mean = n > 0 ? returns.reduce((s, r) => s + r, 0) / n : 0;
  let m2 = 0;
  let m3 = 0;
  let m4 = 0;
  for (const r of returns) {
    const d = r - mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const sd = n > 1 ? Math.sqrt(m2 / (n - 1)) : 0;
  const pop = n > 0 ? m2 / n : 0;
  const flat = !(pop > 0);
  return {
    n,
    mean,
    sd,
    sharpe: sd > 0 ? mean / sd : 0,
    skew: flat ? 0 : m3 / n / pop ** 1.5,
    kurtosis: flat ? 3 : m4 / n / pop ** 2,
  };
}

/** PSR: the probability that the true Sharpe exceeds `benchmark`, from an estimate over `n` returns. */
export function probabilisticSharpe(sharpe: number, n: number, skew: number, kurtosis: number, benchmark = 0): number {
  if (n < 2) return NaN;
  const spread = 1 - skew * sharpe + ((kurtosis - 1) / 4) * sharpe * sharpe;
  // A negative spread happens only for extreme moments on a few returns: no estimate of the error is possible.
  if (!(spread > 0)) return NaN;
  return normalCdf(((sharpe - benchmark) * Math.sqrt(n - 1)) / Math.sqrt(spread));
}

/** SR0: the expected maximum Sharpe of `trials` skill-less trials whose Sharpe estimates have variance `variance`. */
export function expectedMaxSharpe(trials: number, variance: number): number {
  if (trials <= 1 || !(variance > 0)) return 0;
  const z =
    (1 - EULER_GAMMA) * normalQuantile(1 - 1 / trials) + EULER_GAMMA * normalQuantile(1 - 1 / (trials * Math.E));
  return Math.sqrt(variance) * z;
}

export interface DeflatedSharpe {
  /** The best trial's Sharpe per period. */
  sharpe: number;
  /** SR0, per period. */
  expectedMax: number;
  /** PSR(SR0): the probability that the best trial's true Sharpe is above zero, given the trials. */
  dsr: number;
  trials: number;
  /** The variance of the trials' Sharpe estimates (per period). */
  variance: number;
  /** The best trial's returns: how many, their skewness and kurtosis. */
  n: number;
  skew: number;
  kurtosis: number;
}

/**
 * The deflated Sharpe ratio of the best trial's returns among trials whose Sharpe estimates (per period) are
 * `sharpes` (the best's included). The variance is the sample variance of those estimates (n - 1).
 */
export function deflatedSharpe(best: readonly number[], sharpes: readonly number[]): DeflatedSharpe {
  const m = returnMoments(best);
  const trials = sharpes.length;
  const mean = sharpes.reduce((s, x) => s + x, 0) / (trials || 1);
  const variance = trials > 1 ? sharpes.reduce((s, x) => s + (x - mean) ** 2, 0) / (trials - 1) : 0;
  const expectedMax = expectedMaxSharpe(trials, variance);
  return {
    sharpe: m.sharpe,
    expectedMax,
    dsr: probabilisticSharpe(m.sharpe, m.n, m.skew, m.kurtosis, expectedMax),
    trials,
    variance,
    n: m.n,
    skew: m.skew,
    kurtosis: m.kurtosis,
  };
}
