/**
 * The timers of one clock, in that clock's time: one-shot timers and cron schedules, fired in the order of
 * their due time; at equal times one-shot timers first (a recorded ticker due at a second is in the market
 * before the jobs of that second run), then cron schedules in the order they were made (market jobs, the
 * orders poll, the refresh: the daemon's order, which the backtest follows). Each clock decides when to look
 * (`takeDue`) and how a cron schedule goes on after a firing (`rearm`).
 */
import { ConfigError } from '../errors.js';
import type { Timer } from '../ports/clock.js';
import { CronSchedule } from './cron-schedule.js';

export interface TimerEntry {
  due: number;
  readonly seq: number;
  readonly fire: (due: number) => unknown;
  readonly cron: CronSchedule | undefined;
  cancelled: boolean;
}

/** A CronSchedule for a clock: an invalid expression is a configuration error. */
export function cronFor(expression: string): CronSchedule {
  try {
    return new CronSchedule(expression);
  } catch (err) {
    throw new ConfigError([err instanceof Error ? err.message : String(err)]);
  }
}

/** Lets a promise a timer's callback returned fail quietly: its owner reports its own errors. */
export function settle(result: unknown): Promise<void> | undefined {
  if (result instanceof Promise)
    return result.then(
      () => undefined,
      () => undefined,
    );
  return undefined;
}

export class TimerQueue {
  private entries: TimerEntry[] = [];
  private seq = 0;

  /** `changed` is told whenever the earliest due time may have moved (the clock re-arms its wake-up). */
  constructor(private readonly changed: () => void) {}

  add(due: number, fire: (due: number) => unknown, cron?: CronSchedule): Timer {
    const entry: TimerEntry = { due, seq: this.seq++, fire, cron, cancelled: false };
    this.entries.push(entry);
    this.changed();
    return {
      cancel: () => {
        if (entry.cancelled) return;
        entry.cancelled = true;
        this.entries = this.entries.filter((e) => e !== entry);
        this.changed();
      },
    };
  }

  /** A sleep as a timer: resolves when due, or at once when `signal` aborts. */
  sleep(due: number, signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        timer.cancel();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = this.add(due, done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  get size(): number {
    return this.entries.length;
  }

  /** The earliest due time, undefined when nothing waits. */
  earliest(): number | undefined {
    const first = this.first();
    return first?.due;
  }

  /** Removes and returns the first entry due at or before `time` (a cron entry is re-armed by the caller). */
  takeDue(time: number): TimerEntry | undefined {
    const first = this.first();
    if (first === undefined || first.due > time) return undefined;
    if (first.cron === undefined) {
      first.cancelled = true;
      this.entries = this.entries.filter((e) => e !== first);
    }
    return first;
  }

  /** Puts a cron entry at its next match strictly after `after`. */
  rearm(entry: TimerEntry, after: number): void {
    if (entry.cron === undefined || entry.cancelled) return;
    entry.due = entry.cron.next(after);
    this.changed();
  }

  /** Moves every one-shot timer by `delta` (a wall-clock step: their durations are kept). */
  shiftOneShots(delta: number): void {
    for (const e of this.entries) if (e.cron === undefined) e.due += delta;
  }

  /** Every cron entry at its next match strictly after `after` (a wall-clock step: they follow the new time). */
  rearmCrons(after: number): void {
    for (const e of this.entries) if (e.cron !== undefined) e.due = e.cron.next(after);
    this.changed();
  }

  private first(): TimerEntry | undefined {
    let best: TimerEntry | undefined;
    for (const e of this.entries) {
      if (
        best === undefined ||
        e.due < best.due ||
        (e.due === best.due && (e.cron === undefined ? 0 : 1) < (best.cron === undefined ? 0 : 1)) ||
        (e.due === best.due && (e.cron === undefined) === (best.cron === undefined) && e.seq < best.seq)
      )
        best = e;
    }
    return best;
  }
}
