/**
 * Recording fills exactly once. Fills come from trade history (each trade's id is its key) or, where trade
 * history is unavailable or an order closed long ago still owes fills, from executedQty deltas (keyed by the
 * cumulative quantity); each is inserted with its order row's update in one transaction, and a fill already
 * recorded changes nothing. Every newly recorded fill goes to the FillSink once its transaction committed.
 */
import { D, type Dec, dec, fromWire, plain, ZERO } from '../market/decimal.js';
import { crashPoint } from '../ops/crash-points.js';
import { Incidents } from '../ops/incident.js';
import type { OrderRecord, TradeRecord } from '../ports/venue-records.js';
import type { FeeIn, FillRow } from '../store/fills.js';
import { hasOutstandingFills, isActive, type OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import {
  ALL_PAIRS,
  bySymbol,
  HISTORY_READ_LIMIT,
  iso,
  parseTime,
  readPages,
  SharedReadTurns,
} from './history-pages.js';
import { isLiveVenueStatus, type VenueAnswers } from './venue-answers.js';

/** Where a newly recorded fill goes (the engine: the position, the strategy's onFill). */
export interface FillSink {
  fillRecorded(row: OrderRow, fill: FillRow): void;
}

/** A polled symbol, for its fills: the venue's records of its orders this poll (`seen`). */
export interface PolledFills {
  symbol: string;
  seen: ReadonlyMap<string, OrderRecord>;
  /** Some open order came without executedQty: its fills show only in trades. */
  missingExecuted: boolean;
}

/** The account's trade history read once for several symbols: each symbol's trades (none when it failed). */
interface SharedTrades {
  bySymbol: Map<string, TradeRecord[]>;
  complete: boolean;
  failed: boolean;
}

export interface FillRecorderOptions {
  /** Trade history is read from this long before the newest recorded trade (late or reordered trades). */
  tradeLookbackMs: number;
  /** Consecutive trade-history failures on a symbol after which fills come from executedQty deltas. */
  tradeHistoryFallbackAfter: number;
  /** A final order whose trades have not all appeared after this long gets the rest as a delta fill. */
  fillGraceMs: number;
  /** Tolerated difference between the venue's clock and ours. */
  skewMs: number;
}

/** Whether the venue's last record of the row's order closed it. */
function closedOnVenue(row: OrderRow): boolean {
  return row.venueStatus !== undefined && !isLiveVenueStatus(row.venueStatus);
}

/** Trade keys the recorder remembers as recorded at most: twice what one trade history read can bring. */
const RECORDED_MEMO_MAX = 2 * HISTORY_READ_LIMIT;

function compareIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  return a < b ? -1 : a > b ? 1 : 0;
}

export class FillRecorder {
  /** Consecutive trade-history failures by symbol; a symbol is absent once a read succeeds. */
  private readonly tradeFailures = new Map<string, number>();

  /** Trade history reads failing, by symbol: told per incident (a fault that flaps is one), never per poll. */
  private readonly tradesFailing: Incidents;
  /** Trade history reads that could not read every page, by symbol: told per incident. */
  private readonly tradesPartial: Incidents;
  /** Symbols whose incident has told that fills come from executedQty deltas. */
  private readonly deltaTold = new Set<string>();
  /** Symbols whose fills came to deltas in this recordMany: told in one line (a shared failure: every pair). */
  private readonly deltaNow: string[] = [];
  /** Whether trade history is read for the account or a pair at a time (after a shared read failed). */
  private readonly sharedTurns = new SharedReadTurns();
  /**
   * By symbol, where its next shared trade read may start: the start of the last complete shared read that
   * covered it, less the lookback and the skew. Set only for the symbols a read covered: a symbol missing from
   * a read (not polled then, or needing nothing) keeps the window of the last one it was in.
   */
  private readonly sharedWindowFrom = new Map<string, number>();
  /**
   * Trade keys known to be recorded: inserted here once their transaction committed, or found recorded by a
   * lookup. Each poll's read brings back the trades of its lookback, most recorded already; those known here
   * need no lookup (fills are never deleted: a key once recorded stays so). A memo, not a record: it forgets
   * all past RECORDED_MEMO_MAX keys, and what it does not hold is looked up.
   */
  private readonly knownRecorded = new Set<string>();

