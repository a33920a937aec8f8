/**
 * The luck figures against numbers worked by hand and published: the probabilistic Sharpe ratio of a normal
 * series, the deflated Sharpe ratio of Bailey and López de Prado's own example (0.9004), a single trial's DSR
 * equal to its PSR, and the probability of backtest overfitting of pure noise (near 0.5) and of one real edge
 * among noise (near 0).
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { describe, expect, it } from 'vitest';
import { backtestOverfitting, blocksFor } from '../../src/backtest/luck/backtest-overfitting.js';
import {
  deflatedSharpe,
  expectedMaxSharpe,
  probabilisticSharpe,
  returnMoments,
} from '../../src/backtest/luck/deflated-sharpe.js';
import { luckOf, verdictOf } from '../../src/backtest/luck/luck.js';

/** Normal draws (Box-Muller) from a seeded generator: the same numbers on every run. */
function normals(seed: number) {
  const rng = xoroshiro128plus(seed);
  return (n: number, mean = 0, sd = 1): number[] =>
    Array.from({ length: n }, () => {
      const u = 1 - uniformFloat64(rng);
      const v = uniformFloat64(rng);
      return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    });
}

describe('the deflated Sharpe ratio', () => {
  it('gives the moments by their definitions', () => {
    const m = returnMoments([1, 2, 3, 4, 5]);
    expect(m.mean).toBe(3);
    expect(m.sd).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(m.sharpe).toBeCloseTo(3 / Math.sqrt(2.5), 12);
    expect(m.skew).toBeCloseTo(0, 12);
    // E[d^4] / pop var^2 = (16 + 1 + 0 + 1 + 16) / 5 / 2^2
    expect(m.kurtosis).toBeCloseTo(1.7, 12);
    expect(returnMoments([0, 0, 0])).toMatchObject({ sharpe: 0, skew: 0, kurtosis: 3 });
  });

  it('gives the PSR worked by hand: SR 0.1 over 100 normal returns is Φ(0.1 √99 / √1.005) = 0.8395', () => {
    expect(probabilisticSharpe(0.1, 100, 0, 3)).toBeCloseTo(0.83953, 5);
    // Negative skew and fat tails widen the estimate's error: less confidence for the same Sharpe.
    expect(probabilisticSharpe(0.1, 100, -2, 9)).toBeLessThan(0.8395);
  });

  it("gives the paper's example: SR 2.5 a year over 1250 days, 100 trials of variance 0.5, skew -3, kurtosis 10: DSR 0.9004", () => {
    // Bailey and López de Prado (2014), section 4: SR0 = 0.1132 a day, DSR = 0.9004.
    const sr0 = expectedMaxSharpe(100, 0.5 / 250);
    expect(sr0).toBeCloseTo(0.1132, 4);
    expect(probabilisticSharpe(2.5 / Math.sqrt(250), 1250, -3, 10, sr0)).toBeCloseTo(0.9004, 4);
  });

  it("equals a single trial's probabilistic Sharpe ratio (nothing to deflate with one trial)", () => {
    const r = normals(7)(500, 0.001, 0.01);
    const m = returnMoments(r);
    const d = deflatedSharpe(r, [m.sharpe]);
    expect(d.expectedMax).toBe(0);
    expect(d.dsr).toBe(probabilisticSharpe(m.sharpe, 500, m.skew, m.kurtosis, 0));
    expect(d.dsr).toBeGreaterThan(0.5);
  });

  it('raises the bar with the number of trials and their spread', () => {
    expect(expectedMaxSharpe(10, 0.01)).toBeLessThan(expectedMaxSharpe(1000, 0.01));
    expect(expectedMaxSharpe(100, 0.01)).toBeLessThan(expectedMaxSharpe(100, 0.04));
    expect(expectedMaxSharpe(1, 0.04)).toBe(0);
  });
});

describe('the probability of backtest overfitting', () => {
  it('cuts T returns into an even number of blocks, at most 16, at least 4 returns each', () => {
    expect(blocksFor(1000)).toBe(16);
    expect(blocksFor(48)).toBe(12);
    expect(blocksFor(20)).toBe(4);
    expect(blocksFor(15)).toBe(2);
    expect(backtestOverfitting([normals(1)(15), normals(2)(15)])).toBeNull();
    expect(backtestOverfitting([normals(1)(100)])).toBeNull();
  });

  it('is near 0.5 for trials that are pure noise', () => {
    const pbos: number[] = [];
    for (let seed = 1; seed <= 8; seed++) {
      const draw = normals(seed);
      const trials = Array.from({ length: 30 }, () => draw(400, 0, 0.01));
      const o = backtestOverfitting(trials)!;
      expect(o.blocks).toBe(16);
      expect(o.logits).toHaveLength(12_870);
      pbos.push(o.pbo);
    }
    const mean = pbos.reduce((a, b) => a + b, 0) / pbos.length;
    expect(mean).toBeGreaterThan(0.4);
    expect(mean).toBeLessThan(0.6);
  });

  it('is near 0 when one trial has a real edge among noise', () => {
    const draw = normals(11);
    const trials = Array.from({ length: 30 }, () => draw(400, 0, 0.01));
    trials[17] = draw(400, 0.004, 0.01);
    const o = backtestOverfitting(trials)!;
    expect(o.pbo).toBeLessThan(0.02);
    // The edge is chosen in sample and ranks at the top out of sample: λ = ln(30/31 / (1/31)) = ln 30.
    expect(Math.max(...o.logits)).toBeCloseTo(Math.log(30), 10);
  });
});

describe('the verdict', () => {
  it('says luck, skill or neither from DSR and PBO', () => {
    expect(verdictOf(0.41, 0.62)).toBe('more likely luck than skill');
    expect(verdictOf(0.97, 0.7)).toBe('more likely luck than skill');
    expect(verdictOf(0.97, 0.1)).toBe('likely skill');
    expect(verdictOf(0.8, 0.3)).toBe('some evidence of skill, not conclusive');
    expect(verdictOf(null, null)).toBe('too few returns to tell skill from luck');
  });

  it('reports the best of noise as luck and a real edge as skill, with the bar each had to clear', () => {
    const draw = normals(5);
    const noise = Array.from({ length: 50 }, () => ({ returns: draw(400, 0, 0.01) }));
    const best = noise.reduce(
      (b, t, i) => (returnMoments(t.returns).sharpe > returnMoments(noise[b]!.returns).sharpe ? i : b),
      0,
    );
    const luck = luckOf(noise, best, 3_600_000)!;
    expect(luck.trials).toBe(50);
    expect(luck.verdict).toMatch(
      /^the best of 50 trials: deflated Sharpe 0\.\d\d, PBO 0\.\d\d: more likely luck than skill$/,
    );
    expect(Number(luck.dsr)).toBeLessThan(0.5);
    // The best of noise looks good alone, and still falls short of what the best of 50 skill-less trials reaches.
    expect(Number(luck.bestSharpe)).toBeGreaterThan(0);
    expect(Number(luck.expectedMaxSharpe)).toBeGreaterThan(Number(luck.bestSharpe) * 0.8);
    expect(luck.logits.reduce((n, b) => n + b.count, 0)).toBe(12_870);

    const edged = [...noise.slice(0, 49), { returns: draw(400, 0.004, 0.01) }];
    const skill = luckOf(edged, 49, 3_600_000)!;
    expect(skill.verdict).toMatch(/: likely skill$/);
    expect(Number(skill.dsr)).toBeGreaterThan(0.95);
    expect(Number(skill.pbo)).toBeLessThan(0.05);
    expect(luckOf(edged, undefined, 3_600_000)).toBeNull();
  });
});
