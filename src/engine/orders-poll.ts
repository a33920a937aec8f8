/**
 * The orders poll (docs/architecture.md, the path of one order): every symbol with live journal rows read
 * through the order sync (open orders, history, unknown outcomes, fills recorded), the balances read again when
 * a fill changed them, the fills delivered to onFill, and the stops held on the exchange brought in line. It
 * also clears an authentication halt the clock caused, and after a write the journal refused it is the one way
 * back (its probe write, then a complete reconciliation). Under the engine's lock, but for the balance read
 * after fills: it runs outside it, so a slow one holds up no job (the market job, the exits, the next poll), and
 * the fills it follows are delivered (and the held stops brought in line) once it answered, under the lock
 * again. With `readApart` (the daemon) the poll does not wait for that: it ends when its own reads are done.
 */
import { BotError } from '../errors.js';
import type { EngineParts } from './engine-parts.js';
import type { DeclaredExits } from './exits/declared-exits.js';
import type { FillDelivery } from './fill-delivery.js';
import type { Instances } from './instances.js';
import type { Mutex } from './mutex.js';
import type { OrderManager } from './order-manager.js';
import type { OrderSync } from './order-sync.js';
import type { VenueReads } from './venue-reads.js';

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class OrdersPoll {
  /** The venue's revision counter at the last complete poll (a venue without one: undefined). */
  private polledRevision: number | undefined;
  private lastComplete = true;
  /** The balance read after fills and then their delivery, while it runs (one at a time). */
  private afterRead: Promise<void> | undefined;

  constructor(
    private readonly p: EngineParts,
    private readonly sync: OrderSync,
    private readonly orders: OrderManager,
    private readonly roster: Instances,
    private readonly reads: VenueReads,
    private readonly delivery: FillDelivery,
    private readonly exits: DeclaredExits,
    private readonly lock: Mutex,
    /** The poll ends before the balance read after fills (that read and the delivery go on beside the jobs). */
    private readonly readApart: boolean,
  ) {}

  /** The read after fills and their delivery, when one is under way (stop waits for it). */
  get settling(): Promise<void> | undefined {
    return this.afterRead;
  }

  /** Whether the last poll read every symbol it had to (false: the venue failed for one). */
  get complete(): boolean {
    return this.lastComplete;
  }

  /**
   * A poll, under the lock. When the venue has a revision counter that has not moved since the last complete
   * poll and nothing time-based is pending (nor a journal write failure to recover from), there is nothing to
   * learn: undefined at once (this runs on every tick of a backtest).
   */
  run(): Promise<void> | undefined {
    if (!this.idle()) return this.runNow();
    // Orders placed since the last poll whose answers said all: a poll would look for nothing more of them.
    if (this.orders.placedSincePoll) this.orders.pollStarted();
    return undefined;
  }

  /** A poll now would learn nothing and do nothing (run() would return undefined at once). */
  idle(): boolean {
    const revision = this.p.venue.revision;
    return (
      revision !== undefined &&
      // Unmoved with nothing sent, or moved only by placements the journal took whole from their answers.
      (revision === this.polledRevision
        ? !this.orders.placedSincePoll
        : this.orders.answeredWhole(this.polledRevision, revision)) &&
      !this.sync.hasPendingWork() &&
      !this.roster.deliveryPending() &&
      // A journal that refused a write recovers only through a poll (its probe write, then the reconciliation).
      !this.p.guard.journalWritesFailing
    );
  }

  /**
   * The orders poll reads only symbols with live journal rows: a traded symbol without any is read here (once
   * a refresh; one request for all of them), so orders another owner places there are seen too
   * (external-orders.ts). The caller holds the lock.
   */
  async idleSymbols(): Promise<void> {
    const { journal, logger } = this.p;
    const live = journal.symbols();
    const failed = (symbol: string | undefined, err: unknown) =>
      logger.debug({ err, symbol }, 'open orders of an idle symbol unavailable');
    try {
      await this.sync.pollIdle(
        [...this.roster.symbols].filter((s) => !live.has(s)),
        failed,
      );
    } catch (err) {
      failed(undefined, err);
    }
    this.sync.reportExternal(false);
  }

  /** Apart from run, which runs on every tick: an arrow function there would cost it an allocation. */
  private async runNow(): Promise<void> {
    const failure = await this.lock.run(() => this.locked());
    // Fills recorded (by this poll, or one before whose read has not answered): delivered after the read.
    if (this.reads.stale || this.afterRead !== undefined) {
      if (this.afterRead === undefined) {
        this.afterRead = this.readThenDeliver().finally(() => (this.afterRead = undefined));
        if (this.readApart)
          this.afterRead.catch((err: unknown) =>
            this.p.logger.error({ err }, 'fills not delivered after the balance read'),
          );
      }
      if (!this.readApart) await this.afterRead;
    }
    if (failure) {
      const { symbol, err } = failure;
      throw new BotError('E_POLL', `orders poll of ${symbol} failed: ${errorText(err)}`, {
        cause: err,
        context: { symbol },
      });
    }
  }

  /** The balances read again outside the lock, then the fills delivered and the held stops brought in line. */
  private async readThenDeliver(): Promise<void> {
    await this.reads.balancesIfChanged();
    await this.lock.run(() => this.deliver());
  }

  private async deliver(): Promise<void> {
    await this.delivery.deliverAll();
    if (this.lastComplete) await this.exits.polled(this.roster.all);
  }

  /** The poll's reads and writes under the lock; the first symbol it could not read. */
  private async locked(): Promise<{ symbol: string; err: unknown } | undefined> {
    const { venue, guard, journal, logger, store } = this.p;
    const revision = venue.revision;
    this.orders.pollStarted();
    guard.checkKillSwitch();
    if (guard.haltedByClock) {
      // A halt put down to the clock: once a signed read succeeds (the clock, or the server-time offset, is
      // right again) it clears itself; while it fails, the next poll asks again.
      try {
        await this.reads.clearAuthHalt();
      } catch (err) {
        logger.debug({ err }, 'authentication still failing');
      }
    }
    // After a write the journal refused, nothing is sent until a write succeeds and this poll has reconciled.
    const recovering = guard.journalWritesFailing;
    if (recovering) {
      try {
        store.probeWrite();
      } catch (err) {
        throw new BotError('E_POLL', `orders poll skipped: the journal still refuses writes (${errorText(err)})`, {
          cause: err,
        });
      }
    }
    // A failure is reported once by the job that runs this (the scheduler logs an incident, not each poll).
    let failure: { symbol: string; err: unknown } | undefined;
    const failed = (symbol: string, err: unknown) => {
      failure ??= { symbol, err };
      logger.debug({ err, symbol }, 'orders poll failed');
    };
    // One read of the open orders for every symbol with live rows (a request a pair would not fit the request
    // budget of a many-pair account); when it fails, none is polled this time.
    const symbols = [...journal.symbols()];
    try {
      await this.sync.pollMany(symbols, (symbol) => this.roster.symbols.has(symbol), failed);
    } catch (err) {
      failed(symbols.join(', '), err);
    }
    this.sync.reportExternal(false);
    const complete = failure === undefined;
    if (complete) this.polledRevision = revision;
    if (recovering && complete) guard.journalRecovered();
    this.lastComplete = complete;
    if (!this.reads.stale && this.afterRead === undefined) await this.deliver();
    return failure;
  }
}
