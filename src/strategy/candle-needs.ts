/** What candles a strategy needs kept, from its definition and params. */
import { isTimeframe, TIMEFRAME_MS, TIMEFRAMES, type CandleNeeds, type Timeframe } from '../market/candles.js';
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
  for (const ind of Object.values(specs))
    if (ind.symbol === undefined) needs[ind.timeframe] = Math.max(needs[ind.timeframe] ?? 0, ind.warmUp);
  return needs;
}

/** Closed candles kept of an informative pair when its declaration gives no count. */
export const DEFAULT_INFORMATIVE_CANDLES = 100;

/**
 * The closed candles to keep of each informative pair (the definition's `informative`, each at least its count,
 * default DEFAULT_INFORMATIVE_CANDLES), and for each indicator declared on one, at least its warm-up.
 */
export function informativeNeeds(definition: StrategyDefinition, params: unknown): Map<string, CandleNeeds> {
  const declared =
    typeof definition.informative === 'function' ? definition.informative(params) : (definition.informative ?? []);
  const out = new Map<string, CandleNeeds>();
  const need = (symbol: string, tf: Timeframe, n: number) => {
    const needs = out.get(symbol) ?? {};
    needs[tf] = Math.max(needs[tf] ?? 0, n);
    out.set(symbol, needs);
  };
  for (const d of declared) need(d.symbol, d.timeframe, d.count ?? DEFAULT_INFORMATIVE_CANDLES);
  const specs: IndicatorSpecs = definition.indicators?.(params) ?? {};
  for (const ind of Object.values(specs)) if (ind.symbol !== undefined) need(ind.symbol, ind.timeframe, ind.warmUp);
  return out;
}

/** The pairs `instances` trade, then the informative pairs they read (each once): the symbols a run needs data of. */
export function watchedSymbols(
  instances: readonly { config: { symbol: string }; definition: StrategyDefinition; params: unknown }[],
): string[] {
  const out = new Set(instances.map((i) => i.config.symbol));
  for (const i of instances) for (const symbol of informativeNeeds(i.definition, i.params).keys()) out.add(symbol);
  return [...out];
}

/**
 * How much data before the start the instances' candles need: their longest lookback (count candles of a
 * timeframe, and the forming one), plus a day for the candles' volume (candles.ts). A backtest loads that much
 * before --from; paper on recordings keeps that much before where its replay starts.
 */
export function warmUpMs(instances: readonly { definition: StrategyDefinition; params: unknown }[]): number {
  let longest = 0;
  for (const i of instances) {
    for (const needs of [candleNeeds(i.definition, i.params), ...informativeNeeds(i.definition, i.params).values()])
      for (const [tf, count] of Object.entries(needs) as [Timeframe, number][])
        longest = Math.max(longest, (count + 1) * TIMEFRAME_MS[tf]);
  }
  return longest === 0 ? 0 : longest + TIMEFRAME_MS['1d'];
}

/** Most closed candles one timeframe may keep (a day of minutes is 1,440; a year of hours 8,760). */
export const MAX_CANDLES = 100_000;

/**
 * What is wrong with a definition's `candles` and `indicators` for these params (each a line naming the
 * field); empty when fine. A function that throws (an indicator period the library refuses) is a problem too.
 */