  constructor(
    private readonly p: EngineParts,
    private readonly options: FillRecorderOptions,
    private readonly sink: FillSink,
    private readonly answers: VenueAnswers,
  ) {
    this.tradesFailing = new Incidents(
      p.logger,
      () => p.clock.now(),
      (symbol) => (symbol === ALL_PAIRS ? 'trade history (all pairs)' : `trade history ${symbol}`),
    );
    this.tradesPartial = new Incidents(
      p.logger,
      () => p.clock.now(),
      (symbol) => `trade history ${symbol} in full`,
    );
  }

  /** Trade history is failing somewhere: a poll may record delta fills even if the venue reports no change. */
  hasPendingWork(): boolean {
    return this.tradeFailures.size > 0;
  }

  /**
   * Records the new fills of each polled symbol (`failed`: a symbol whose recording threw). When several need
   * trades, the account's trade history is read once for them all (a read a pair would not fit the request
   * budget of a many-pair account) and each takes its own from it; a symbol the shared read does not cover
   * (it stopped at its bound, or began after the symbol's oldest need) and that still owes fills afterwards
   * reads its own, as one symbol alone does.
   */
  async recordMany(polls: readonly PolledFills[], failed: (symbol: string, err: unknown) => void): Promise<void> {
    const needs = polls.map((poll) => ({ poll, from: this.tradesNeeded(poll.symbol, poll.missingExecuted) }));
    const needing = needs.filter((n): n is { poll: PolledFills; from: number } => n.from !== undefined);
    const shared = this.sharedTurns.shared(needing.length) ? await this.sharedTrades(needing) : undefined;
    for (const { poll, from } of needs) {
      try {
        await this.recordFills(poll, from, shared);
      } catch (err) {
        failed(poll.symbol, err);
      }
    }
    const symbols = this.deltaNow.splice(0);
    if (symbols.length > 0)
      this.p.logger.warn(
        { symbols: symbols.slice(0, 20), pairs: symbols.length, failures: this.options.tradeHistoryFallbackAfter },
        `trade history still unavailable for ${symbols.length === 1 ? symbols[0] : `${symbols.length} pairs`}: ` +
          'fills now come from executedQty deltas',
      );
  }

  /** The venue time the symbol's trade history must be read from, or undefined when it need not be read. */
  private tradesNeeded(symbol: string, missingExecuted: boolean): number | undefined {
    const rows = this.p.journal.forSymbol(symbol).filter((row) => row.exchangeId !== undefined);
    // Owing fills: more executed than recorded, or closed on the venue without a figure to believe (its trades tell).
    const owing = rows.filter((row) => hasOutstandingFills(row) || (isActive(row.status) && closedOnVenue(row)));
    // Fills show as executedQty above what is recorded; without that figure, read trades whenever orders are live.
    if (owing.length === 0 && !(missingExecuted && rows.length > 0)) return undefined;
    return this.tradesFrom(symbol, rows, owing);
  }

  /**
   * The account's trade history, one read for the symbols `needing` it: from the oldest need, each need no
   * older than the symbol's shared window (the last complete shared read that covered it: what was read then is
   * not read again every poll). Bounded by one page a symbol (as many requests as the reads it replaces at
   * most); a symbol it does not cover (it stopped short) and still owing reads its own as well.
   */
  private async sharedTrades(needing: readonly { poll: PolledFills; from: number }[]): Promise<SharedTrades> {
    const { guard, logger, venue, clock } = this.p;
    const from = Math.min(
      ...needing.map((n) => Math.max(n.from, this.sharedWindowFrom.get(n.poll.symbol) ?? -Infinity)),
    );
    const startedAt = this.answers.toVenueTime(clock.now());
    try {
      const read = await readPages(
        guard,
        logger,
        'trade history (all pairs)',
        (q) => venue.tradeHistory(q),
        { timeFrom: iso(from) },
        (t) => t._id,
        { maxPages: needing.length },
      );
      this.sharedTurns.succeeded();
      if (read.complete) {
        const windowFrom = startedAt - this.options.tradeLookbackMs - this.options.skewMs;
        for (const n of needing) this.sharedWindowFrom.set(n.poll.symbol, windowFrom);
      }
      // The shared incident over: a symbol told of deltas may be told again, unless its own reads still fail.
      if (this.tradesFailing.succeeded(ALL_PAIRS, { symbols: needing.length }))
        for (const symbol of this.deltaTold) if (!this.tradesFailing.ongoing(symbol)) this.deltaTold.delete(symbol);
      return { bySymbol: bySymbol(read.items), complete: read.complete, failed: false };
    } catch (err) {
      this.sharedTurns.failed();
      this.tradesFailing.get(ALL_PAIRS).failed(err, undefined, { symbols: needing.length });
      return { bySymbol: new Map(), complete: false, failed: true };
    }
  }

