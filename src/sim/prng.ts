/**
 * mulberry32: a tiny seeded 32-bit generator, the random-walk feed's (`bot sim --random-walk --seed S`): the
 * same seed walks the same prices; Math.random is never used. The matching engine draws nothing at random, so a
 * backtest or a paper replay on recordings has no seed: the same inputs give the same fills (design.md 7).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