export function candleNeedsProblems(definition: StrategyDefinition, params: unknown): string[] {
  const problems: string[] = [];
  let declared: unknown;
  try {
    declared = typeof definition.candles === 'function' ? definition.candles(params) : (definition.candles ?? {});
  } catch (err) {
    return [`candles: threw ${err instanceof Error ? err.message : String(err)}`];
  }
  if (declared === null || typeof declared !== 'object' || Array.isArray(declared)) {
    problems.push(`candles: expected an object of timeframe -> count, found ${JSON.stringify(declared)}`);
  } else {
    for (const [tf, count] of Object.entries(declared as Record<string, unknown>)) {
      if (!isTimeframe(tf)) problems.push(`candles: expected a timeframe of ${TIMEFRAMES.join(', ')}, found '${tf}'`);
      else if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_CANDLES)
        problems.push(
          `candles.${tf}: expected a whole number from 1 to ${MAX_CANDLES}, found ${JSON.stringify(count)}`,
        );
    }
  }
  let pairs: readonly unknown[] = [];
  try {
    const declared: unknown =
      typeof definition.informative === 'function' ? definition.informative(params) : (definition.informative ?? []);
    if (!Array.isArray(declared)) problems.push('informative: expected a list of { symbol, timeframe, count }');
    else pairs = declared;
  } catch (err) {
    problems.push(`informative: threw ${err instanceof Error ? err.message : String(err)}`);
  }
  pairs.forEach((p, i) => {
    const { symbol, timeframe, count } = (p ?? {}) as { symbol?: unknown; timeframe?: unknown; count?: unknown };
    if (typeof symbol !== 'string' || !/^[A-Z0-9]{2,20}$/.test(symbol))
      problems.push(
        `informative[${i}].symbol: expected an exchange symbol such as "BTCUSDT", found ${JSON.stringify(symbol)}`,
      );
    if (typeof timeframe !== 'string' || !isTimeframe(timeframe))
      problems.push(
        `informative[${i}].timeframe: expected a timeframe of ${TIMEFRAMES.join(', ')}, found ${JSON.stringify(timeframe)}`,
      );
    if (
      count !== undefined &&
      (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_CANDLES)
    )
      problems.push(
        `informative[${i}].count: expected a whole number from 1 to ${MAX_CANDLES}, found ${JSON.stringify(count)}`,
      );
  });
  const informativeSymbols = new Set(pairs.map((p) => (p as { symbol?: unknown } | null)?.symbol));
  try {
    const specs: unknown = definition.indicators?.(params) ?? {};
    if (specs === null || typeof specs !== 'object') problems.push('indicators: expected an object of indicators');
    else {
      for (const [key, spec] of Object.entries(specs as Record<string, unknown>)) {
        const tf = (spec as { timeframe?: unknown } | null)?.timeframe;
        if (typeof tf !== 'string' || !isTimeframe(tf) || typeof (spec as { create?: unknown }).create !== 'function')
          problems.push(`indicators.${key}: expected an indicator of the strategy API (ema('5m', 12)…)`);
        else {
          const symbol = (spec as { symbol?: unknown }).symbol;
          if (symbol !== undefined && !informativeSymbols.has(symbol))
            problems.push(
              `indicators.${key}: reads ${JSON.stringify(symbol)}, expected a pair the definition's informative lists`,
            );
        }
      }
    }
  } catch (err) {
    problems.push(`indicators: threw ${err instanceof Error ? err.message : String(err)}`);
  }
  return problems;
}

/**
 * Candles the daemon keeps per symbol for the page's price chart, beside the strategies' own (never read by a
 * strategy): a day of minutes, a week of five minutes, a month of hours.
 */
export const CHART_CANDLES: Readonly<CandleNeeds> = { '1m': 1440, '5m': 2016, '1h': 720 };

/** The longest stretch a chart draws an indicator over (the hourly chart's month), in at most this many candles. */
const CHART_SPAN_MS = 30 * TIMEFRAME_MS['1d'];
const CHART_SPAN_CANDLES = 2016;

/**
 * The chart's candles per symbol: CHART_CANDLES, and for each indicator an instance on the symbol declares, its
 * warm-up and then enough of its timeframe to draw it across the chart (the chart's own count of a timeframe it
 * keeps; of another, a month of it, at most CHART_SPAN_CANDLES).
 */
export function chartCandleNeeds(
  instances: readonly { symbol: string; definition: StrategyDefinition; params: unknown }[],
): Map<string, CandleNeeds> {
  const out = new Map<string, CandleNeeds>();
  for (const i of instances) {
    const needs: CandleNeeds = out.get(i.symbol) ?? { ...CHART_CANDLES };
    const specs: IndicatorSpecs = i.definition.indicators?.(i.params) ?? {};
    for (const ind of Object.values(specs)) {
      const tf = ind.timeframe;
      const span = CHART_CANDLES[tf] ?? Math.min(CHART_SPAN_CANDLES, Math.ceil(CHART_SPAN_MS / TIMEFRAME_MS[tf]));
      needs[tf] = Math.max(needs[tf] ?? 0, Math.min(MAX_CANDLES, span + ind.warmUp));
    }
    out.set(i.symbol, needs);
  }
  return out;
}
