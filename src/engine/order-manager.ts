/**
 * From intent to order: pair rules, order shape, risk, balance, then the journal row (PENDING, durable)
 * BEFORE the request leaves, then the venue's answer. A create whose outcome is not certain is UNKNOWN and
 * is resolved from open orders and history, never by sending again (invariants 2 and 3).
 */
import { errorCode } from '../errors.js';
import { D, type Dec } from '../market/decimal.js';
import { crashPoint } from '../ops/crash-points.js';
import type { CancelIntent, Intent, OrderIntent } from '../strategy/api.js';
import { failureCode, failureMessage, meaningOf } from '../ports/venue-errors.js';
import type { OrderRecord } from '../ports/venue-records.js';
import { isWriteFailure } from '../store/database.js';
import { isActive, newOrderRow, type OrderRow, remainingBase } from '../store/order-journal.js';
import { Incident } from '../ops/incident.js';
import type { Logger } from '../ops/logger.js';
import type { EngineParts } from './engine-parts.js';
import type { InstanceRunner } from './instance-runner.js';
import type { OrderSync } from './order-sync.js';
import { checkOrder, type CheckedOrder } from './order-checks.js';
import { utcDay } from '../market/position.js';
import type { Portfolios } from './portfolio.js';
import { riskProblem } from './risk.js';

/** What a cancel sent to the venue came to: the order's journal status after it, or why it failed. */
export type CancelResult = { ok: true; status: string } | { ok: false; outcome: string; code: string; message: string };

/** What became of an order intent: journaled (then sent, or its outcome known or not), or refused before. */
export type SubmitOutcome = { ok: true; row: OrderRow } | { ok: false; reason: string; waiting?: boolean };

/** An intent as an event or log line shows it: decimals as text. */
export function describeIntent(intent: Intent): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(intent)) out[key] = value instanceof D ? value.toFixed() : value;
  return out;
}

/**
 * How a failed create ended, from what the failure means (ports/venue-errors.ts). REJECTED and NOT_SENT are
 * certain: no order exists. Everything else (an outcome the adapter could not know, a temporary failure, an
 * error nobody classified) may have placed the order, so it is UNKNOWN and resolved from open orders and
 * history, never by sending again (invariant 3).
 */
export type CreateOutcome = 'REJECTED' | 'NOT_SENT' | 'UNKNOWN';

export function createOutcome(err: unknown): CreateOutcome {
  switch (meaningOf(err)) {
    case 'rejected':
    case 'authentication':
      return 'REJECTED';
    case 'not-sent':
      return 'NOT_SENT';
    default:
      return 'UNKNOWN';
  }
}

/** What may refuse a strategy's new entry beyond the brakes: its declared protections (exits/declared-exits.ts). */
export interface EntryGate {
  /** Why `r` may not enter at `now` (undefined: it may). */
  entryBlock(r: InstanceRunner, now: number): string | undefined;
}

export class OrderManager {
  /** An order was sent (or may have been) since the last orders poll began: fills should be looked for. */
  private sentSincePoll = false;
  /**
   * The venue's revisions (Venue.revision) before and after the latest run of placements taken whole from their
   * answers: each order resting with nothing executed, and the venue changed by that order alone (its revision
   * moved by one during the call, and each call began where the one before ended). What a poll would read of
   * them is what the journal holds already. Undefined: none.
   */
  private wholeFrom: number | undefined;
  private wholeTo: number | undefined;

  /** The venue unreadable when an instance must reconcile before sending: told per incident, not per intent. */
  private readonly reconcileFailing: Incident;

  constructor(
    private readonly p: EngineParts,
    private readonly feeMargin: Dec,
    /** Reconciles the symbol's unresolved rows against the venue before an instance sends again. */
    private readonly sync: OrderSync,
    /** The limits across a multi-pair file's pairs. */
    private readonly portfolios: Portfolios,
  ) {
    this.reconcileFailing = new Incident(p.logger, () => p.clock.now(), 'reconciliation before sending');
  }

  /** Whether an order was sent (or may have been) since the last orders poll began. */
  get placedSincePoll(): boolean {
    return this.sentSincePoll;
  }

  /** An orders poll begins: it looks for the fills of everything sent until now. */
  pollStarted(): void {
    this.sentSincePoll = false;
  }

  /**
   * Whether the venue went from revision `from` to `to` by placements alone whose answers the journal took
   * whole (nothing for a poll to learn). A venue without a revision never does: its polls always run. `from`
   * may lie inside the run (a complete poll read the venue after its first placements): what changed since is
   * the run's later placements.
   */
  answeredWhole(from: number | undefined, to: number): boolean {
    return (
      from !== undefined && this.wholeFrom !== undefined && this.wholeFrom <= from && from <= to && this.wholeTo === to
    );
  }