  /**
   * Records the symbol's new fills: from trade history (`shared`, or its own read), each trade once; from
   * executedQty deltas where trade history has failed too often, or an order closed long ago still owes fills.
   * `poll.seen`: the venue's records of the journal's orders this poll; `from`: where its trades must be read
   * from (undefined: nothing owed, nothing read).
   */
  private async recordFills(
    poll: PolledFills,
    from: number | undefined,
    shared: SharedTrades | undefined,
  ): Promise<void> {
    const { symbol, seen } = poll;
    if (from === undefined) {
      this.tradeFailures.delete(symbol);
      return;
    }
    let read = false;
    if (shared === undefined) read = await this.readOwn(symbol, from);
    else if (shared.failed) this.countFailure(symbol);
    else if (shared.complete) {
      // Served by the shared read: it covered the symbol from its need or its window on (older trades were read
      // by the complete read that set the window, which covered the symbol too).
      this.recordTrades(symbol, shared.bySymbol.get(symbol) ?? []);
      this.readSucceeded(symbol, true);
      read = true;
    } else {
      // Stopped short, newest first: what it holds of the symbol is its newest trades. The symbol's own read
      // brings them with the older ones, all recorded in the venue's time order (recording the newest first
      // could fold a SELL before the BUY it closes: positions fold in recording order).
      read = await this.readOwn(symbol, from);
    }
    const deltaMode = !read && (this.tradeFailures.get(symbol) ?? 0) >= this.options.tradeHistoryFallbackAfter;
    const now = this.p.clock.now();
    for (const row of this.p.journal.forSymbol(symbol)) {
      if (row.exchangeId === undefined) continue;
      const closed = closedOnVenue(row);
      // Closed long ago and still owing: only a trade read that succeeded and lacked the trade says history will
      // not bring it; a failed read says nothing (repeated failures are deltaMode's).
      const stale = closed && read && now - row.updatedAt > this.options.fillGraceMs;
      if (!hasOutstandingFills(row)) {
        if (stale && isActive(row.status)) this.closeUnknown(row, now);
        continue;
      }
      const record = seen.get(row.exchangeId);
      if (record && (deltaMode || stale || row.fillSource === 'delta')) this.insertDelta(row, record);
    }
  }

  /** The symbol's own read of its trade history from `from`, its trades recorded; false when it failed. */
  private async readOwn(symbol: string, from: number): Promise<boolean> {
    try {
      const read = await readPages(
        this.p.guard,
        this.p.logger,
        `trade history ${symbol}`,
        (q) => this.p.venue.tradeHistory(q),
        { symbol, timeFrom: iso(from) },
        (t) => t._id,
      );
      this.readSucceeded(symbol, read.complete);
      this.recordTrades(symbol, read.items);
      return true;
    } catch (err) {
      // Once when it starts, and once an incident when fills start coming from executedQty deltas; not per poll.
      this.tradesFailing.get(symbol).failed(err, undefined, { symbol });
      this.countFailure(symbol);
      return false;
    }
  }

  /** The symbol's trades were read (its own read, or a complete shared one): its failing incident may end. */
  private readSucceeded(symbol: string, complete: boolean): void {
    this.tradeFailures.delete(symbol);
    if (this.tradesFailing.succeeded(symbol, { symbol })) this.deltaTold.delete(symbol);
    if (complete) this.tradesPartial.succeeded(symbol, { symbol });
    else {
      const detail = `more than ${HISTORY_READ_LIMIT} trades since the oldest one owed: older trades are not read`;
      this.tradesPartial.get(symbol).failed(new Error(detail), detail, { symbol });
    }
  }

