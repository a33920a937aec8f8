/**
 * A tree-structured Parzen estimator (Bergstra et al. 2011), multivariate as Optuna's (`multivariate=True`,
 * after Falkner et al. 2018), with Optuna's defaults (Watanabe 2023 lays out each of them):
 *
 * - The first STARTUP trials are drawn at random.
 * - The trials done are split by loss: the best γ(n) = min(⌈0.1 n⌉, 25) are "good", the rest "bad" (a null
 *   loss, a failed or unranked trial, is the worst). Each group is a Parzen estimator: a mixture of one kernel
 *   per trial and one prior kernel (weight 1), the trials weighted alike up to 25 of them and the older ones
 *   ramped down beyond.
 * - A kernel is a product over the dimensions: a numeric one a normal truncated to [0, 1] around the trial's u
 *   (the prior's: centre 0.5, width 1) with Scott's bandwidth 0.2 n^(-1 / (d + 4)), no narrower than
 *   1 / min(100, n + 1); a choice keeps its own value with weight 1 + 1/K against 1/K for each other (the
 *   prior's: 1/K each).
 * - 24 candidates are drawn from the good estimator; the one with the largest log l(x) - log g(x) is proposed
 *   (the first on a tie). Points breaking a constraint are never candidates.
 * - A batch's later proposals count the earlier ones as done with the worst loss (Optuna's constant liar), so a
 *   batch spreads out instead of proposing one point eight times.
 *
 * npm has no TPE to use instead: `hyperparameters` (a hyperopt port) ships random search only, and nothing else
 * there implements a Bayesian sampler for mixed spaces. This is about 150 lines on jstat's normal distribution.
 */
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import { normalCdf, normalQuantile } from '../luck/deflated-sharpe.js';
import { drawFeasible, MAX_DRAWS, type Observation, randomPoint, type Sampler, uniform } from './sampler.js';
import type { Dimension } from './space.js';

export const STARTUP = 10;
const CANDIDATES = 24;
const PRIOR_WEIGHT = 1;
const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/** γ(n): how many of n trials are "good". */
export function goodCount(n: number): number {
  return Math.min(Math.ceil(0.1 * n), 25);
}

/** Optuna's default weights for n trials in the order they were run: flat, the oldest ramped down past 25. */
function weightsFor(n: number): number[] {
  if (n < 25) return Array.from({ length: n }, () => 1);
  const ramp = n - 25;
  return Array.from({ length: n }, (_, i) => (i < ramp ? 1 / n + ((1 - 1 / n) * i) / Math.max(1, ramp - 1) : 1));
}

interface Kernel {
  /** Per dimension: the centre u (numeric) or the value's index (choice); the prior has none. */
  centre: readonly number[] | null;
  logWeight: number;
}

/** A Parzen estimator over the space: kernels at the given points and the prior. */
class Parzen {
  private readonly kernels: Kernel[];
  private readonly sigma: number;
  /** Per numeric dimension and kernel: log of the truncated normal's mass on [0, 1]. */
  private readonly massLog: Map<string, number> = new Map();

  constructor(
    private readonly dimensions: readonly Dimension[],
    points: readonly (readonly number[])[],
  ) {
    const n = points.length;
    const weights = [...weightsFor(n), PRIOR_WEIGHT];
    const total = weights.reduce((a, b) => a + b, 0);
    this.kernels = [
      ...points.map((p, i) => ({ centre: p, logWeight: Math.log((weights[i] as number) / total) })),
      { centre: null, logWeight: Math.log(PRIOR_WEIGHT / total) },
    ];
    const numeric = dimensions.filter((d) => d.kind !== 'choice').length;
    const scott = 0.2 * Math.max(n, 1) ** (-1 / (numeric + 4));
    this.sigma = Math.min(1, Math.max(scott, 1 / Math.min(100, n + 1)));
  }

  private centreSigma(k: Kernel, d: number): [number, number] {
    return k.centre === null ? [0.5, 1] : [k.centre[d] as number, this.sigma];
  }

  /** ln of the normal's mass on [0, 1] (cached per centre and width). */
  private logMass(mu: number, sigma: number): number {
    const key = `${mu}:${sigma}`;
    let v = this.massLog.get(key);
    if (v === undefined) {
      v = Math.log(Math.max(1e-300, normalCdf((1 - mu) / sigma) - normalCdf(-mu / sigma)));
      this.massLog.set(key, v);
    }
    return v;
  }

