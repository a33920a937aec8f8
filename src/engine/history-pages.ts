/**
 * Reading the venue's paged histories (orders, trades): newest first, PAGE_SIZE a page, up to MAX_PAGES, and
 * the time and grouping helpers both the order sync and the fill recorder use on their records.
 */
import type { Logger } from '../ops/logger.js';
import type { HistoryQuery } from '../ports/venue.js';
import type { TradingGuard } from './trading-guard.js';

const PAGE_SIZE = 100;
const MAX_PAGES = 20;

export function iso(ms: number): string {
  return new Date(Math.max(0, ms)).toISOString();
}

export function parseTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : undefined;
}

/** The incident key of the reads made for every pair at once. */
export const ALL_PAIRS = '*';

/** Polls that read their own history after a shared read failed, at most (the wait doubles up to this). */
const SHARED_RETRY_MAX_POLLS = 16;

/**
 * Whether a poll reads a history once for the account or each pair its own. A shared read that failed is not
 * tried again for the next poll, then two, four... up to SHARED_RETRY_MAX_POLLS while it keeps failing: in
 * between each pair reads its own, so what fails the wide read (a record of one pair the reader refuses fails
 * its whole page, a wide read that times out, a venue that limits symbol-less history) stops at most the pair
 * it belongs to. The failing poll itself does not fall back: its read was retried by the adapter already, and
 * a burst of a read a pair against a venue that just failed is what the shared read is for avoiding.
 */
export class SharedReadTurns {
  private failures = 0;
  private ownPolls = 0;

  /** Whether `needing` symbols read once for the account this poll (a poll of several that does not counts). */
  shared(needing: number): boolean {
    if (needing < 2) return false;
    if (this.ownPolls === 0) return true;
    this.ownPolls--;
    return false;
  }

  failed(): void {
    this.failures++;
    this.ownPolls = Math.min(SHARED_RETRY_MAX_POLLS, 2 ** (this.failures - 1));
  }

  succeeded(): void {
    this.failures = 0;
  }
}

/** Records grouped by their symbol. */
export function bySymbol<T extends { symbol: string }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.symbol);
    if (list) list.push(item);
    else out.set(item.symbol, [item]);
  }
  return out;
}

/** The most items one history read returns. */
export const HISTORY_READ_LIMIT = PAGE_SIZE * MAX_PAGES;

/** How far one read pages: at most `maxPages` (MAX_PAGES), or until `enough` says what it read will do. */
export interface PageBound<T> {
  maxPages?: number;
  enough?: (read: ReadonlyMap<string, T>) => boolean;
}

/**
 * Pages through a history endpoint (newest first, PAGE_SIZE a page); `complete` when the last page was short.
 * A read that stopped at its bound (or because it had `enough`) is not complete.
 */
export async function readPages<T>(
  guard: TradingGuard,
  logger: Logger,
  what: string,
  fetch: (q: HistoryQuery) => Promise<T[]>,
  query: HistoryQuery,
  id: (item: T) => string,
  bound: PageBound<T> = {},
): Promise<{ items: T[]; complete: boolean }> {
  const byId = new Map<string, T>();
  const maxPages = Math.min(MAX_PAGES, bound.maxPages ?? MAX_PAGES);
  for (let page = 1; page <= maxPages; page++) {
    const items = await guard.call(what, () => fetch({ ...query, page, pageSize: PAGE_SIZE }));
    // Newer items arriving between pages push older ones onto the next page: duplicates, never gaps.
    const before = byId.size;
    for (const item of items) byId.set(id(item), item);
    if (items.length < PAGE_SIZE) return { items: [...byId.values()], complete: true };
    if (byId.size === before) break; // the venue ignores `page`: what lies beyond cannot be read
    if (bound.enough?.(byId)) return { items: [...byId.values()], complete: false };
  }
  // The caller says what an incomplete read means (per incident, not per poll): here it is only traced.
  logger.debug({ query }, `${what}: could not read every page, read incomplete`);
  return { items: [...byId.values()], complete: false };
}
