/** What candles a strategy needs kept, from its definition and params. */
import type { CandleNeeds } from '../market/candles.js';
import type { StrategyDefinition } from './api.js';
import type { IndicatorSpecs } from './indicators.js';

/**
 * The closed candles to keep per timeframe: what the definition declares and, for each declared indicator,
 * at least the candles the library needs before it is ready (its warm-up).
 */
export function candleNeeds(definition: StrategyDefinition, params: unknown): CandleNeeds {
  const declared = typeof definition.candles === 'function' ? definition.candles(params) : (definition.candles ?? {});
  const needs: CandleNeeds = { ...declared };
  const specs: IndicatorSpecs = definition.indicators?.(params) ?? {};
  for (const ind of Object.values(specs)) needs[ind.timeframe] = Math.max(needs[ind.timeframe] ?? 0, ind.warmUp);
  return needs;
}
