/**
 * The orders poll for one symbol: what happened to the journal's orders on the venue. Open orders update live
 * rows; rows gone from them are resolved through order history (final statuses kept verbatim); rows whose
 * create outcome is unknown are matched against open orders and history (or declared NOT_PLACED once the
 * window has passed with history readable); fills come from trade history, each inserted exactly once in one
 * transaction with its order row, or from executedQty deltas where trade history is unavailable.
 */
import type { OrderRecord, TradeRecord } from '../ports/venue-records.js';
import { D, type Dec, dec, fromWire, plain, ZERO } from '../market/decimal.js';
import type { HistoryQuery } from '../ports/venue.js';
import type { FeeIn, FillRow } from '../store/fills.js';
import { type MatchMethod, newOrderRow, type OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { hasOutstandingFills, isActive, isUnresolved } from './order-book.js';
import {
  type Candidate,
  isLiveVenueStatus,
  journalStatus,
  type MatchWindow,
  matchUnresolved,
  sameOrder,
} from './order-matching.js';

/**
 * The venue's executed quantity, read at the 15 significant digits a double carries (as fees are): the
 * exchange's numbers carry binary noise (0.30000000000000004), and read exactly that noise would leave an
 * order forever "owing" a few 1e-17 and end up as a phantom delta fill.
 */
const executedOf = (record: OrderRecord): Dec => dec(record.executedQty ?? 0);

export interface TrackerOptions {
  window: MatchWindow;
  /** Trade history is read from this long before the newest recorded trade (late or reordered trades). */
  tradeLookbackMs: number;
  /** Consecutive trade-history failures on a symbol after which fills come from executedQty deltas. */
  tradeHistoryFallbackAfter: number;
  /** A final order whose trades have not all appeared after this long gets the rest as a delta fill. */
  fillGraceMs: number;
  /** Clean misses (history read in full, after the window) before an unknown create is NOT_PLACED. */
  notPlacedConfirmations: number;
}

const PAGE_SIZE = 100;
const MAX_PAGES = 20;
/** Polls an order may be absent from both open orders and history before the operator is told. */
const MISSING_REPORT_AFTER = 3;

function iso(ms: number): string {
  return new Date(Math.max(0, ms)).toISOString();
}

function parseTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const t = Date.parse(text);
  return Number.isFinite(t) ? t : undefined;
}

function wirePrice(n: number | undefined): string | undefined {
  return n === undefined || n === 0 ? undefined : plain(fromWire(n));
}

function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

export class OrderTracker {
  /** Consecutive trade-history failures by symbol; a symbol is absent once a read succeeds. */
  private readonly tradeFailures = new Map<string, number>();
  private readonly cleanMisses = new Map<string, number>();
  private readonly missing = new Map<string, number>();

  constructor(
    private readonly p: EngineParts,
    private readonly options: TrackerOptions,
    /** Called once per newly recorded fill, after its transaction committed. */
    private readonly onFill: (row: OrderRow, fill: FillRow) => void,
  ) {}

  /** Whether a poll could change something even if the venue reports no change (time-based decisions). */
  hasPendingWork(): boolean {
    if (this.missing.size > 0) return true;
    if (this.tradeFailures.size > 0) return true;
    return this.p.book.needsAttention();
  }

