/**
 * Samplers propose a hyperopt's next trials from the ones done. A trial is a point (space.ts: u in [0, 1] per
 * numeric dimension, an index per choice) and its loss (lower is better; null: failed, refused or not ranked,
 * which counts as worse than any loss). A sampler is a pure function of the trials done, the count asked and
 * the random stream it is given: the search (search.ts) gives each batch of trials its own stream, derived
 * from --seed and the batch's number alone, so the proposals never depend on how many workers ran what.
 */
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import type { Dimension } from './space.js';

export interface Observation {
  point: readonly number[];
  loss: number | null;
}

export interface Sampler {
  readonly name: SamplerName;
  /**
   * `count` new points after `done`, in order; `feasible` says whether a point keeps the constraints (one that
   * does not is never proposed: the sampler draws again, up to a bound, then throws).
   */
  ask(
    done: readonly Observation[],
    count: number,
    rng: RandomGenerator,
    feasible: (point: readonly number[]) => boolean,
  ): number[][];
}

export const SAMPLERS = ['tpe', 'random'] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** Draws per proposal before the constraints are declared too tight. */
export const MAX_DRAWS = 10_000;

export function uniform(rng: RandomGenerator): number {
  return uniformFloat64(rng);
}

/** One point drawn uniformly: each numeric dimension on its scale, each choice with equal odds. */
export function randomPoint(dimensions: readonly Dimension[], rng: RandomGenerator): number[] {
  return dimensions.map((d) =>
    d.kind === 'choice' ? Math.min(d.values.length - 1, Math.floor(uniform(rng) * d.values.length)) : uniform(rng),
  );
}

export class TooTightError extends Error {}

/** Draws until `feasible`, at most MAX_DRAWS times. */
export function drawFeasible(draw: () => number[], feasible: (point: readonly number[]) => boolean): number[] {
  for (let i = 0; i < MAX_DRAWS; i++) {
    const point = draw();
    if (feasible(point)) return point;
  }
  throw new TooTightError(`no point drawn in ${MAX_DRAWS} kept the constraints`);
}

/** Random search: every point drawn uniformly, whatever was learnt. */
export class RandomSampler implements Sampler {
  readonly name = 'random';

  constructor(private readonly dimensions: readonly Dimension[]) {}

  ask(
    _done: readonly Observation[],
    count: number,
    rng: RandomGenerator,
    feasible: (point: readonly number[]) => boolean,
  ): number[][] {
    return Array.from({ length: count }, () => drawFeasible(() => randomPoint(this.dimensions, rng), feasible));
  }
}