  /** Processes a strategy's intents in order, its BUYs past `entries`. The caller holds the engine's lock. */
  async process(r: InstanceRunner, intents: readonly Intent[], entries: EntryGate): Promise<void> {
    for (const intent of intents) {
      if (r.status !== 'running') {
        r.logger.debug({ intent: describeIntent(intent) }, `intent dropped: instance is ${r.status}`);
        continue;
      }
      r.countIntent();
      try {
        if (intent.kind === 'CANCEL') await this.cancel(r, intent);
        else await this.submit(r, intent, entries);
      } catch (err) {
        // The journal refused the write: the guard tells it once and refuses what follows until it recovers.
        if (isWriteFailure(err) && this.p.guard.journalProblem() !== undefined) continue;
        // A store failure or a bug: the order was either never sent or is PENDING in the journal, which the
        // next poll reconciles. Either way the daemon goes on.
        r.logger.error({ err, intent: describeIntent(intent) }, 'intent failed unexpectedly');
        this.p.store.events.record(this.p.clock.now(), r.name, 'engine-error', {
          intent: describeIntent(intent),
          error: err instanceof Error ? err.message : String(err),
        });
      }
    }
  }

  /**
   * An order the operator (or an engine-enforced exit) sends for an instance that may be paused: the same
   * path as a strategy's intent (brakes, reconcile first, rules, risk, balance, journal before send), whatever
   * the instance's status. The caller holds the engine's lock.
   */
  submitExit(r: InstanceRunner, intent: OrderIntent): Promise<SubmitOutcome> {
    r.countIntent();
    return this.submit(r, intent, undefined);
  }

  /**
   * An entry the operator forces for a running instance (Freqtrade's forcebuy): a strategy's BUY's path, its
   * protections included, but no state of a hook goes with it (the strategy's own hook may be running). The
   * caller holds the engine's lock.
   */
  submitForcedEntry(r: InstanceRunner, intent: OrderIntent, entries: EntryGate): Promise<SubmitOutcome> {
    r.countIntent();
    return this.submit(r, intent, entries, false);
  }

  private refused(r: InstanceRunner, summary: Record<string, unknown>, reason: string): { ok: false; reason: string } {
    // Refused because the journal refuses writes: the guard counts it and tells the count.
    r.refuse(summary, reason, this.p.guard.journalRefusal(reason));
    return { ok: false, reason };
  }

  /**
   * An order intent: a strategy's (past `entries`, the hook's state journaled with it), an exit's (`entries`
   * undefined: no state goes with it), or an operator's forced entry (past `entries`, `withState` false).
   */
  private async submit(
    r: InstanceRunner,
    intent: OrderIntent,
    entries: EntryGate | undefined,
    withState = entries !== undefined,
  ): Promise<SubmitOutcome> {
    const { journal, market, guard, clock, venue } = this.p;
    const summary = describeIntent(intent);
    const refuse = (reason: string) => this.refused(r, summary, reason);
    const block = guard.orderBlock(intent.side);
    if (block) return refuse(block);
    if (entries !== undefined && intent.side === 'BUY') {
      const protection = entries.entryBlock(r, clock.now());
      if (protection) return refuse(protection);
    }
    if (journal.unresolvedFor(r.name).length > 0) {
      try {
        await this.sync.poll(r.symbol, false);
        this.reconcileFailing.succeeded();
      } catch (err) {
        this.reconcileFailing.failed(err, undefined, { instance: r.name, symbol: r.symbol });
      }
      const waiting = journal.unresolvedFor(r.name);
      if (waiting.length > 0)
        return {
          ok: false,
          reason: refuse(`waiting for the outcome of order ${waiting.map((w) => w.localId).join(', ')} (not known yet)`)
            .reason,
          waiting: true,
        };
    }
    const rules = market.rules.get(r.symbol);
    if (!rules) return refuse(`no pair rules for ${r.symbol}`);
    const checked = checkOrder(intent, rules, market.lastPrice(r.symbol));
    if (!checked.ok) return refuse(checked.reason);
    const { order } = checked;

    const now = clock.now();
    const riskReason = this.riskReason(r, intent.side, order, now);
    if (riskReason) return refuse(riskReason);
    if (intent.side === 'BUY') {
      const portfolio = this.portfolios.entryProblem(r, order.baseQuantity, order.notional, rules.quoteAsset);
      if (portfolio) return refuse(portfolio);
    }
    const spend = this.spend(intent.side, order, rules.baseAsset, rules.quoteAsset);
    const free = market.free(spend.asset);
    if (free === undefined) return refuse(`no ${spend.asset} balance known (balances not loaded)`);
    if (free.lt(spend.amount))
      return refuse(`insufficient ${spend.asset}: order needs ${spend.amount.toFixed()}, free ${free.toFixed()}`);

    // The reconcile above awaited the venue: the kill switch, an authentication halt or a breaker trip may have
    // come in meanwhile. Nothing below awaits until the request is sent, so this check holds for the send.
    const late = guard.orderBlock(intent.side);
    if (late) return refuse(late);

    const { localId, seq } = r.nextLocalId();
    const { request } = order;
    const row = newOrderRow({
      localId,
      instance: r.name,
      seq,
      symbol: r.symbol,
      side: intent.side,
      type: intent.kind,
      price: request.price,
      stopPrice: request.stopPrice,
      limitPrice: request.limitPrice,
      quantity: request.quantity,
      quoteAmount: request.quoteOrderQty,
      tag: intent.tag,
      closes: intent.closes,
      status: 'PENDING',
      createdAt: now,
      sentAt: now,
    });
    // Journal before send: this commit is durable (synchronous=FULL) before the request exists. The state the
    // hook left goes in the same transaction: after a crash from here on, the strategy restarts knowing what
    // it decided along with this order, so it cannot decide it again. A state that cannot be saved pauses
    // the instance and nothing is sent.
    // An exit or a forced entry is the operator's (or the engine's), not the strategy's: no state of a hook goes with it.
    const journaled = !withState
      ? (journal.insert(row), true)
      : r.saveStateWith(() => {
          journal.insert(row);
          return true;
        });
    if (!journaled) return { ok: false, reason: 'the strategy state could not be saved: nothing was sent' };
    crashPoint('after-journal');
    journal.createSent(row.localId);
    let record: OrderRecord;
    const before = venue.revision;
    try {
      record = await guard.call(`create ${r.symbol}`, () => venue.createOrder(request));
    } catch (err) {
      journal.createAnswered(row.localId);
      this.failed(r, row, err, spend);
      return { ok: true, row: journal.get(row.localId) ?? row };
    }
    journal.createAnswered(row.localId);
    crashPoint('after-send');
    this.accepted(r, row, record, spend, before);
    return { ok: true, row: journal.get(row.localId) ?? row };
  }

