/**
 * One channel's side of the notifier: a bounded queue drained in the background. Notices wait up to the
 * group window after the first of a burst, then go out together as one message; messages leave no faster
 * than the channel's rate limit, in order; a failed send is retried with a growing backoff (or after the
 * receiver's Retry-After) for as long as `retryForMs` from its first try, so a receiver that is down for
 * minutes still gets that window's messages; only then is it dropped. A full queue drops its oldest notices.
 * An outage is logged once when it starts and once when the channel delivers again (with what was dropped);
 * every sent or dropped message is reported to `record`, which journals it. What a stop leaves unsent is not
 * recorded, so the next start sends it (at least once). Nothing here can block the caller of `push` or throw
 * at it.
 */
import type { Logger } from '../ops/logger.js';
import { RateLimiter, type RateLimitOptions } from '../ops/rate-limiter.js';
import { type Level, type Notice, levelOf, levelRank } from './event-kinds.js';
import { DeliveryError } from './http-post.js';
import { composeMessage, type Mode, type OutgoingMessage } from './message.js';
import type { Timers } from '../ports/clock.js';
import type { Transport } from './transport.js';

export interface ChannelOptions {
  /** Kinds this channel gets; 'all' for every kind. */
  kinds: ReadonlySet<string> | 'all';
  minLevel: Level;
  /** How long the first notice of a burst waits for others to join it. */
  groupMs: number;
  /** Notices queued at most; beyond it the oldest are dropped. */
  capacity: number;
  /** Notices in one message at most (the rest go in the next). */
  maxPerMessage: number;
  /** How long after its first try a message is retried before it is dropped. */
  retryForMs: number;
  backoff: { baseMs: number; maxMs: number };
  rate: RateLimitOptions;
  /**
   * Every row as recorded (a script's webhook). Otherwise (a person's chat) an operator's action is one line: its
   * `operator` row, not what the action recorded on the way (the pause of an exit, the kill switch's own event),
   * and an action that found things already as asked (a repeat) is not told (Notifier.acting).
   */
  everyRow?: boolean;
}

export type Outcome =
  | { sent: true; channel: string; message: OutgoingMessage; attempts: number }
  | { sent: false; channel: string; notices: readonly Notice[]; attempts: number; reason: string };

interface Queued {
  notice: Notice;
  at: number;
}

/** A Retry-After beyond this is not waited for: the message is tried again then, or dropped. */
const MAX_RETRY_AFTER_MS = 300_000;

export class ChannelQueue {
  readonly name: string;
  readonly limiter: RateLimiter;
  private readonly queue: Queued[] = [];
  private wake: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private stopping = false;
  /** Aborts the group wait: at stop, what is queued goes at once. */
  private readonly flushNow = new AbortController();
  /** Aborts sends and waits: the stop's deadline passed. */
  private readonly giveUp = new AbortController();
  /** Since when sends have been failing (undefined while they succeed): the outage was logged then. */
  private failingSince: number | undefined;
  /** Notices dropped since the last delivery. */
  private droppedInOutage = 0;

  /** See ChannelOptions.everyRow. */
  get everyRow(): boolean {
    return this.options.everyRow === true;
  }

  constructor(
    private readonly transport: Transport,
    private readonly options: ChannelOptions,
    private readonly deps: {
      mode: Mode;
      timers: Timers;
      logger: Logger;
      redact: (text: string) => string;
      record: (outcome: Outcome) => void;
    },
  ) {
    this.name = transport.name;
    this.limiter = new RateLimiter(
      options.rate,
      () => deps.timers.now(),
      // Cut short by the stop's deadline, the sleep rejects (the clock's sleep resolves on an abort): the
      // limiter would take a resolved sleep for time passed and sleep again at once, for ever on a frozen clock.
      (ms) => deps.timers.sleep(ms, this.giveUp.signal).then(() => this.giveUp.signal.throwIfAborted()),
    );
  }

  /** Whether this channel reports the notice (its kind and level). */
  accepts(notice: Notice): boolean {
    const { kinds, minLevel } = this.options;
    return (kinds === 'all' || kinds.has(notice.kind)) && levelRank(levelOf(notice)) >= levelRank(minLevel);
  }

  /** Queues the notice (when accepted); never waits, never throws. */
  push(notice: Notice): void {
    if (this.stopping || !this.accepts(notice)) return;
    this.queue.push({ notice, at: this.deps.timers.now() });
    if (this.queue.length > this.options.capacity) {
      const over = this.queue.splice(0, this.queue.length - this.options.capacity);
      this.drop(
        over.map((q) => q.notice),
        0,
        `queue full (${this.options.capacity} notifications waiting)`,
      );
    }
    this.wake?.();
  }

  /** Notices waiting (not counting a message being sent). */
  get waiting(): number {
    return this.queue.length;
  }

