/**
 * Open orders on the account that this bot did not place: another bot's, a person's, or those of a journal
 * that was lost. Every orders poll of a traded symbol journals the ones no row knows as external (no strategy
 * owns them, their fills are recorded, a row the venue no longer lists is closed), at most
 * MAX_EXTERNAL_ROWS live at once: the rest are counted, never held, so memory stays bounded whatever the
 * account holds. `report` tells the count, never one line per order: one warning and one notified event when
 * they are first seen (and at every start), again only when more appear (at most once a minute), and one
 * line when none are left.
 */
import { fromWire, plain } from '../market/decimal.js';
import type { OrderRecord } from '../ports/venue-records.js';
import { isUnresolved, newOrderRow, type OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { parseTime } from './history-pages.js';
import { sameOrder } from './outcome-matching.js';
import type { VenueAnswers } from './venue-answers.js';

/** External rows the journal holds live at once; open orders of another owner beyond are only counted. */
export const MAX_EXTERNAL_ROWS = 1_000;

/** While orders of another owner are open, a growing count is told again at most this often. */
export const EXTERNAL_REPORT_MS = 60_000;

/** What the latest `external-orders` event says (store/events.ts), read back by `status`. */
export interface ExternalOrdersReport {
  /** Open orders on the account this bot did not place, on the symbols it trades. */
  total: number;
  /** The same, by symbol. */
  symbols: Record<string, number>;
  /** How many of them the journal tracks as external rows. */
  journaled: number;
  /** Beyond MAX_EXTERNAL_ROWS: counted, not journaled (their fills and their end are not followed). */
  untracked: number;
}

interface SymbolCount {
  journaled: number;
  untracked: number;
}

function wirePrice(n: number | undefined): string | undefined {
  return n === undefined || n === 0 ? undefined : plain(fromWire(n));
}

/** A row for an open order of another owner; what it executed is judged as for any order (`outcome`). */
function externalRow(symbol: string, record: OrderRecord, now: number): OrderRow {
  return newOrderRow({
    localId: `ext-${symbol}-${record.displayingId}`,
    instance: undefined,
    symbol,
    side: record.side,
    type: record.type,
    price: wirePrice(record.price),
    stopPrice: wirePrice(record.stopPrice),
    limitPrice: record.type === 'OCO' ? wirePrice(record.limitPrice) : undefined,
    quantity: plain(fromWire(record.quantity)),
    status: 'OPEN',
    exchangeId: record.displayingId,
    matchMethod: 'adopted',
    external: true,
    createdAt: parseTime(record.createdAt) ?? now,
    updatedAt: now,
  });
}

export class ExternalOrders {
  private readonly bySymbol = new Map<string, SymbolCount>();
  /** The count last told while orders of another owner are open (the incident), and when. */
  private told: { peak: number; at: number } | undefined;

  constructor(
    private readonly p: EngineParts,
    private readonly answers: VenueAnswers,
  ) {}

  /**
   * One traded symbol's open orders, just read (after the reconciler had its look at them): those no row knows
   * are journaled as external in one transaction, up to the bound, and all of them are counted. One that
   * could be an order of ours whose outcome is unknown is left to the reconciler, neither journaled nor counted.
   */
  observe(symbol: string, open: readonly OrderRecord[]): void {
    const { journal, clock } = this.p;
    let journaled = 0;
    let untracked = 0;
    let room = MAX_EXTERNAL_ROWS - journal.externalLive();
    let waiting: OrderRow[] | undefined;
    const rows: OrderRow[] = [];
    const now = clock.now();
    for (const record of open) {
      const row = journal.liveByExchangeId(record.displayingId);
      if (row !== undefined) {
        if (row.external) journaled++;
        continue;
      }
      waiting ??= journal.forSymbol(symbol).filter(isUnresolved);
      if (waiting.some((w) => sameOrder(w, record))) continue;
      if (room <= 0) {
        // Not looked up in the database either: a poll must not cost one query per order of another owner.
        untracked++;
        continue;
      }
      // A final row of ours (or an external one closed earlier) that the venue lists again: not another owner's.
      if (journal.isKnownExchangeId(record.displayingId)) continue;
      const adopted = externalRow(symbol, record, now);
      rows.push({ ...adopted, ...this.answers.outcome(adopted, record, true) });
      room--;
    }
    if (rows.length > 0) journal.insertMany(rows);
    this.bySymbol.set(symbol, { journaled: journaled + rows.length, untracked });
  }

  /**
   * Tells what the last polls counted, across the traded symbols: at start whenever there are any (and that
   * none are left when the last report said some were); while running when they first appear, when more
   * appear (at most once every EXTERNAL_REPORT_MS) and when none are left.
   */
  report(atStart: boolean): void {
    const { logger, store, clock } = this.p;
    const now = clock.now();
    const counts = [...this.bySymbol].filter(([, c]) => c.journaled + c.untracked > 0);
    const journaled = counts.reduce((n, [, c]) => n + c.journaled, 0);
    const untracked = counts.reduce((n, [, c]) => n + c.untracked, 0);
    const total = journaled + untracked;
    if (total === 0) {
      const before = this.told?.peak ?? (atStart ? lastReported(store)?.total : undefined) ?? 0;
      this.told = undefined;
      if (before === 0) return;
      logger.info('no open orders of another owner left on the account (they were filled or cancelled)');
      const data: ExternalOrdersReport = { total: 0, symbols: {}, journaled: 0, untracked: 0 };
      store.events.record(now, undefined, 'external-orders', { ...data });
      return;
    }
    const told = this.told;
    if (!atStart && told !== undefined && (total <= told.peak || now - told.at < EXTERNAL_REPORT_MS)) return;
    this.told = { peak: Math.max(total, told?.peak ?? 0), at: now };
    const symbols = Object.fromEntries(counts.map(([symbol, c]) => [symbol, c.journaled + c.untracked]));
    const listed = counts.map(([symbol, c]) => `${symbol} ${c.journaled + c.untracked}`).join(', ');
    const beyond =
      untracked > 0
        ? `; ${untracked} beyond the first ${MAX_EXTERNAL_ROWS} are counted, not journaled (not followed)`
        : '';
    logger.warn(
      { total, symbols, journaled, untracked },
      `another bot may be trading this account: ${total} open order(s) on it were not placed by this bot ` +
        `(${listed}); ${journaled} journaled as external orders (no strategy owns them)${beyond}`,
    );
    const data: ExternalOrdersReport = { total, symbols, journaled, untracked };
    store.events.record(now, undefined, 'external-orders', { ...data });
  }
}

/** The last count told (by any run on this journal), for a start that finds none left. */
function lastReported(store: EngineParts['store']): ExternalOrdersReport | undefined {
  const event = store.events.list({ kinds: ['external-orders'], limit: 1 })[0];
  return event === undefined ? undefined : (event.data as unknown as ExternalOrdersReport);
}