  /** Polls one symbol. `adopt`: journal open orders nobody knows as external (at start). Throws when open orders cannot be read. */
  async poll(symbol: string, adopt: boolean): Promise<void> {
    const { venue, guard, book, inFlight } = this.p;
    const open = (await guard.call(`open orders ${symbol}`, () => venue.openOrders(symbol))).filter(
      (o) => o.symbol === symbol,
    );
    const openById = new Map(open.map((o) => [o.displayingId, o]));
    const seen = new Map<string, OrderRecord>();
    let missingExecuted = false;
    const gone: OrderRow[] = [];
    for (const row of book.forSymbol(symbol)) {
      if (row.exchangeId === undefined || !isActive(row.status)) continue;
      const record = openById.get(row.exchangeId);
      if (record === undefined) {
        gone.push(row);
        continue;
      }
      if (record.executedQty === undefined) missingExecuted = true;
      seen.set(row.exchangeId, record);
      this.missing.delete(row.localId);
      this.apply(row, record, true);
    }
    const rows = book.forSymbol(symbol);
    const unresolved = rows.filter((row) => isUnresolved(row) && !inFlight.has(row.localId));
    const outstanding = rows.filter(
      (row) => row.exchangeId !== undefined && !isActive(row.status) && hasOutstandingFills(row),
    );

    let history: OrderRecord[] = [];
    let historyComplete = false;
    const lookups = [...gone, ...unresolved, ...outstanding];
    if (lookups.length > 0) {
      const from = Math.min(...lookups.map((row) => row.sentAt ?? row.createdAt)) - this.options.window.skewMs;
      try {
        const read = await this.readPages(
          `order history ${symbol}`,
          (q) => venue.orderHistory(q),
          { symbol, timeFrom: iso(from) },
          (o) => o.displayingId,
        );
        history = read.items.filter((o) => o.symbol === symbol);
        historyComplete = read.complete;
      } catch (err) {
        this.p.logger.warn({ err, symbol }, 'order history unavailable: orders gone from open orders stay as they are');
      }
    }
    const historyById = new Map(history.map((o) => [o.displayingId, o]));
    const foundNarrowly = historyComplete
      ? new Set<string>()
      : await this.lookUpOld(symbol, [...gone, ...outstanding], historyById);
    for (const row of gone) {
      const record = historyById.get(row.exchangeId as string);
      if (record) {
        seen.set(row.exchangeId as string, record);
        this.missing.delete(row.localId);
        // History may still show it live while open orders no longer do: then it stays as it is until one catches up.
        this.apply(row, record, false);
      } else if (historyComplete || foundNarrowly.has(row.localId)) {
        this.reportMissing(row);
      }
    }
    for (const row of outstanding) {
      const record = historyById.get(row.exchangeId as string);
      if (record) seen.set(row.exchangeId as string, record);
    }
    if (unresolved.length > 0) this.reconcile(unresolved, open, history, historyComplete, seen);
    if (adopt) this.adopt(symbol, open);
    await this.recordFills(symbol, seen, missingExecuted);
  }

  /**
   * Newest-first history pages stop short of an old order when thousands of newer ones were created on the
   * symbol since (a grid's outer level resting for weeks): each order the broad read missed is looked up in a
   * narrow window around its own send time, into `historyById`. Returns the rows whose narrow read was
   * complete (so not finding them there means they are missing).
   */
  private async lookUpOld(
    symbol: string,
    rows: readonly OrderRow[],
    historyById: Map<string, OrderRecord>,
  ): Promise<Set<string>> {
    const complete = new Set<string>();
    const skew = this.options.window.skewMs;
    for (const row of rows) {
      if (historyById.has(row.exchangeId as string)) continue;
      const t = row.sentAt ?? row.createdAt;
      try {
        const read = await this.readPages(
          `order history ${symbol} around ${row.localId}`,
          (q) => this.p.venue.orderHistory(q),
          { symbol, timeFrom: iso(t - skew), timeTo: iso(t + skew) },
          (o) => o.displayingId,
        );
        for (const o of read.items) if (o.symbol === symbol) historyById.set(o.displayingId, o);
        if (read.complete) complete.add(row.localId);
      } catch (err) {
        this.p.logger.warn({ err, symbol, localId: row.localId }, 'order history around an old order unavailable');
      }
    }
    return complete;
  }

  /** Pages through a history endpoint (newest first, PAGE_SIZE a page); `complete` when the last page was short. */
  private async readPages<T>(
    what: string,
    fetch: (q: HistoryQuery) => Promise<T[]>,
    query: HistoryQuery,
    id: (item: T) => string,
  ): Promise<{ items: T[]; complete: boolean }> {
    const byId = new Map<string, T>();
    for (let page = 1; page <= MAX_PAGES; page++) {
      const items = await this.p.guard.call(what, () => fetch({ ...query, page, pageSize: PAGE_SIZE }));
      // Newer items arriving between pages push older ones onto the next page: duplicates, never gaps.
      const before = byId.size;
      for (const item of items) byId.set(id(item), item);
      if (items.length < PAGE_SIZE) return { items: [...byId.values()], complete: true };
      if (byId.size === before) break; // the venue ignores `page`: what lies beyond cannot be read
    }
    this.p.logger.warn({ query }, `${what}: could not read every page, read incomplete`);
    return { items: [...byId.values()], complete: false };
  }

  /** Applies what the venue reports; `live`: the record came from open orders (whatever its status says). */
  private apply(row: OrderRow, record: OrderRecord, live: boolean): void {
    const executed = D.max(executedOf(record), row.execQty);
    const status = journalStatus(row, record.status, executed, live);
    const execQty = plain(executed);
    if (status === row.status && execQty === row.execQty && record.status === row.venueStatus) return;
    this.p.book.save({ ...row, status, venueStatus: record.status, execQty, updatedAt: this.p.clock.now() });
    if (!isActive(status))
      this.p.logger.info({ localId: row.localId, exchangeId: row.exchangeId, status }, 'order closed on the venue');
  }

