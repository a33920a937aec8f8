/**
 * Reconciling the journal with the venue: rows whose create outcome is unknown are matched to the venue's
 * orders (outcome-matching.ts) or, once the window has passed with history readable, declared NOT_PLACED.
 * Never by sending again (invariant 3).
 */
import type { OrderRecord } from '../ports/venue-records.js';
import type { MatchMethod, OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { type Candidate, type MatchWindow, matchUnresolved } from './outcome-matching.js';
import type { VenueAnswers } from './venue-answers.js';

export interface ReconcilerOptions {
  window: MatchWindow;
  /** Clean misses (history read in full, after the window) before an unknown create is NOT_PLACED. */
  notPlacedConfirmations: number;
}

export class OutcomeReconciler {
  private readonly cleanMisses = new Map<string, number>();

  constructor(
    private readonly p: EngineParts,
    private readonly options: ReconcilerOptions,
    private readonly answers: VenueAnswers,
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
    const matches = matchUnresolved(
      unresolved,
      candidates,
      (id) => journal.isKnownExchangeId(id),
      this.options.window,
      (t) => this.answers.toVenueTime(t),
    );
    const matched = new Set<string>();
    for (const { row, candidate } of matches) {
      const { record, source } = candidate;
      const outcome = this.answers.outcome(row, record, source === 'open-orders');
      const { status } = outcome;
      journal.save({
        ...row,
        ...outcome,
        exchangeId: record.displayingId,
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
}
