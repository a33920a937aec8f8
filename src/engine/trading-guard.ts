/**
 * The engine-wide brakes, checked before every order: the journal (its file gone or replaced: trading stops
 * for good in this process; a write it refused: trading stops until a write succeeds and a poll has
 * reconciled), authentication failure (trading stops until the operator acts), the kill switch, the circuit
 * breaker fed by every venue call's outcome, and stop-buy (new BUY orders only: exits and protective SELLs
 * still go out). Each change of state is logged and recorded once; stop-buy is read back from its last event,
 * so it holds across a restart.
 */
import { INCIDENT_REPORT_MS } from '../ops/incident.js';
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { EventLog } from '../store/events.js';
import type { Store } from '../store/store.js';
import { CircuitBreaker, type CircuitBreakerOptions, KillSwitch } from './risk.js';
import { errorCode } from '../errors.js';
import { failureMessage, meaningOf, VenueError } from '../ports/venue-errors.js';

export class TradingGuard {
  readonly killSwitch: KillSwitch;
  private readonly breaker: CircuitBreaker;
  /** Set on an authentication failure: no order is sent until it is cleared. */
  halted: string | undefined;
  /** The halt was put down to the clock (the venue said how far off): a signed read that succeeds clears it. */
  haltedByClock = false;
  /** No new BUY orders (the operator's stop-buy); persisted as `stop-buy` events. */
  private stopBuyOn: boolean;
  /** The journal's file was deleted or replaced: nothing it records survives, so nothing is sent again. */
  journalLost: string | undefined;
  /** A journal write failed: no order is sent until writes succeed and a complete poll has reconciled. */
  private journalFailing: { reason: string; since: number; refused: number; toldAt: number } | undefined;
  /** The store's write failures already seen. */
  private writeFailuresSeen = 0;
  private readonly events: EventLog;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly store: Pick<Store, 'events' | 'fileProblem' | 'writeFailures' | 'writeFailure'>,
    killSwitchFile: string | undefined,
    breaker: CircuitBreakerOptions,
  ) {
    this.events = store.events;
    this.killSwitch = new KillSwitch(killSwitchFile);
    this.breaker = new CircuitBreaker(breaker);
    const [last] = this.events.list({ kinds: ['stop-buy'], limit: 1 });
    this.stopBuyOn = last?.data.on === true;
  }

  get stopBuy(): boolean {
    return this.stopBuyOn;
  }

  /** Turns stop-buy on or off; a change is logged and recorded. Returns whether it changed. */
  setStopBuy(on: boolean, source: string): boolean {
    if (on === this.stopBuyOn) return false;
    this.stopBuyOn = on;
    this.logger.warn(`stop-buy ${on ? 'on: no new BUY orders (exits still go out)' : 'off: BUY orders allowed again'}`);
    this.events.record(this.clock.now(), undefined, 'stop-buy', { on, source });
    return true;
  }

  /**
   * Why the journal cannot be trusted now, or undefined: its file gone or replaced (checked now, recorded and
   * notified once), or a write it refused since the last reconciliation.
   */
  journalProblem(): string | undefined {
    if (this.journalLost === undefined) {
      const lost = this.store.fileProblem();
      if (lost !== undefined) {
        this.journalLost = `trading stopped: ${lost}; nothing recorded from now on would survive a restart`;
        this.logger.error(
          `${this.journalLost}. Stop the bot, restore the database (or start it afresh knowing the orders it ` +
            'placed are not in the new one), then start it again.',
        );
        this.events.record(this.clock.now(), undefined, 'journal-lost', { reason: lost });
      }
    }
    if (this.journalLost !== undefined) return this.journalLost;
    const failures = this.store.writeFailures;
    if (failures !== this.writeFailuresSeen) {
      this.writeFailuresSeen = failures;
      if (this.journalFailing === undefined) {
        const cause = this.store.writeFailure?.message ?? 'unknown error';
        const now = this.clock.now();
        this.journalFailing = {
          reason: `journal write failed (${cause}): no order is sent until a write succeeds and orders are reconciled`,
          since: now,
          refused: 0,
          toldAt: now,
        };
        this.logger.error(
          { code: (this.store.writeFailure as { code?: string } | undefined)?.code },
          this.journalFailing.reason,
        );
      }
    }
    return this.journalFailing?.reason;
  }

  /**
   * An order refused for `reason`: when it is the journal's refused writes, counted here and told as a count at
   * most once a minute (the incident is one line when it starts, a count while it lasts, one when it ends:
   * ops/incident.ts's shape), and true: the caller need not tell it. False for any other reason.
   */
  journalRefusal(reason: string): boolean {
    const failing = this.journalFailing;
    if (failing === undefined || failing.reason !== reason) return false;
    failing.refused++;
    const now = this.clock.now();
    if (now - failing.toldAt >= INCIDENT_REPORT_MS) {
      failing.toldAt = now;
      this.logger.warn(
        { refused: failing.refused },
        `journal writes still failing: ${failing.refused} order(s) refused over ${Math.round((now - failing.since) / 1000)} s`,
      );
    }
    return true;
  }

  /** A write failure is being waited out (the orders poll probes and reconciles before clearing it). */
  get journalWritesFailing(): boolean {
    this.journalProblem();
    return this.journalFailing !== undefined;
  }

  /**
   * The orders poll saw writes succeed and reconciled every symbol with no write refused meanwhile: orders
   * may go again. Logged and recorded once per incident.
   */
  journalRecovered(): void {
    const failing = this.journalFailing;
    if (failing === undefined || this.store.writeFailures !== this.writeFailuresSeen) return;
    this.journalFailing = undefined;
    const now = this.clock.now();
    this.logger.warn(
      { refused: failing.refused },
      `journal writes succeed again after ${Math.round((now - failing.since) / 1000)} s (${failing.refused} order(s) refused meanwhile); orders reconciled, trading resumes`,
    );
    this.events.record(now, undefined, 'journal-recovered', { since: failing.since, reason: failing.reason });
  }

  /** Runs one venue call and feeds its outcome to the breaker; errors are rethrown for the caller to classify. */
  async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      this.failed(what, err);
      throw err;
    }
    this.succeeded();
    return result;
  }

  /** Why no new order of this side may be sent now, or undefined when it may go. */
  orderBlock(side: 'BUY' | 'SELL'): string | undefined {
    const journal = this.journalProblem();
    if (journal !== undefined) return journal;
    const kill = this.checkKillSwitch();
    if (this.halted) return this.halted;
    if (kill) return `${this.killSwitch.describe()}: no new orders`;
    const until = this.breaker.blockedUntil(this.clock.now());
    if (until !== undefined)
      return `circuit breaker open after repeated venue errors, until ${new Date(until).toISOString()}`;
    if (side === 'BUY' && this.stopBuyOn) return 'stop-buy is on: no new BUY orders';
    return undefined;
  }

  /** The end of the circuit breaker's pause while it is open. */
  breakerOpenUntil(): number | undefined {
    return this.breaker.blockedUntil(this.clock.now());
  }

  /** Lifts an authentication halt (the caller has just seen a signed read succeed); recorded once. */
  clearHalt(): boolean {
    if (this.halted === undefined) return false;
    this.halted = undefined;
    this.haltedByClock = false;
    this.logger.warn('authentication halt cleared: a signed read succeeded, orders allowed again');
    this.events.record(this.clock.now(), undefined, 'auth-cleared', {});
    return true;
  }

  /** Polls the kill switch, recording a change; true while it is on. */
  checkKillSwitch(): boolean {
    const { on, changed } = this.killSwitch.poll();
    if (changed) {
      const what = on ? `on (${this.killSwitch.describe()}): no new orders` : 'off: orders allowed again';
      this.logger.warn(`kill switch ${what}`);
      this.events.record(this.clock.now(), undefined, 'kill-switch', { on });
    }
    return on;
  }

  private succeeded(): void {
    const change = this.breaker.onSuccess(this.clock.now());
    if (change?.kind === 'closed') {
      this.logger.info('circuit breaker closed: venue answering again, trading resumes');
      this.events.record(this.clock.now(), undefined, 'circuit-breaker', { state: 'closed' });
    }
  }

  private failed(what: string, err: unknown): void {
    const info = { code: errorCode(err), message: failureMessage(err) };
    const now = this.clock.now();
    if (meaningOf(err) === 'authentication') {
      if (!this.halted) {
        this.halted = `trading stopped: authentication failed on ${what} (${info.message})`;
        this.haltedByClock = err instanceof VenueError && err.clockSkewMs !== undefined;
        const remedy = this.haltedByClock
          ? 'It clears itself once a signed read succeeds (each orders poll tries one).'
          : 'Fix the API key, secret or clock, then clear the halt (kill -USR2 <pid>, or POST /api/v1/halt/clear) or restart the bot.';
        this.logger.error({ code: info.code }, `${this.halted}. ${remedy}`);
        this.events.record(now, undefined, 'auth-failed', { call: what, code: info.code, message: info.message });
      }
      return;
    }
    const change = this.breaker.onFailure(now);
    if (change?.kind === 'tripped') {
      this.logger.warn(
        { errors: change.errors, trips: change.trips, code: info.code },
        `circuit breaker open: ${change.errors} consecutive venue errors (last on ${what}: ${info.message}); ` +
          `no new orders until ${new Date(change.until).toISOString()}`,
      );
      this.events.record(now, undefined, 'circuit-breaker', {
        state: 'open',
        until: change.until,
        trips: change.trips,
        lastError: { call: what, code: info.code, message: info.message },
      });
    }
  }
}