  start(): void {
    this.running ??= this.run().catch((err: unknown) =>
      this.deps.logger.error({ err, channel: this.name }, `${this.name}: notification queue failed`),
    );
  }

  /**
   * Sends what is queued without waiting for the group window, for at most `deadlineMs`. What is left is not
   * recorded as handled: the next start reads it again and sends it.
   */
  async stop(deadlineMs: number): Promise<void> {
    this.stopping = true;
    this.flushNow.abort();
    this.wake?.();
    const deadline = new AbortController();
    const timer = this.deps.timers.sleep(deadlineMs, deadline.signal).then(() => this.giveUp.abort());
    await (this.running ?? Promise.resolve());
    deadline.abort();
    await timer;
    const left = this.queue.splice(0).length + this.abandoned;
    if (left > 0)
      this.deps.logger.warn(
        { channel: this.name, left },
        `${this.name}: ${left} notification(s) not sent before the stop; the next start sends them`,
      );
  }

  /** Notices of a message whose sending the stop cut short. */
  private abandoned = 0;

  private async run(): Promise<void> {
    const { timers } = this.deps;
    while (!this.giveUp.signal.aborted) {
      const first = this.queue[0];
      if (first === undefined) {
        if (this.stopping) return;
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const wait = first.at + this.options.groupMs - timers.now();
      if (wait > 0 && !this.flushNow.signal.aborted) {
        await timers.sleep(wait, this.flushNow.signal);
        continue;
      }
      try {
        await this.limiter.acquire();
      } catch (err) {
        if (this.giveUp.signal.aborted) return;
        throw err;
      }
      if (this.giveUp.signal.aborted) return;
      const batch = this.queue.splice(0, this.options.maxPerMessage).map((q) => q.notice);
      if (batch.length > 0) await this.deliver(batch);
    }
  }

  private async deliver(notices: Notice[]): Promise<void> {
    const { mode, timers, logger, redact } = this.deps;
    const message = composeMessage(notices, mode, this.transport.maxLength, redact);
    const firstTry = timers.now();
    for (let attempt = 1; ; attempt++) {
      try {
        await this.transport.send(message, this.giveUp.signal);
        this.delivered(message, attempt);
        return;
      } catch (err) {
        if (this.giveUp.signal.aborted) {
          this.abandoned += notices.length;
          return;
        }
        const e = err instanceof DeliveryError ? err : new DeliveryError(`${this.name}: ${String(err)}`);
        const reason = redact(e.message);
        const { baseMs, maxMs } = this.options.backoff;
        const delay = Math.min(e.retryAfterMs ?? Math.min(maxMs, baseMs * 2 ** (attempt - 1)), MAX_RETRY_AFTER_MS);
        if (e.permanent || timers.now() + delay - firstTry > this.options.retryForMs) {
          this.drop(notices, attempt, reason);
          return;
        }
        this.failing(reason);
        logger.debug({ channel: this.name, attempt, retryInMs: delay }, `${reason}; retrying`);
        await timers.sleep(delay, this.giveUp.signal);
        if (this.giveUp.signal.aborted) {
          this.abandoned += notices.length;
          return;
        }
      }
    }
  }

  /** The first failure of an outage is logged; the rest of it is not (the end is). */
  private failing(reason: string): void {
    if (this.failingSince !== undefined) return;
    this.failingSince = this.deps.timers.now();
    const minutes = Math.round(this.options.retryForMs / 60_000);
    this.deps.logger.warn(
      { channel: this.name },
      `${this.name}: delivery failing (${reason}); retrying each message with backoff for up to ${minutes} min, in order`,
    );
  }

  private delivered(message: OutgoingMessage, attempts: number): void {
    if (this.failingSince !== undefined || this.droppedInOutage > 0) {
      const since = this.failingSince === undefined ? 0 : this.deps.timers.now() - this.failingSince;
      this.deps.logger.info(
        { channel: this.name, dropped: this.droppedInOutage, outageMs: since },
        `${this.name}: delivering notifications again after ${Math.round(since / 1000)} s (${this.droppedInOutage} dropped meanwhile)`,
      );
      this.failingSince = undefined;
      this.droppedInOutage = 0;
    }
    this.safeRecord({ sent: true, channel: this.name, message, attempts });
  }

  private drop(notices: Notice[], attempts: number, reason: string): void {
    if (this.droppedInOutage === 0)
      this.deps.logger.warn(
        { channel: this.name, attempts },
        `${this.name}: dropping notifications (${reason}); further drops are counted until it delivers again`,
      );
    this.droppedInOutage += notices.length;
    this.safeRecord({ sent: false, channel: this.name, notices, attempts, reason });
  }

  private safeRecord(outcome: Outcome): void {
    try {
      this.deps.record(outcome);
    } catch (err) {
      this.deps.logger.error({ err, channel: this.name }, `${this.name}: recording a notification failed`);
    }
  }
}