  private reportMissing(row: OrderRow): void {
    const n = (this.missing.get(row.localId) ?? 0) + 1;
    this.missing.set(row.localId, n);
    if (n !== MISSING_REPORT_AFTER) return;
    const message = `order ${row.localId} (exchange id ${row.exchangeId}) is in neither open orders nor order history`;
    this.p.logger.error(message);
    this.p.store.events.record(this.p.clock.now(), row.instance, 'order-missing', {
      localId: row.localId,
      exchangeId: row.exchangeId,
    });
  }

  private reconcile(
    unresolved: OrderRow[],
    open: readonly OrderRecord[],
    history: readonly OrderRecord[],
    historyComplete: boolean,
    seen: Map<string, OrderRecord>,
  ): void {
    const { book, clock, store, logger } = this.p;
    const now = clock.now();
    const candidates: Candidate[] = [
      ...open.map((record): Candidate => ({ record, source: 'open-orders' })),
      ...history.map((record): Candidate => ({ record, source: 'history' })),
    ];
    const matches = matchUnresolved(unresolved, candidates, (id) => book.isKnownExchangeId(id), this.options.window);
    const matched = new Set<string>();
    for (const { row, candidate } of matches) {
      const { record, source } = candidate;
      const executed = executedOf(record);
      const status = journalStatus(row, record.status, executed, source === 'open-orders');
      book.save({
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
        book.save(current);
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
      book.save({ ...current, status: 'NOT_PLACED', matchMethod: 'not-found', rejectReason: reason, updatedAt: now });
      logger.warn({ localId: row.localId }, `order not placed: ${reason}`);
      store.events.record(now, row.instance, 'not-placed', { localId: row.localId, reason });
    }
  }

  private adopt(symbol: string, open: readonly OrderRecord[]): void {
    const { book, clock, store, logger } = this.p;
    const now = clock.now();
    const waiting = book.forSymbol(symbol).filter((row) => isUnresolved(row));
    for (const record of open) {
      if (book.isKnownExchangeId(record.displayingId)) continue;
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
      book.insert(row);
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

  private async recordFills(
    symbol: string,
    seen: ReadonlyMap<string, OrderRecord>,
    missingExecuted: boolean,
  ): Promise<void> {
    const rows = this.p.book.forSymbol(symbol).filter((row) => row.exchangeId !== undefined);
    const owing = rows.filter(hasOutstandingFills);
    // Fills show as executedQty above what is recorded; without that figure, read trades whenever orders are live.
    if (owing.length === 0 && !(missingExecuted && rows.length > 0)) {
      this.tradeFailures.delete(symbol);
      return;
    }
    let trades: TradeRecord[] | undefined;
    try {
      const read = await this.readPages(
        `trade history ${symbol}`,
        (q) => this.p.venue.tradeHistory(q),
        { symbol, timeFrom: iso(this.tradesFrom(symbol, rows, owing)) },
        (t) => t._id,
      );
      trades = read.items;
      this.tradeFailures.delete(symbol);
    } catch (err) {
      const failures = (this.tradeFailures.get(symbol) ?? 0) + 1;
      this.tradeFailures.set(symbol, failures);
      this.p.logger.warn({ err, symbol, failures }, 'trade history unavailable');
    }
    if (trades) {
      const ordered = trades
        .filter((t) => t.symbol === symbol)
        .map((t) => ({ t, time: parseTime(t.createdAt) ?? 0 }))
        .sort((a, b) => a.time - b.time || compareIds(a.t._id, b.t._id));
      for (const { t, time } of ordered) {
        // Most trades of the lookback are recorded already: one key lookup, not a row, a fill and a transaction.
        if (this.p.store.fills.has(t._id)) continue;
        const row = this.p.book.byExchangeId(t.orderId);
        // Fills of an order recorded from deltas are never mixed with trades: that would count them twice.
        if (!row || row.fillSource === 'delta') continue;
        this.insertTrade(row, t, time);
      }
    }
    const deltaMode =
      trades === undefined && (this.tradeFailures.get(symbol) ?? 0) >= this.options.tradeHistoryFallbackAfter;
    const now = this.p.clock.now();
    for (const row of this.p.book.forSymbol(symbol)) {
      if (row.exchangeId === undefined || !hasOutstandingFills(row)) continue;
      const record = seen.get(row.exchangeId);
      if (!record) continue;
      const closed = row.venueStatus !== undefined && !isLiveVenueStatus(row.venueStatus);
      const stale = closed && now - row.updatedAt > this.options.fillGraceMs;
      if (deltaMode || stale || row.fillSource === 'delta') this.insertDelta(row, record);
    }
  }

  private tradesFrom(symbol: string, rows: readonly OrderRow[], owing: readonly OrderRow[]): number {
    const latest = this.p.store.fills.latestTradeTime(symbol);
    let from = latest === undefined ? Infinity : latest - this.options.tradeLookbackMs;
    for (const row of latest === undefined ? rows : owing)
      from = Math.min(from, row.createdAt - this.options.window.skewMs);
    return Number.isFinite(from) ? from : this.p.clock.now() - this.options.tradeLookbackMs;
  }

  private feeIn(symbol: string, asset: string | undefined): FeeIn {
    const rules = this.p.market.rules.get(symbol);
    if (asset !== undefined && rules?.baseAsset === asset) return 'base';
    if (asset !== undefined && rules?.quoteAsset === asset) return 'quote';
    return 'other';
  }

  private insertTrade(row: OrderRow, t: TradeRecord, time: number): void {
    const fee = t.feeMetadata?.feeValue;
    const feeAsset = t.feeMetadata?.feeAsset ?? undefined;
    this.record(row, {
      fillKey: t._id,
      orderLocalId: row.localId,
      instance: row.instance,
      symbol: row.symbol,
      side: row.side,
      price: plain(fromWire(t.price)),
      qty: plain(fromWire(t.baseQty)),
      // Fees carry float noise on the wire (0.30000000000000004): read at a double's 15 significant digits.
      fee: plain(fee === undefined ? ZERO : dec(fee)),
      feeAsset,
      feeIn: this.feeIn(row.symbol, feeAsset),
      time: time || this.p.clock.now(),
      source: 'trade',
      delivered: row.external,
      recordedAt: this.p.clock.now(),
    });
  }

  /** The part of executedQty no fill covers yet, as one fill keyed `<exchangeOrderId>:<cumulativeQty>`. */
  private insertDelta(row: OrderRow, record: OrderRecord): void {
    const executed = executedOf(record);
    const filled = new D(row.filledQty);
    const qty = executed.minus(filled);
    if (qty.lte(0)) return;
    const filledQuote = filled.mul(row.avgPrice ?? 0);
    const execQuote = record.executedQuoteQty === undefined ? undefined : fromWire(record.executedQuoteQty);
    const price =
      execQuote !== undefined && execQuote.gt(filledQuote)
        ? execQuote.minus(filledQuote).div(qty)
        : fromWire(record.executedPrice || record.price || 0);
    const feeAsset = record.feeMetadata?.asset ?? undefined;
    const feeTotal = record.feeMetadata?.value;
    let fee = ZERO;
    if (feeTotal !== undefined) {
      const paid = this.p.store.fills.forOrder(row.localId).reduce((sum, f) => sum.plus(f.fee), ZERO);
      fee = D.max(dec(feeTotal).minus(paid), ZERO);
    }
    const now = this.p.clock.now();
    this.record(row, {
      fillKey: `${row.exchangeId}:${plain(executed)}`,
      orderLocalId: row.localId,
      instance: row.instance,
      symbol: row.symbol,
      side: row.side,
      price: plain(price),
      qty: plain(qty),
      fee: plain(fee),
      feeAsset,
      feeIn: this.feeIn(row.symbol, feeAsset),
      time: parseTime(record.updatedAt) ?? now,
      source: 'delta',
      delivered: row.external,
      recordedAt: now,
    });
  }

  /** Inserts the fill and updates its order row in one transaction; a fill already recorded changes nothing. */
  private record(row: OrderRow, fill: FillRow): void {
    const { store, book } = this.p;
    const inserted = store.transaction(() => {
      if (!store.fills.insert(fill)) return undefined;
      const current = book.get(row.localId) ?? row;
      const before = new D(current.filledQty);
      const qty = new D(fill.qty);
      const filled = before.plus(qty);
      const average = before
        .mul(current.avgPrice ?? 0)
        .plus(qty.mul(fill.price))
        .div(filled);
      const executed = D.max(filled, current.execQty);
      let status = current.status;
      if (isActive(status)) {
        const closed = current.venueStatus !== undefined && !isLiveVenueStatus(current.venueStatus);
        if (closed && filled.gte(executed)) status = current.venueStatus as string;
        else if (current.quantity !== undefined && filled.gte(current.quantity)) status = 'FILLED';
        else status = 'PARTIALLY_FILLED';
      }
      const next: OrderRow = {
        ...current,
        status,
        filledQty: plain(filled),
        avgPrice: plain(average),
        execQty: plain(executed),
        fillSource: fill.source === 'trade' ? 'trades' : 'delta',
        updatedAt: fill.recordedAt,
      };
      book.save(next);
      return next;
    });
    if (inserted) this.onFill(inserted, fill);
  }
}
