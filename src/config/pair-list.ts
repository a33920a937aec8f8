/**
 * A strategy file's pair list (issue 41, after Freqtrade's pairlists): the pairs it trades, chosen from the market
 * watch at each refresh rather than written down: a quote asset, a minimum 24-hour quote volume, price bounds, the
 * narrowest spread the pair's tick allows, an exclude list, ranked by 24-hour quote volume (or change, or
 * volatility) and cut to the top N. `resolvePairList` is the one rule: the engine applies it on the market it
 * holds at each refresh (live, paper and backtest alike), `bot check-config` on the market watch or a recording.
 */
import { z } from 'zod';
import { CronSchedule } from '../clocks/cron-schedule.js';

const SymbolName = z.string().regex(/^[A-Z0-9]{2,20}$/, 'an exchange symbol such as "BTCUSDT"');

export const PairListSchema = z.strictObject({
  /** The quote asset every pair of the list trades against ("USDT"). */
  quote: z.string().regex(/^[A-Z0-9]{2,10}$/, 'an asset code such as "USDT"'),
  /** Leave out pairs that traded less than this in the quote asset over 24 hours. */
  minQuoteVolume: z.number().nonnegative().optional(),
  /** Keep the first N pairs of the ranking (all that pass the filters when absent). */
  top: z.number().int().positive().max(1000).optional(),
  /**
   * What ranks the pairs, highest first: 24-hour quote volume, 24-hour change (absolute, of the prices the bot
   * watched: unknown until it has watched a pair for a day), or volatility ((high - low) / last over 24 hours).
   */
  sortBy: z.enum(['quoteVolume', 'change', 'volatility']).default('quoteVolume'),
  /** Leave out pairs whose last price is below or above these. */
  minPrice: z.number().positive().optional(),
  maxPrice: z.number().positive().optional(),
  /**
   * Leave out pairs whose price tick is more than this percentage of the last price: the narrowest spread the
   * pair's PRICE_FILTER allows (the market watch carries no bid or ask: spec/exchange-notes.md).
   */
  maxSpreadPct: z.number().positive().max(100).optional(),
  /** Leave out pairs whose 24-hour range ((high - low) / last) is outside these percentages. */
  minVolatilityPct: z.number().nonnegative().optional(),
  maxVolatilityPct: z.number().positive().optional(),
  /** Never these pairs. */
  exclude: z.array(SymbolName).max(1000).default([]),
  /** cron expression (UTC, seconds allowed) of when the list is worked out again; default every 30 minutes. */
  refresh: z.string().min(1).default('0 */30 * * * *'),
});
export type PairList = z.infer<typeof PairListSchema>;

/** A pair's figures as the market watch (and the pair's rules) give them; undefined: not known. */
export interface PairFigures {
  symbol: string;
  quoteAsset?: string | undefined;
  last?: number | undefined;
  high?: number | undefined;
  low?: number | undefined;
  quoteVolume?: number | undefined;
  tickSize?: number | undefined;
  /** The 24-hour change in percent (the engine's own watch of the price). */
  changePct?: number | undefined;
}

export interface PairListResult {
  /** The pairs chosen, best ranked first. */
  listed: { symbol: string; rank: number; value: number }[];
  /** Every other pair with the list's quote asset, and why it was left out. */
  left: { symbol: string; reason: string }[];
  /** Pairs of another quote asset (not listed one by one). */
  otherQuote: number;
}

/** Whether `symbol` can ever be on the list: its name ends in the quote asset and it is not excluded. */
export function isPairListCandidate(list: PairList, symbol: string): boolean {
  return symbol.endsWith(list.quote) && symbol.length > list.quote.length && !list.exclude.includes(symbol);
}

const pct = (x: number): string => `${Number(x.toPrecision(3))}%`;
const num = (x: number): string => String(Number(x.toPrecision(6)));

/** The percentage (high - low) / last, or undefined without the figures. */
function volatilityPct(p: PairFigures): number | undefined {
  if (p.high === undefined || p.low === undefined || p.last === undefined || !(p.last > 0)) return undefined;
  return ((p.high - p.low) / p.last) * 100;
}

