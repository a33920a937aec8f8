/**
 * The order-history and trade-history filters (spot-api.md endpoints 2 and 3), with the defaults the spec
 * leaves open: page 1, pageSize 20 (at most 100: larger sizes are clamped), newest first (highest id first).
 * timeFrom/timeTo are ISO 8601 and inclusive, compared with the record's creation time. hideCanceled drops
 * CANCELED orders, including partially filled ones; trades are never canceled, so it does not touch them.
 */
import type { Side } from '../market/pair-rules.js';
import type { LedgerPage } from '../ports/ledger-records.js';
import type { HistoryQuery } from '../ports/venue.js';
import { SimRejectError } from './error-codes.js';

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export interface HistoryItem {
  symbol: string;
  side: Side;
  time: number;
  canceled: boolean;
}

function time(field: 'timeFrom' | 'timeTo', text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const ms = Date.parse(text);
  if (!Number.isFinite(ms))
    throw new SimRejectError('INVALID_QUERY', `${field} must be an ISO 8601 time, got ${JSON.stringify(text)}`, {
      field,
    });
  return ms;
}

function positiveInt(field: 'page' | 'pageSize', value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new SimRejectError('INVALID_QUERY', `${field} must be a positive integer, got ${value}`, { field });
  return value;
}

/** The page `query` asks for, or the error naming the field it gives wrongly. */
export function historyPage(query: HistoryQuery = {}): LedgerPage {
  const from = time('timeFrom', query.timeFrom, -Infinity);
  const to = time('timeTo', query.timeTo, Infinity);
  const page = positiveInt('page', query.page, 1);
  const size = Math.min(positiveInt('pageSize', query.pageSize, DEFAULT_PAGE_SIZE), MAX_PAGE_SIZE);
  const { symbol, side } = query;
  return { symbol, side, from, to, hideCanceled: query.hideCanceled === true, skip: (page - 1) * size, size };
}

/**
 * The `page` of `items` (oldest first, as held in memory), newest first. `inTimeOrder`: the items' times never
 * decrease, so the read stops at the first item older than the page's start (a poll's read since a recent time
 * costs what it returns, not every item the account ever had).
 */
export function queryHistory<T>(
  items: readonly T[],
  view: (item: T) => HistoryItem,
  page: LedgerPage,
  inTimeOrder = false,
): T[] {
  const out: T[] = [];
  let matched = 0;
  for (let i = items.length - 1; i >= 0 && out.length < page.size; i--) {
    const item = items[i] as T;
    const v = view(item);
    if (page.symbol !== undefined && v.symbol !== page.symbol) continue;
    if (page.side !== undefined && v.side !== page.side) continue;
    if (page.hideCanceled && v.canceled) continue;
    if (v.time < page.from) {
      if (inTimeOrder) break;
      continue;
    }
    if (v.time > page.to) continue;
    if (matched++ >= page.skip) out.push(item);
  }
  return out;
}