  private riskReason(r: InstanceRunner, side: 'BUY' | 'SELL', order: CheckedOrder, now: number): string | undefined {
    // Kept by the journal's mirror as rows change: no pass over the open orders per intent.
    const exposure = this.p.journal.exposure(r.name);
    let openBuy = exposure.buy;
    let openSell = exposure.sell;
    const last = exposure.byQuote.length > 0 ? this.p.market.lastPrice(r.symbol) : undefined;
    for (const row of exposure.byQuote) {
      if (row.side === 'BUY') openBuy = openBuy.plus(remainingBase(row, last));
      else openSell = openSell.plus(remainingBase(row, last));
    }
    const openCount = exposure.count;
    const day = utcDay(now);
    const refusal = riskProblem({
      limits: r.limits,
      side,
      quantity: order.baseQuantity,
      notional: order.notional,
      position: r.position.quantity,
      openBuy,
      openSell,
      openCount,
      realisedToday: r.realisedOn(day),
      rules: this.p.market.rules.get(r.symbol),
    });
    if (refusal?.kind === 'daily-loss') r.dailyLossHalted(refusal.reason, day, now);
    return refusal?.reason;
  }

  /** What the order needs free: quote for a BUY (value plus a fee margin), base for a SELL. */
  private spend(
    side: 'BUY' | 'SELL',
    order: CheckedOrder,
    base: string,
    quote: string,
  ): { asset: string; amount: Dec } {
    if (side === 'BUY') return { asset: quote, amount: order.notional.mul(this.feeMargin.plus(1)) };
    return { asset: base, amount: order.baseQuantity };
  }

  private accepted(
    r: InstanceRunner,
    row: OrderRow,
    record: OrderRecord,
    spend: { asset: string; amount: Dec },
    before: number | undefined,
  ): void {
    const { journal, clock, market, store, venue } = this.p;
    const now = clock.now();
    const id = record.displayingId;
    const after = venue.revision;
    this.sentSincePoll = true;
    if (before !== undefined && after === before + 1 && record.status === 'NEW' && record.executedQty === 0) {
      if (this.wholeTo !== before) this.wholeFrom = before;
      this.wholeTo = after;
    }
    market.reserve(spend.asset, spend.amount);
    const clash = journal.byExchangeId(id);
    if (clash && clash.localId !== row.localId) {
      // Cannot be ours twice: leave it UNKNOWN for reconciliation rather than trust either row.
      const reason = `venue answered with exchange id ${id}, already journaled as ${clash.localId}`;
      journal.save({ ...row, status: 'UNKNOWN', rejectCode: 'E_DUPLICATE_ID', rejectReason: reason, updatedAt: now });
      r.logger.error(reason);
      store.events.record(now, r.name, 'order-unknown', { localId: row.localId, reason });
      return;
    }
    journal.save({
      ...row,
      ...this.sync.answers.outcome(row, record, false),
      exchangeId: id,
      matchMethod: 'response',
      updatedAt: now,
    });
    r.countPlaced();
    r.logger.info(
      {
        localId: row.localId,
        exchangeId: id,
        side: row.side,
        type: row.type,
        price: row.price,
        quantity: row.quantity,
      },
      'order placed',
    );
  }

