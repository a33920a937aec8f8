/**
 * A clock whose time moves by itself at a pace of the wall clock's (the wall clock, the replay clock): its
 * timers wait on the process's monotonic timers (setTimeout), at most MAX_WAIT_MS at a time, so a change of
 * pace or a step of the wall clock is noticed within a second. At a wake-up every timer due fires in order
 * (fireDue): on the wall clock, cron matches crossed together fire once (a late clock skips, it does not queue);
 * the replay clock waits for each instead (replay-clock.ts).
 */
import type { Clock, Timer } from '../ports/clock.js';
import { cronFor, settle, TimerQueue } from './timer-queue.js';

/** Longest single wait on a wall timer. */
export const MAX_WAIT_MS = 1_000;

export abstract class PacedClock implements Clock {
  protected readonly queue = new TimerQueue(() => this.arm());
  private handle: NodeJS.Timeout | undefined;
  private firing = false;

  abstract now(): number;
  abstract readonly pace: number;
  abstract readonly awaitsFirings: boolean;

  /** Runs at each wake-up before anything fires (the wall clock looks for a step here). */
  protected beforeFiring(): void {}

  setTimer(fire: () => unknown, ms: number): Timer {
    return this.queue.add(this.now() + Math.max(0, ms), fire);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.queue.sleep(this.now() + Math.max(0, ms), signal);
  }

  cron(expression: string, fire: (due: number) => unknown): Timer {
    const schedule = cronFor(expression);
    return this.queue.add(schedule.next(this.now()), fire, schedule);
  }

  /** Arms the wall timer for the earliest due time (none while nothing waits: an idle clock holds no timer). */
  protected arm(): void {
    if (this.firing) return;
    clearTimeout(this.handle);
    this.handle = undefined;
    const due = this.queue.earliest();
    if (due === undefined || due === Infinity) return;
    const wait = Math.min(Math.max(0, (due - this.now()) / this.pace), MAX_WAIT_MS);
    this.handle = setTimeout(() => this.wake(), wait);
  }

  /** Fires every timer due, in order; a promise when it goes on after some of their work settled. */
  protected fireDue(): Promise<void> | undefined {
    const now = this.now();
    for (let e = this.queue.takeDue(now); e !== undefined; e = this.queue.takeDue(now)) {
      // The match it fires for (rearm moves the entry on to its next one).
      const due = e.due;
      if (e.cron !== undefined) this.queue.rearm(e, Math.max(due, now));
      void settle(e.fire(due));
    }
    return undefined;
  }

  private wake(): void {
    this.handle = undefined;
    this.firing = true;
    const done = () => {
      this.firing = false;
      this.arm();
    };
    let pending: Promise<void> | undefined;
    try {
      this.beforeFiring();
      pending = this.fireDue();
    } finally {
      if (pending === undefined) done();
    }
    void pending?.finally(done);
  }
}