  /** A read of the symbol's trades failed: counted, and past the threshold its fills come from executedQty deltas. */
  private countFailure(symbol: string): void {
    const failures = (this.tradeFailures.get(symbol) ?? 0) + 1;
    this.tradeFailures.set(symbol, failures);
    if (failures === this.options.tradeHistoryFallbackAfter && !this.deltaTold.has(symbol)) {
      this.deltaTold.add(symbol);
      this.deltaNow.push(symbol);
    }
  }

  /** The symbol's trades not yet recorded, in the venue's time order, each into its order's fills. */
  private recordTrades(symbol: string, trades: readonly TradeRecord[]): void {
    const ordered = trades
      .filter((t) => t.symbol === symbol)
      .map((t) => ({ t, time: parseTime(t.createdAt) ?? 0, known: this.knownRecorded.has(t._id) }))
      .sort((a, b) => a.time - b.time || compareIds(a.t._id, b.t._id));
    // Most trades of the lookback are recorded already (known here, or one lookup of the other keys), not a
    // row, a fill and a transaction each (a read holds each trade once: readPages keys them by id).
    const recorded = this.p.store.fills.recorded(ordered.filter((o) => !o.known).map(({ t }) => t._id));
    for (const key of recorded) this.knownToBeRecorded(key);
    for (const { t, time, known } of ordered) {
      if (known || recorded.has(t._id)) continue;
      const row = this.p.journal.byExchangeId(t.orderId);
      // Fills of an order recorded from deltas are never mixed with trades: that would count them twice.
      if (!row || row.fillSource === 'delta') continue;
      this.insertTrade(row, t, time);
    }
  }

  /** `fillKey` is recorded, committed: no lookup asks again (the memo forgets all when it is full). */
  private knownToBeRecorded(fillKey: string): void {
    if (this.knownRecorded.size >= RECORDED_MEMO_MAX) this.knownRecorded.clear();
    this.knownRecorded.add(fillKey);
  }

  /**
   * A row the venue closed without saying what it executed (no possible executedQty), whose trades were read
   * for a grace period without bringing more: closed with the fills recorded. Never without fills a row the
   * venue called FILLED or PARTIALLY_FILLED: it stays working until its trades (or a possible figure) come.
   */
  private closeUnknown(row: OrderRow, now: number): void {
    const status = row.venueStatus as string;
    if ((status === 'FILLED' || row.status === 'PARTIALLY_FILLED') && new D(row.filledQty).isZero()) return;
    this.p.journal.save({ ...row, status, updatedAt: now });
    this.p.logger.info(
      { localId: row.localId, exchangeId: row.exchangeId, status, filled: row.filledQty },
      'order closed on the venue: its trades, read for the grace period, are all recorded',
    );
  }

  private tradesFrom(symbol: string, rows: readonly OrderRow[], owing: readonly OrderRow[]): number {
    const latest = this.p.store.fills.latestTradeTime(symbol);
    let from = latest === undefined ? Infinity : latest - this.options.tradeLookbackMs;
    // On the venue's clock, as the trades' times are.
    for (const row of latest === undefined ? rows : owing)
      from = Math.min(from, this.answers.venueTime(row) - this.options.skewMs);
    return Number.isFinite(from) ? from : this.answers.toVenueTime(this.p.clock.now()) - this.options.tradeLookbackMs;
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
    const feeIn = this.feeIn(row.symbol, feeAsset);
    if (!this.answers.believeTrade(row, t, feeIn)) return;
    this.record(row, true, {
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
      feeIn,
      time: time || this.p.clock.now(),
      source: 'trade',
      delivered: row.external,
      recordedAt: this.p.clock.now(),
    });
  }