  /** A point drawn from the mixture. */
  sample(rng: RandomGenerator): number[] {
    let pick = uniform(rng);
    let kernel = this.kernels[this.kernels.length - 1] as Kernel;
    for (const k of this.kernels) {
      pick -= Math.exp(k.logWeight);
      if (pick < 0) {
        kernel = k;
        break;
      }
    }
    return this.dimensions.map((dim, d) => {
      if (dim.kind === 'choice') {
        const n = dim.values.length;
        const own = kernel.centre === null ? -1 : (kernel.centre[d] as number);
        // Own value 1 + 1/K, each other 1/K, out of 2 (the prior: 1/K each).
        const total = own < 0 ? 1 : 2;
        let r = uniform(rng) * total;
        for (let c = 0; c < n; c++) {
          r -= (c === own ? 1 : 0) + 1 / n;
          if (r < 0) return c;
        }
        return n - 1;
      }
      const [mu, sigma] = this.centreSigma(kernel, d);
      const lo = normalCdf(-mu / sigma);
      const hi = normalCdf((1 - mu) / sigma);
      const x = mu + sigma * normalQuantile(lo + uniform(rng) * (hi - lo));
      return Math.min(1, Math.max(0, Number.isFinite(x) ? x : mu));
    });
  }

  /** ln of the mixture's density at a point. */
  logDensity(point: readonly number[]): number {
    const terms = this.kernels.map((k) => {
      let s = k.logWeight;
      this.dimensions.forEach((dim, d) => {
        const x = point[d] as number;
        if (dim.kind === 'choice') {
          const n = dim.values.length;
          const own = k.centre === null ? -1 : (k.centre[d] as number);
          s += own < 0 ? -Math.log(n) : Math.log(((x === own ? 1 : 0) + 1 / n) / 2);
          return;
        }
        const [mu, sigma] = this.centreSigma(k, d);
        const z = (x - mu) / sigma;
        s += -0.5 * z * z - LOG_SQRT_2PI - Math.log(sigma) - this.logMass(mu, sigma);
      });
      return s;
    });
    const top = Math.max(...terms);
    return top + Math.log(terms.reduce((a, t) => a + Math.exp(t - top), 0));
  }
}

export class TpeSampler implements Sampler {
  readonly name = 'tpe';

  constructor(private readonly dimensions: readonly Dimension[]) {}

  ask(
    done: readonly Observation[],
    count: number,
    rng: RandomGenerator,
    feasible: (point: readonly number[]) => boolean,
  ): number[][] {
    const seen: Observation[] = [...done];
    const out: number[][] = [];
    for (let k = 0; k < count; k++) {
      const point =
        seen.length < STARTUP
          ? drawFeasible(() => randomPoint(this.dimensions, rng), feasible)
          : this.propose(seen, rng, feasible);
      out.push(point);
      // The constant liar: proposed, not yet known, counted as the worst.
      seen.push({ point, loss: null });
    }
    return out;
  }

  private propose(
    done: readonly Observation[],
    rng: RandomGenerator,
    feasible: (point: readonly number[]) => boolean,
  ): number[] {
    const order = done
      .map((o, i) => ({ o, i }))
      .sort((a, b) => (a.o.loss ?? Infinity) - (b.o.loss ?? Infinity) || a.i - b.i);
    const good = goodCount(done.length);
    // Each group keeps the order the trials were run in (the weights ramp by age).
    const byRun = (xs: typeof order) => xs.sort((a, b) => a.i - b.i).map((x) => x.o.point);
    const l = new Parzen(this.dimensions, byRun(order.slice(0, good)));
    const g = new Parzen(this.dimensions, byRun(order.slice(good)));
    let best: number[] | undefined;
    let bestScore = -Infinity;
    let candidates = 0;
    for (let draws = 0; candidates < CANDIDATES && draws < MAX_DRAWS; draws++) {
      const x = l.sample(rng);
      if (!feasible(x)) continue;
      candidates++;
      const score = l.logDensity(x) - g.logDensity(x);
      if (score > bestScore) {
        bestScore = score;
        best = x;
      }
    }
    // No candidate kept the constraints (the good region lies against them): the whole space instead.
    return best ?? drawFeasible(() => randomPoint(this.dimensions, rng), feasible);
  }
}