  private failed(r: InstanceRunner, row: OrderRow, err: unknown, spend: { asset: string; amount: Dec }): void {
    const { journal, clock, market, store } = this.p;
    const now = clock.now();
    const outcome = createOutcome(err);
    const message = failureMessage(err);
    if (outcome === 'UNKNOWN') {
      this.sentSincePoll = true;
      // It may exist: count its funds as spent until a refresh says otherwise.
      market.reserve(spend.asset, spend.amount);
      const code = errorCode(err);
      journal.save({ ...row, status: 'UNKNOWN', rejectCode: code, rejectReason: message, updatedAt: now });
      r.logger.warn({ localId: row.localId, code }, `order outcome unknown, will reconcile: ${message}`);
      store.events.record(now, r.name, 'order-unknown', { localId: row.localId, code, message });
      return;
    }
    const code = failureCode(err);
    journal.save({ ...row, status: outcome, rejectCode: code, rejectReason: message, updatedAt: now });
    r.logger.warn(
      { localId: row.localId, code },
      `order ${outcome === 'REJECTED' ? 'rejected' : 'not sent'}: ${message}`,
    );
    store.events.record(now, r.name, outcome === 'REJECTED' ? 'order-rejected' : 'order-not-sent', {
      localId: row.localId,
      code,
      message,
    });
  }

  private async cancel(r: InstanceRunner, intent: CancelIntent): Promise<void> {
    const { journal, venue, guard } = this.p;
    const summary = describeIntent(intent);
    const row = journal.get(intent.localId);
    if (!row || row.instance !== r.name || row.external)
      return r.refuse(summary, `order ${intent.localId} is not an order of this instance`);
    if (!isActive(row.status)) return r.refuse(summary, `order ${row.localId} is already ${row.status}`);
    if (row.exchangeId === undefined)
      return r.refuse(summary, `order ${row.localId} has no exchange id yet (status ${row.status})`);
    if (venue.cancelOrder === undefined) return r.refuse(summary, 'this venue cannot cancel orders');
    if (guard.halted) return r.refuse(summary, guard.halted);
    await this.cancelOnVenue(row, r.logger);
  }

  /**
   * Sends the cancel of one journaled order that has an exchange id, and journals the venue's answer. A failure
   * (refused, e.g. already filled, or unknown) is logged and recorded; the next poll reads what really happened.
   * The caller holds the engine's lock and has checked the order is active.
   */
  async cancelOnVenue(row: OrderRow, logger: Logger): Promise<CancelResult> {
    const { journal, clock, venue, guard, store } = this.p;
    const exchangeId = row.exchangeId;
    const cancelOrder = venue.cancelOrder?.bind(venue);
    if (exchangeId === undefined || cancelOrder === undefined)
      return { ok: false, outcome: 'refused', code: 'E_NOT_CANCELLABLE', message: 'no exchange id or no cancel' };
    let record: OrderRecord;
    try {
      record = await guard.call(`cancel ${row.symbol}`, () => cancelOrder(row.symbol, exchangeId));
    } catch (err) {
      // Refused (e.g. already filled) or unknown: either way the next poll reads what really happened.
      const outcome = createOutcome(err) === 'UNKNOWN' ? 'unknown, resolved by the next poll' : 'refused';
      const message = failureMessage(err);
      const code = failureCode(err);
      logger.warn({ localId: row.localId, code: errorCode(err) }, `cancel ${outcome}: ${message}`);
      store.events.record(clock.now(), row.instance, 'cancel-failed', { localId: row.localId, outcome, code, message });
      this.sentSincePoll = true;
      return { ok: false, outcome, code, message };
    }
    this.sentSincePoll = true;
    const current = journal.get(row.localId);
    if (!current || !isActive(current.status)) return { ok: true, status: current?.status ?? record.status };
    const outcome = this.sync.answers.outcome(current, record, false);
    const { status } = outcome;
    journal.save({ ...current, ...outcome, updatedAt: clock.now() });
    logger.info({ localId: row.localId, exchangeId, status: record.status }, 'order cancelled');
    return { ok: true, status };
  }
}
