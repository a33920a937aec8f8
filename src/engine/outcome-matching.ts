/**
 * Finding the exchange order behind a journal row whose create has an unknown outcome. The API has no client
 * order id, so a row matches an exchange order with the same symbol, side, type, prices and quantity created
 * within a window around the time the request was sent. Each exchange order is matched at most once, and
 * never one the journal already holds.
 */
import { fromWire } from '../market/decimal.js';
import type { OrderRecord } from '../ports/venue-records.js';
import type { OrderRow } from '../store/order-journal.js';

export interface MatchWindow {
  /** How long after sending an order may appear on the venue. */
  windowMs: number;
  /** How far the venue's clock may be from ours. */
  skewMs: number;
}

export interface Candidate {
  record: OrderRecord;
  source: 'open-orders' | 'history';
}

function same(wire: number | undefined, text: string | undefined): boolean {
  if (text === undefined) return true;
  return wire !== undefined && fromWire(wire).eq(text);
}

function recordTime(record: OrderRecord): number | undefined {
  if (!record.createdAt) return undefined;
  const t = Date.parse(record.createdAt);
  return Number.isFinite(t) ? t : undefined;
}

/** Whether the exchange order is the one the row asked for (time aside). */
export function sameOrder(row: OrderRow, record: OrderRecord): boolean {
  if (record.symbol !== row.symbol || record.side !== row.side || record.type !== row.type) return false;
  if (row.quoteAmount !== undefined) {
    // By quote amount the venue decides the quantity: the quote amount identifies the request.
    return record.useQuoteQty !== false && same(record.quoteQty, row.quoteAmount);
  }
  if (!same(record.quantity, row.quantity)) return false;
  if (row.type === 'MARKET') return true;
  return (
    same(record.price, row.price) && same(record.stopPrice, row.stopPrice) && same(record.limitPrice, row.limitPrice)
  );
}

function inWindow(sent: number, t: number | undefined, w: MatchWindow): boolean {
  // No creation time on the record: keep it a candidate. Missing an order that exists is the dangerous error
  // (the strategy would place it again); matching an identical order is the safe one.
  if (t === undefined) return true;
  return t >= sent - w.skewMs && t <= sent + w.windowMs + w.skewMs;
}

export interface MatchResult {
  row: OrderRow;
  candidate: Candidate;
}

/**
 * Pairs unresolved rows (oldest first) with candidates: for each row, the unclaimed matching candidate
 * created closest to its sending time (open orders before history on a tie, then the lowest id).
 * `toVenueTime` puts a time of ours on the venue's clock, which the candidates' creation times are on.
 */
export function matchUnresolved(
  rows: readonly OrderRow[],
  candidates: readonly Candidate[],
  isKnown: (exchangeId: string) => boolean,
  window: MatchWindow,
  toVenueTime: (t: number) => number = (t) => t,
): MatchResult[] {
  const claimed = new Set<string>();
  const out: MatchResult[] = [];
  const ordered = [...rows].sort(
    (a, b) => (a.sentAt ?? a.createdAt) - (b.sentAt ?? b.createdAt) || (a.seq ?? 0) - (b.seq ?? 0),
  );
  for (const row of ordered) {
    const sent = toVenueTime(row.sentAt ?? row.createdAt);
    let best: { c: Candidate; distance: number } | undefined;
    for (const c of candidates) {
      const id = c.record.displayingId;
      if (claimed.has(id) || isKnown(id) || !sameOrder(row, c.record)) continue;
      const t = recordTime(c.record);
      if (!inWindow(sent, t, window)) continue;
      const distance = t === undefined ? Number.MAX_SAFE_INTEGER : Math.abs(t - sent);
      if (
        !best ||
        distance < best.distance ||
        (distance === best.distance && c.source === 'open-orders' && best.c.source === 'history') ||
        (distance === best.distance && c.source === best.c.source && compareIds(id, best.c.record.displayingId) < 0)
      )
        best = { c, distance };
    }
    if (best) {
      claimed.add(best.c.record.displayingId);
      out.push({ row, candidate: best.c });
    }
  }
  return out;
}

function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}