/** Why `p` fails a filter of `list`, or undefined when it passes them all. */
function leftOutBecause(list: PairList, p: PairFigures): string | undefined {
  if (list.exclude.includes(p.symbol)) return 'excluded';
  if (p.last === undefined || !(p.last > 0)) return 'no ticker on the market watch';
  if (list.minQuoteVolume !== undefined) {
    if (p.quoteVolume === undefined) return `no 24-hour quote volume (minQuoteVolume ${num(list.minQuoteVolume)})`;
    if (p.quoteVolume < list.minQuoteVolume)
      return `24-hour quote volume ${num(p.quoteVolume)} ${list.quote} below minQuoteVolume ${num(list.minQuoteVolume)}`;
  }
  if (list.minPrice !== undefined && p.last < list.minPrice)
    return `price ${num(p.last)} below minPrice ${num(list.minPrice)}`;
  if (list.maxPrice !== undefined && p.last > list.maxPrice)
    return `price ${num(p.last)} above maxPrice ${num(list.maxPrice)}`;
  if (list.maxSpreadPct !== undefined && p.tickSize !== undefined) {
    const spread = (p.tickSize / p.last) * 100;
    if (spread > list.maxSpreadPct)
      return `tick ${num(p.tickSize)} is ${pct(spread)} of the price, above maxSpreadPct ${pct(list.maxSpreadPct)}`;
  }
  if (list.minVolatilityPct !== undefined || list.maxVolatilityPct !== undefined) {
    const v = volatilityPct(p);
    if (v === undefined) return 'no 24-hour high and low (volatility unknown)';
    if (list.minVolatilityPct !== undefined && v < list.minVolatilityPct)
      return `24-hour range ${pct(v)} below minVolatilityPct ${pct(list.minVolatilityPct)}`;
    if (list.maxVolatilityPct !== undefined && v > list.maxVolatilityPct)
      return `24-hour range ${pct(v)} above maxVolatilityPct ${pct(list.maxVolatilityPct)}`;
  }
  return undefined;
}

/** The figure a pair is ranked by (higher first), or undefined when it is not known. */
function rankValue(list: PairList, p: PairFigures): number | undefined {
  switch (list.sortBy) {
    case 'quoteVolume':
      return p.quoteVolume;
    case 'volatility':
      return volatilityPct(p);
    case 'change':
      return p.changePct === undefined ? undefined : Math.abs(p.changePct);
  }
}

const RANK_NAME = { quoteVolume: '24-hour quote volume', change: '24-hour change', volatility: '24-hour range' };

/**
 * The pair list on these figures: the pairs of the quote asset that pass every filter, ranked by `sortBy` (ties by
 * symbol, so the same market always gives the same list), cut to `top`. Each pair left out says why.
 */
export function resolvePairList(list: PairList, pairs: readonly PairFigures[]): PairListResult {
  const left: PairListResult['left'] = [];
  const ranked: { symbol: string; value: number }[] = [];
  let otherQuote = 0;
  for (const p of pairs) {
    const quote = p.quoteAsset ?? (p.symbol.endsWith(list.quote) ? list.quote : undefined);
    if (quote !== list.quote) {
      otherQuote++;
      continue;
    }
    const why = leftOutBecause(list, p);
    if (why !== undefined) {
      left.push({ symbol: p.symbol, reason: why });
      continue;
    }
    const value = rankValue(list, p);
    if (value === undefined) left.push({ symbol: p.symbol, reason: `${RANK_NAME[list.sortBy]} not known yet` });
    else ranked.push({ symbol: p.symbol, value });
  }
  ranked.sort((a, b) => b.value - a.value || (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  const listed: PairListResult['listed'] = [];
  ranked.forEach((r, i) => {
    if (list.top === undefined || i < list.top) listed.push({ symbol: r.symbol, rank: i + 1, value: r.value });
    else
      left.push({ symbol: r.symbol, reason: `ranked ${i + 1} by ${RANK_NAME[list.sortBy]}, outside top ${list.top}` });
  });
  left.sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0));
  return { listed, left, otherQuote };
}

/** When the list is next worked out after `time` (its `refresh` schedule). */
export function pairListRefresh(list: PairList): (time: number) => number {
  const cron = new CronSchedule(list.refresh);
  return (time) => cron.next(time);
}

/** A list worked out anew with a change: the file's group, its pairs now (best first), those added and left. */
export interface PairListChange {
  group: string;
  listed: readonly string[];
  added: readonly string[];
  removed: readonly string[];
  /** Pairs the exchange listed after the start that the list does not hold now, and why (absent: none). */
  newLeftOut?: Readonly<Record<string, string>>;
}

/** The change in words, as the log and the notifications say it. */
export function pairListChangeText(c: PairListChange): string {
  const newLeft = Object.entries(c.newLeftOut ?? {});
  return (
    `pairlist of ${c.group}: ${c.listed.length} pairs (${c.listed.join(', ') || 'none'})` +
    (c.added.length > 0 ? `; added ${c.added.join(', ')}` : '') +
    (c.removed.length > 0 ? `; left ${c.removed.join(', ')} (no new entries there)` : '') +
    (newLeft.length > 0
      ? `; newly listed, left out: ${newLeft.map(([symbol, why]) => `${symbol} (${why})`).join(', ')}`
      : '')
  );
}
