/**
 * The replay clock (paper on recordings): the recording's time, moving at `pace` times the wall clock's
 * monotonic time from where it was anchored. The replay feed anchors it at the first ticker it feeds; until
 * then it tells the wall clock's time at the same pace. Cron schedules fire as the replay's time crosses
 * them, sub-second at high speeds (no one-second floor); a looping replay's times go on increasing, and so
 * does this clock: it never goes back.
 *
 * The pace is a ceiling, not a promise: the clock never passes a timer that is due before it has fired, and
 * while the work a firing returned (a market job, the feed putting a ticker in) runs, its time stays at that
 * firing's due time. So nothing that falls due is skipped or reordered however slow the daemon is (every
 * match of a cron schedule fires, in order with the tickers, as a backtest's virtual clock fires them), and
 * each job sees the recording's time it was due at. Behind, the clock then goes on as fast as the work allows
 * until it is back on the pace's schedule; `lagMs()` is how far behind it is.
 */
import { performance } from 'node:perf_hooks';
import { PacedClock } from './paced-clock.js';
import { settle } from './timer-queue.js';

/** Longest wall time the clock waits for one firing's work (a hook or a request is bounded well within it). */
export const MAX_HOLD_MS = 30_000;

export class ReplayClock extends PacedClock {
  private anchorTime: number;
  private anchorMono: number;
  readonly awaitsFirings = true;
  anchored = false;
  /** The time it stands at while paused (pause, resume). */
  private stoppedAt: number | undefined;
  /** The due time of the firing whose work is running (the clock's time meanwhile). */
  private held: number | undefined;
  private lagWatch: ((lagMs: number) => void) | undefined;

  constructor(
    readonly pace: number,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    super();
    this.anchorTime = Date.now();
    this.anchorMono = monotonic();
  }

  /** Where the pace puts the recording's time now. */
  private paced(): number {
    return this.stoppedAt ?? this.anchorTime + (this.monotonic() - this.anchorMono) * this.pace;
  }

  /**
   * Stops the recording's time where it is until `resume` (nothing fires meanwhile): the daemon's start, so its
   * jobs begin at the recording's first ticker, as a backtest's do, however long reading the venue took.
   */
  pause(): void {
    this.stoppedAt ??= this.paced();
  }

  /** The recording's time goes on at the pace from where it stood. */
  resume(): void {
    if (this.stoppedAt === undefined) return;
    this.anchorTime = this.stoppedAt;
    this.anchorMono = this.monotonic();
    this.stoppedAt = undefined;
    this.arm();
  }

  protected override arm(): void {
    if (this.stoppedAt === undefined) super.arm();
  }

  now(): number {
    return Math.min(this.paced(), this.held ?? this.queue.earliest() ?? Infinity);
  }

  /** How far the recording's time is behind where the pace puts it (ms of recorded time; 0 when on time). */
  lagMs(): number {
    return Math.max(0, this.paced() - this.now());
  }

  /** `watch` is told the lag after every firing (the daemon's warning and its read model). */
  watchLag(watch: (lagMs: number) => void): void {
    this.lagWatch = watch;
  }

  /**
   * From now on the clock tells `time` and goes on from there (never backwards: a time before now is ignored
   * once anchored). Timers set before keep their remaining duration; cron schedules go on from the new time.
   */
  anchor(time: number): void {
    const before = this.paced();
    if (this.anchored && time <= before) return;
    this.anchorTime = time;
    this.anchorMono = this.monotonic();
    if (this.stoppedAt !== undefined) this.stoppedAt = time;
    this.anchored = true;
    this.queue.shiftOneShots(time - before);
    this.queue.rearmCrons(time);
  }

  /** Every timer due, one at a time: each cron match in turn (none skipped), each firing's work waited for. */
  protected override async fireDue(): Promise<void> {
    for (let e = this.queue.takeDue(this.now()); e !== undefined; e = this.queue.takeDue(this.now())) {
      const due = e.due;
      if (e.cron !== undefined) this.queue.rearm(e, due);
      this.held = due;
      try {
        const work = settle(e.fire(due));
        if (work !== undefined) await bounded(work, MAX_HOLD_MS);
      } finally {
        this.held = undefined;
      }
      this.lagWatch?.(this.lagMs());
    }
  }
}

/** Waits for `work`, at most `ms` of the wall. */
async function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work, limit]);
  } finally {
    clearTimeout(timer);
  }
}
