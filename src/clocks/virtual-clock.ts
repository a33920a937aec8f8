/**
 * The virtual clock (backtests, and tests that drive a daemon): time moves only when its driver moves it.
 * A backtest's replay loop sets `time` directly (no timer fires); `advanceTo` moves it through every timer
 * due on the way, each at its own time, every cron match once, waiting for what each firing returns and for
 * the event loop to settle before the next: the same steps in the same order on every run.
 */
import { setImmediate as turn } from 'node:timers/promises';
import type { Clock, Timer } from '../ports/clock.js';
import { cronFor, settle, TimerQueue } from './timer-queue.js';

export class VirtualClock implements Clock {
  /**
   * Epoch ms. A number from the start, not a field left undefined until the constructor sets it: V8 then keeps
   * it as an unboxed double written in place, where a field that first held undefined takes a new heap number
   * at every write, and a backtest writes it at every tick and job (a third of what an idle replay allocated).
   */
  time = Number.NaN;
  readonly pace = undefined;
  readonly awaitsFirings = true;
  private readonly queue = new TimerQueue(() => undefined);

  constructor(time: number) {
    this.time = time;
  }

  now(): number {
    return this.time;
  }

  setTimer(fire: () => unknown, ms: number): Timer {
    return this.queue.add(this.time + Math.max(0, ms), fire);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.queue.sleep(this.time + Math.max(0, ms), signal);
  }

  cron(expression: string, fire: (due: number) => unknown): Timer {
    const schedule = cronFor(expression);
    return this.queue.add(schedule.next(this.time), fire, schedule);
  }

  /** When the next timer is due (undefined: none). */
  nextDue(): number | undefined {
    return this.queue.earliest();
  }

  /** Moves time to `to` (never back), firing every timer due on the way in order, each awaited. */
  async advanceTo(to: number): Promise<void> {
    for (let e = this.queue.takeDue(to); e !== undefined; e = this.queue.takeDue(to)) {
      if (e.due > this.time) this.time = e.due;
      // The match it fires for: rearm moves the entry on to its next one.
      const due = e.due;
      if (e.cron !== undefined) this.queue.rearm(e, due);
      const pending = settle(e.fire(due));
      if (pending) await pending;
      await turn();
    }
    if (to > this.time) this.time = to;
  }

  /** Moves time by `ms`, as advanceTo. */
  advanceBy(ms: number): Promise<void> {
    return this.advanceTo(this.time + ms);
  }
}
