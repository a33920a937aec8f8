/**
 * The bench's baseline: a strategy that decides nothing (no candles, no indicators, no orders), so what a backtest
 * costs with it is the engine's own cost per tick: bench/strategies.ts prints the others against it.
 */
import { defineStrategy, z } from '../../src/strategy/api.js';

export default defineStrategy({
  name: 'idle',
  description: 'decides nothing: the cost of a backtest without a strategy',
  params: z.object({}),
  onTick() {},
});
