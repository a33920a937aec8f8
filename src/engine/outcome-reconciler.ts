/**
 * Reconciling the journal with the venue: rows whose create outcome is unknown are matched to the venue's
 * orders (outcome-matching.ts) or, once the window has passed with history readable, declared NOT_PLACED;
 * at start, open orders nobody journaled are adopted as external. Never by sending again (invariant 3).
 */
import { fromWire, plain } from '../market/decimal.js';
import type { OrderRecord } from '../ports/venue-records.js';
import { isUnresolved, type MatchMethod, newOrderRow, type OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { executedOf } from './fill-recorder.js';
import { parseTime } from './history-pages.js';
import { type Candidate, journalStatus, type MatchWindow, matchUnresolved, sameOrder } from './outcome-matching.js';

export interface ReconcilerOptions {
  window: MatchWindow;
  /** Clean misses (history read in full, after the window) before an unknown create is NOT_PLACED. */
  notPlacedConfirmations: number;
}

function wirePrice(n: number | undefined): string | undefined {
  return n === undefined || n === 0 ? undefined : plain(fromWire(n));
}

export class OutcomeReconciler {
  private readonly cleanMisses = new Map<string, number>();

  constructor(
    private readonly p: EngineParts,
    private readonly options: ReconcilerOptions,
  ) {}

  /**
   * Resolves journal rows whose create outcome is unknown (PENDING nobody is sending, UNKNOWN) against the open
   * orders and history just read: matched ones take the venue's id and status; after the window, with history
   * read in full `notPlacedConfirmations` times without a match, one is NOT_PLACED. Matched records go to `seen`.
   */
  reconcile(
    unresolved: OrderRow[],
    open: readonly OrderRecord[],
    history: readonly OrderRecord[],
    historyComplete: boolean,
    seen: Map<string, OrderRecord>,
  ): void {
    const { journal, clock, store, logger } = this.p;
    const now = clock.now();
    const candidates: Candidate[] = [
      ...open.map((record): Candidate => ({ record, source: 'open-orders' })),
      ...history.map((record): Candidate => ({ record, source: 'history' })),
    ];
    const matches = matchUnresolved(unresolved, candidates, (id) => journal.isKnownExchangeId(id), this.options.window);
    const matched = new Set<string>();
    for (const { row, candidate } of matches) {
      const { record, source } = candidate;
      const executed = executedOf(record);
      const status = journalStatus(row, record.status, executed, source === 'open-orders');
      journal.save({
        ...row,
        status,
        venueStatus: record.status,
        exchangeId: record.displayingId,
        execQty: plain(executed),
        matchMethod: source satisfies MatchMethod,
        rejectCode: undefined,
        rejectReason: undefined,
        updatedAt: now,
      });
      matched.add(row.localId);
      this.cleanMisses.delete(row.localId);
      seen.set(record.displayingId, record);
      logger.info(
        { localId: row.localId, exchangeId: record.displayingId, via: source, status },
        'unknown order outcome reconciled',
      );
      store.events.record(now, row.instance, 'reconciled', {
        localId: row.localId,
        exchangeId: record.displayingId,
        via: source,
        status,
      });
    }
    for (const row of unresolved) {
      if (matched.has(row.localId)) continue;
      let current = row;
      if (row.status === 'PENDING') {
        // A PENDING row nobody is sending: the process stopped between journaling and the venue's answer.
        current = {
          ...row,
          status: 'UNKNOWN',
          rejectCode: 'E_INTERRUPTED',
          rejectReason: 'the bot stopped before the venue answered',
          updatedAt: now,
        };
        journal.save(current);
      }
      const sent = row.sentAt ?? row.createdAt;
      if (!historyComplete || now <= sent + this.options.window.windowMs) continue;
      const misses = (this.cleanMisses.get(row.localId) ?? 0) + 1;
      this.cleanMisses.set(row.localId, misses);
      if (misses < this.options.notPlacedConfirmations) continue;
      this.cleanMisses.delete(row.localId);
      const reason =
        `no matching order in open orders or order history ${Math.round((now - sent) / 1000)} s after sending ` +
        `(checked ${misses} times): the request never reached the venue`;
      journal.save({
        ...current,
        status: 'NOT_PLACED',
        matchMethod: 'not-found',
        rejectReason: reason,
        updatedAt: now,
      });
      logger.warn({ localId: row.localId }, `order not placed: ${reason}`);
      store.events.record(now, row.instance, 'not-placed', { localId: row.localId, reason });
    }
  }

  /** At start: journals open orders on the symbol that no row knows, as external (no strategy owns them). */
  adopt(symbol: string, open: readonly OrderRecord[]): void {
    const { journal, clock, store, logger } = this.p;
    const now = clock.now();
    const waiting = journal.forSymbol(symbol).filter((row) => isUnresolved(row));
    for (const record of open) {
      if (journal.isKnownExchangeId(record.displayingId)) continue;
      const maybeOurs = waiting.find((row) => sameOrder(row, record));
      if (maybeOurs) {
        // It could be the order behind an unknown create: adopting it as external would hide it from its owner.
        logger.warn(
          { exchangeId: record.displayingId, localId: maybeOurs.localId },
          'open order not adopted: it may be an unresolved order of ours',
        );
        continue;
      }
      const executed = executedOf(record);
      const row = newOrderRow({
        localId: `ext-${symbol}-${record.displayingId}`,
        instance: undefined,
        symbol,
        side: record.side,
        type: record.type,
        price: wirePrice(record.price),
        stopPrice: wirePrice(record.stopPrice),
        limitPrice: record.type === 'OCO' ? wirePrice(record.limitPrice) : undefined,
        quantity: plain(fromWire(record.quantity)),
        status: executed.isZero() ? 'OPEN' : 'PARTIALLY_FILLED',
        venueStatus: record.status,
        exchangeId: record.displayingId,
        execQty: plain(executed),
        matchMethod: 'adopted',
        external: true,
        createdAt: parseTime(record.createdAt) ?? now,
        updatedAt: now,
      });
      journal.insert(row);
      logger.warn(
        { exchangeId: record.displayingId, side: row.side, type: row.type, price: row.price, quantity: row.quantity },
        'adopted an open order the journal did not know (external: no strategy owns it)',
      );
      store.events.record(now, undefined, 'adopted', {
        localId: row.localId,
        exchangeId: record.displayingId,
        symbol,
        side: row.side,
        type: row.type,
        price: row.price,
        quantity: row.quantity,
      });
    }
  }
}