  /**
   * The part of the executed quantity believed (VenueAnswers: the record's executedQty when possible, a FILLED
   * order's quantity) that no fill covers yet, as one fill keyed `<exchangeOrderId>:<cumulativeQty>`, at a price
   * the record gives inside the pair's bounds (none: its trades are waited for).
   */
  private insertDelta(row: OrderRow, record: OrderRecord): void {
    const executed = new D(row.execQty);
    const filled = new D(row.filledQty);
    const qty = executed.minus(filled);
    if (qty.lte(0)) return;
    const filledQuote = filled.mul(row.avgPrice ?? 0);
    // The record's executed quote is of its own executedQty: a price only when that is the figure believed.
    const ownFigure =
      record.executedQty !== undefined && Number.isFinite(record.executedQty) && dec(record.executedQty).eq(executed);
    const execQuote =
      ownFigure && record.executedQuoteQty !== undefined && Number.isFinite(record.executedQuoteQty)
        ? fromWire(record.executedQuoteQty)
        : undefined;
    const wirePrice = (n: number | undefined) => (n === undefined || !Number.isFinite(n) ? undefined : fromWire(n));
    const price = this.answers.deltaPrice(row, [
      [
        'executedQuoteQty',
        execQuote !== undefined && execQuote.gt(filledQuote) ? execQuote.minus(filledQuote).div(qty) : undefined,
      ],
      ['executedPrice', wirePrice(record.executedPrice)],
      ['price', wirePrice(record.price)],
      ["the order's own price", row.price === undefined ? undefined : new D(row.price)],
    ]);
    if (price === undefined) return;
    const feeAsset = record.feeMetadata?.asset ?? undefined;
    const feeIn = this.feeIn(row.symbol, feeAsset);
    const feeTotal = record.feeMetadata?.value;
    let fee = ZERO;
    if (feeTotal !== undefined) {
      const paid = this.p.store.fills.forOrder(row.localId).reduce((sum, f) => sum.plus(f.fee), ZERO);
      const owed = Number.isFinite(feeTotal) && feeTotal >= 0 ? D.max(dec(feeTotal).minus(paid), ZERO) : undefined;
      const problem =
        owed === undefined ? `${feeTotal} is not a possible fee` : this.answers.feeAboveValue(owed, qty, price, feeIn);
      if (problem === undefined) fee = owed as Dec;
      else this.answers.refuse(row, 'feeMetadata.value', problem);
    }
    const now = this.p.clock.now();
    // A final record closes the order only when it says this figure itself (FILLED: all of it); a figure it
    // failed to give, or gave impossibly, is what was believed before: more may have executed since.
    const affirmed = ownFigure || record.status === 'FILLED' || isLiveVenueStatus(record.status);
    this.record(row, affirmed, {
      fillKey: `${row.exchangeId}:${plain(executed)}`,
      orderLocalId: row.localId,
      instance: row.instance,
      symbol: row.symbol,
      side: row.side,
      price: plain(price),
      qty: plain(qty),
      fee: plain(fee),
      feeAsset,
      feeIn,
      time: parseTime(record.updatedAt) ?? now,
      source: 'delta',
      delivered: row.external,
      recordedAt: now,
    });
  }

  /**
   * Inserts the fill and updates its order row in one transaction; a fill already recorded changes nothing.
   * `mayClose`: once its fills cover what it executed, a row the venue closed takes the venue's status.
   */
  private record(row: OrderRow, mayClose: boolean, fill: FillRow): void {
    const { store, journal } = this.p;
    // Shared once recorded (the delivery keeps it until onFill has seen it, the exits and protections read it):
    // frozen, so no reader can change what the journal holds for another.
    Object.freeze(fill);
    crashPoint('before-fill-record');
    const inserted = store.transaction(() => {
      const added = store.fills.insert(fill);
      // Recorded once this commits (now, or anyway before): never if it rolls back, when the trade must come again.
      if (fill.source === 'trade') store.whenCommitted(() => this.knownToBeRecorded(fill.fillKey));
      if (!added) return undefined;
      const current = journal.get(row.localId) ?? row;
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
        if (closed && mayClose && filled.gte(executed)) status = current.venueStatus as string;
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
      journal.save(next);
      return next;
    });
    if (inserted === undefined) return;
    crashPoint('after-fill-record');
    this.sink.fillRecorded(inserted, fill);
  }
}
