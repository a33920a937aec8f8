/**
 * The orders poll for one symbol: what happened to the journal's orders on the venue. Open orders update live
 * rows; rows gone from them are resolved through order history (final statuses kept verbatim, an order found
 * in neither is reported); rows whose create outcome is unknown go to the reconciler; fills to the fill
 * recorder. Each of the three owns its own state; this one owns only the missing-order count.
 */
import { crashPoint } from '../ops/crash-points.js';
import type { OrderRecord } from '../ports/venue-records.js';
import { hasOutstandingFills, isActive, type OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { FillRecorder, type FillRecorderOptions, type FillSink, type PolledFills } from './fill-recorder.js';
import { ALL_PAIRS, bySymbol, iso, readPages, SharedReadTurns } from './history-pages.js';
import { VenueAnswers } from './venue-answers.js';
import { OutcomeReconciler, type ReconcilerOptions } from './outcome-reconciler.js';
import { ExternalOrders } from './external-orders.js';
import { Incidents } from '../ops/incident.js';

export type OrderSyncOptions = ReconcilerOptions & Omit<FillRecorderOptions, 'skewMs'>;

/** One symbol's poll between its steps: what open orders said, and what order history must tell. */
interface SymbolPoll extends PolledFills {
  adopt: boolean;
  open: OrderRecord[];
  seen: Map<string, OrderRecord>;
  /** Live rows open orders no longer list. */
  gone: OrderRow[];
  /** Rows whose create outcome is unknown. */
  unresolved: OrderRow[];
  /** Closed rows still owing fills. */
  outstanding: OrderRow[];
  /** The venue time order history must be read from (undefined: nothing to look up). */
  historyFrom: number | undefined;
}

/** The account's order history read once for several symbols: each symbol's records (none when it failed). */
interface SharedHistory {
  bySymbol: Map<string, OrderRecord[]>;
  complete: boolean;
  failed: boolean;
}

/**
 * Whether the symbol's order history may come from a shared read: not with a create outcome unknown. The
 * reconciler takes an order missing from a complete read for "not placed" and sends it again, and `complete`
 * is a page shorter than PAGE_SIZE: the contract says nothing of how the live venue pages a symbol-less history
 * (spot-api.md §2 and Limits: page size default and maximum not shown; exchange-notes.md neither), so a lower
 * cap there would look complete while leaving records out. Such a symbol reads its own, as the reconciler was
 * built on; unknown outcomes are rare (a create whose answer was lost), so that costs little.
 */
function mayShare(poll: SymbolPoll): boolean {
  return poll.unresolved.length === 0;
}

/** Whether a shared read serves the symbol: complete, or holding every order it seeks. */
function covers(shared: { complete: boolean }, poll: SymbolPoll, mine: readonly OrderRecord[]): boolean {
  if (shared.complete) return true;
  const ids = new Set(mine.map((o) => o.displayingId));
  return [...poll.gone, ...poll.outstanding].every((row) => ids.has(row.exchangeId as string));
}

/** Polls an order may be absent from both open orders and history before the operator is told. */
const MISSING_REPORT_AFTER = 3;

export class OrderSync {
  private readonly missing = new Map<string, number>();
  /** Symbols whose orders to look up in history went unread last poll (its read failed): the next poll must come. */
  private readonly historyOwed = new Set<string>();
  /** Order history reads failing, by symbol: told per incident (a fault that flaps is one), never per poll. */
  private readonly historyFailing: Incidents;
  /** Whether order history is read for the account or a pair at a time (after a shared read failed). */
  private readonly sharedTurns = new SharedReadTurns();
  private readonly reconciler: OutcomeReconciler;
  private readonly external: ExternalOrders;
  private readonly fills: FillRecorder;
  /** What the venue says of the journal's orders, believed or refused: one judge for every path that reads it. */
  readonly answers: VenueAnswers;

  constructor(
    private readonly p: EngineParts,
    private readonly options: OrderSyncOptions,
    sink: FillSink,
  ) {
    this.answers = new VenueAnswers(p);
    this.reconciler = new OutcomeReconciler(p, options, this.answers);
    this.external = new ExternalOrders(p, this.answers);
    this.historyFailing = new Incidents(
      p.logger,
      () => p.clock.now(),
      (symbol) => (symbol === ALL_PAIRS ? 'order history (all pairs)' : `order history ${symbol}`),
    );
    this.fills = new FillRecorder(p, { ...options, skewMs: options.window.skewMs }, sink, this.answers);
  }

  /** Whether a poll could change something even if the venue reports no change (time-based decisions). */
  hasPendingWork(): boolean {
    if (this.missing.size > 0 || this.historyOwed.size > 0) return true;
    if (this.fills.hasPendingWork()) return true;
    return this.p.journal.needsAttention();
  }

  /**
   * Polls symbols that have no live journal rows (only orders of another owner can be open there), with one
   * request for all the account's open orders when there are several (a pair list's hundreds of pairs must not
   * cost a request each). Each symbol's failure goes to `failed`; a failure of the one request throws.
   */
  pollIdle(symbols: readonly string[], failed: (symbol: string, err: unknown) => void): Promise<void> {
    return this.pollMany(symbols, () => true, failed);
  }

  /**
   * Polls `symbols` on one read of the account's open orders when there are several (the orders poll of a
   * many-pair account: one request, not one a pair), `adopt` as poll's. Each symbol's failure goes to `failed`; a
   * failure of the one request throws, and no symbol is polled on it.
   */
  async pollMany(
    symbols: readonly string[],
    adopt: (symbol: string) => boolean,
    failed: (symbol: string, err: unknown) => void,
  ): Promise<void> {
    const { venue, guard } = this.p;
    const read = symbols.length > 1 ? await guard.call('open orders', () => venue.openOrders()) : undefined;
    await this.pollAll(symbols, adopt, read, failed);
  }

  /** Tells the open orders of another owner the polls counted (external-orders.ts): at start, and after polls. */
  reportExternal(atStart: boolean): void {
    this.external.report(atStart);
  }

  /**
   * Polls one symbol. `adopt` (a symbol an instance trades): journal open orders nobody knows as external and
   * count them. `read`: the account's open orders read already (one request for many symbols without journal rows).
   * Throws when open orders cannot be read.
   */
  poll(symbol: string, adopt: boolean, read?: readonly OrderRecord[]): Promise<void> {
    return this.pollAll(
      [symbol],
      () => adopt,
      read,
      (_, err) => {
        throw err;
      },
    );
  }

  /**
   * The poll of `symbols`, in three steps: each symbol's open orders applied; order history, read once for the
   * account when several symbols must look orders up (else the symbol's own read), each symbol resolving its
   * rows from it; then fills (FillRecorder.recordMany: trade history likewise). A symbol that fails at a step
   * goes to `failed` and takes no further step.
   */
  private async pollAll(
    symbols: readonly string[],
    adopt: (symbol: string) => boolean,
    read: readonly OrderRecord[] | undefined,
    failed: (symbol: string, err: unknown) => void,
  ): Promise<void> {
    const polls: SymbolPoll[] = [];
    for (const symbol of symbols) {
      try {
        polls.push(await this.openOrders(symbol, adopt(symbol), read));
      } catch (err) {
        failed(symbol, err);
      }
    }
    const shared = await this.sharedHistory(polls);
    const resolved: SymbolPoll[] = [];
    for (const poll of polls) {
      try {
        await this.resolve(poll, shared);
        resolved.push(poll);
      } catch (err) {
        failed(poll.symbol, err);
      }
    }
    await this.fills.recordMany(resolved, failed);
  }

  /** The symbol's open orders (`read`, or its own read) applied to its live rows; what history must tell. */
  private async openOrders(symbol: string, adopt: boolean, read?: readonly OrderRecord[]): Promise<SymbolPoll> {
    const { venue, guard, journal } = this.p;
    const open = (read ?? (await guard.call(`open orders ${symbol}`, () => venue.openOrders(symbol)))).filter(
      (o) => o.symbol === symbol,
    );
    const openById = new Map(open.map((o) => [o.displayingId, o]));
    const seen = new Map<string, OrderRecord>();
    let missingExecuted = false;
    const gone: OrderRow[] = [];
    const changes: OrderRow[] = [];
    for (const row of journal.forSymbol(symbol)) {
      if (row.exchangeId === undefined || !isActive(row.status)) continue;
      const record = openById.get(row.exchangeId);
      if (record === undefined) {
        gone.push(row);
        continue;
      }
      if (record.executedQty === undefined) missingExecuted = true;
      seen.set(row.exchangeId, record);
      this.missing.delete(row.localId);
      this.apply(row, record, true, changes);
    }
    this.save(changes);
    const rows = journal.forSymbol(symbol);
    const unresolved = rows.filter((row) => journal.toReconcile(row));
    const outstanding = rows.filter(
      (row) => row.exchangeId !== undefined && !isActive(row.status) && hasOutstandingFills(row),
    );
    const lookups = [...gone, ...unresolved, ...outstanding];
    // On the venue's clock (each order's own createdAt where the venue gave it): not on ours, which may be off.
    const historyFrom =
      lookups.length === 0
        ? undefined
        : Math.min(...lookups.map((row) => this.answers.venueTime(row))) - this.options.window.skewMs;
    return { symbol, adopt, open, seen, missingExecuted, gone, unresolved, outstanding, historyFrom };
  }

  /**
   * The account's order history, one read for the symbols that must look orders up, when there are several
   * (undefined otherwise: a symbol alone reads its own; so does one with a create outcome unknown, mayShare).
   * From the oldest time any of them needs; paged until complete, or until every order sought by id is in, and
   * at most one page a symbol (as many requests as the reads it replaces at most; a symbol it does not cover
   * then reads its own as well).
   */
  private async sharedHistory(polls: readonly SymbolPoll[]): Promise<SharedHistory | undefined> {
    const needing = polls.filter((poll) => poll.historyFrom !== undefined && mayShare(poll));
    if (!this.sharedTurns.shared(needing.length)) return undefined;
    const sought = needing.flatMap((poll) => [...poll.gone, ...poll.outstanding].map((row) => row.exchangeId));
    const from = Math.min(...needing.map((poll) => poll.historyFrom as number));
    try {
      const read = await readPages(
        this.p.guard,
        this.p.logger,
        'order history (all pairs)',
        (q) => this.p.venue.orderHistory(q),
        { timeFrom: iso(from) },
        (o) => o.displayingId,
        {
          maxPages: needing.length,
          enough: (byId) => sought.every((id) => byId.has(id as string)),
        },
      );
      this.sharedTurns.succeeded();
      this.historyFailing.succeeded(ALL_PAIRS, { symbols: needing.length });
      return { bySymbol: bySymbol(read.items), complete: read.complete, failed: false };
    } catch (err) {
      this.sharedTurns.failed();
      this.historyUnavailable(ALL_PAIRS, err, { symbols: needing.length });
      return { bySymbol: new Map(), complete: false, failed: true };
    }
  }

  /**
   * The symbol's rows gone from open orders, closed ones owing fills and unknown outcomes, resolved from order
   * history: the shared read's records when it covers the symbol (complete, or holding every order sought and
   * no outcome unknown), else the symbol's own read, as one symbol alone does. A shared read that failed
   * leaves them as they are until the next poll (no narrow lookups against a venue that just failed), which
   * reads each symbol's own (SharedReadTurns).
   */
  private async resolve(poll: SymbolPoll, sharedRead: SharedHistory | undefined): Promise<void> {
    const { symbol, gone, unresolved, outstanding, seen, open } = poll;
    // One that may not share was not among the shared read's needs: whatever became of that read, it reads its own.
    const shared = mayShare(poll) ? sharedRead : undefined;
    let history: OrderRecord[] = [];
    let historyComplete = false;
    let historyRead = false;
    const mine = shared?.bySymbol.get(symbol) ?? [];
    if (poll.historyFrom !== undefined && shared?.failed !== true) {
      if (shared !== undefined && covers(shared, poll, mine)) {
        history = mine;
        historyComplete = shared.complete;
        historyRead = true;
        this.historyFailing.succeeded(symbol, { symbol });
      } else {
        try {
          const read = await readPages(
            this.p.guard,
            this.p.logger,
            `order history ${symbol}`,
            (q) => this.p.venue.orderHistory(q),
            { symbol, timeFrom: iso(poll.historyFrom) },
            (o) => o.displayingId,
          );
          history = read.items.filter((o) => o.symbol === symbol);
          historyComplete = read.complete;
          historyRead = true;
          this.historyFailing.succeeded(symbol, { symbol });
        } catch (err) {
          this.historyUnavailable(symbol, err);
        }
      }
    }
    if (poll.historyFrom !== undefined && !historyRead) this.historyOwed.add(symbol);
    else this.historyOwed.delete(symbol);
    const historyById = new Map(history.map((o) => [o.displayingId, o]));
    const foundNarrowly =
      historyComplete || shared?.failed === true
        ? new Set<string>()
        : await this.lookUpOld(symbol, [...gone.filter((row) => !row.external), ...outstanding], historyById);
    const changes: OrderRow[] = [];
    for (const row of gone) {
      const record = historyById.get(row.exchangeId as string);
      if (record) {
        seen.set(row.exchangeId as string, record);
        this.missing.delete(row.localId);
        // History may still show it live while open orders no longer do: then it stays as it is until one catches up.
        this.apply(row, record, false, changes);
      } else if (row.external) {
        // Another owner's, listed nowhere any more: closed (its fate is theirs), never left OPEN for ever.
        if (historyRead) changes.push(this.vanished(row));
      } else if (historyComplete || foundNarrowly.has(row.localId)) {
        this.reportMissing(row);
      }
    }
    this.save(changes);
    for (const row of outstanding) {
      const record = historyById.get(row.exchangeId as string);
      if (record) seen.set(row.exchangeId as string, record);
    }
    if (unresolved.length > 0) {
      crashPoint('during-reconcile');
      this.reconciler.reconcile(unresolved, open, history, historyComplete, seen);
    }
    if (poll.adopt) this.external.observe(symbol, open);
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
      const t = this.answers.venueTime(row);
      try {
        const read = await readPages(
          this.p.guard,
          this.p.logger,
          `order history ${symbol} around ${row.localId}`,
          (q) => this.p.venue.orderHistory(q),
          { symbol, timeFrom: iso(t - skew), timeTo: iso(t + skew) },
          (o) => o.displayingId,
        );
        for (const o of read.items) if (o.symbol === symbol) historyById.set(o.displayingId, o);
        if (read.complete) complete.add(row.localId);
      } catch (err) {
        this.historyUnavailable(symbol, err);
      }
    }
    return complete;
  }

  /** `data`: what the lines carry (default the symbol; the shared read's: how many symbols it was for). */
  private historyUnavailable(symbol: string, err: unknown, data: Record<string, unknown> = { symbol }): void {
    const message = err instanceof Error ? err.message : String(err);
    this.historyFailing
      .get(symbol)
      .failed(err, `${message} (orders gone from open orders stay as they are until it answers)`, data);
  }

  /** What the venue reports, into `changes`; `live`: the record came from open orders (whatever its status says). */
  private apply(row: OrderRow, record: OrderRecord, live: boolean, changes: OrderRow[]): void {
    const outcome = this.answers.outcome(row, record, live);
    if (outcome.status === row.status && outcome.execQty === row.execQty && outcome.venueStatus === row.venueStatus)
      return;
    changes.push({ ...row, ...outcome, updatedAt: this.p.clock.now() });
  }

  /** An external row no longer listed anywhere, closed. */
  private vanished(row: OrderRow): OrderRow {
    return {
      ...row,
      status: 'CANCELED',
      matchMethod: 'vanished',
      rejectReason: 'external order no longer listed by the venue (in neither open orders nor order history)',
      updatedAt: this.p.clock.now(),
    };
  }

  /**
   * Writes the rows a poll changed, all in one transaction (a thousand orders closed cost one sync to disk, not
   * a thousand), and empties `changes`. Our own orders that closed are logged one line each; external ones are not.
   */
  private save(changes: OrderRow[]): void {
    if (changes.length === 0) return;
    this.p.journal.saveMany(changes);
    let closedExternal = 0;
    for (const row of changes) {
      if (isActive(row.status)) continue;
      if (row.external) closedExternal++;
      else
        this.p.logger.info(
          { localId: row.localId, exchangeId: row.exchangeId, status: row.status },
          'order closed on the venue',
        );
    }
    if (closedExternal > 0) this.p.logger.debug({ closedExternal }, 'external orders closed on the venue');
    changes.length = 0;
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
}
