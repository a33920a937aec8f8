/**
 * The wall clock (live, paper on live prices): now() is the system's time. Its timers wait on monotonic time,
 * and a step of the system clock (an NTP correction, an operator's date command) is noticed at the next
 * wake-up (within a second): one-shot timers keep their remaining duration and cron schedules go on from the
 * new time, so a clock stepped back an hour never freezes a job for an hour, and one stepped forward skips
 * the matches it jumped over rather than running them all at once.
 */
import { performance } from 'node:perf_hooks';
import { PacedClock } from './paced-clock.js';

/** A difference between wall and monotonic time beyond this, between two wake-ups, is a step. */
export const STEP_TOLERANCE_MS = 500;

export interface WallSources {
  /** The system's time (epoch ms). */
  wall: () => number;
  /** Monotonic time (ms, any origin). */
  monotonic: () => number;
}

export class WallClock extends PacedClock {
  readonly pace = 1;
  readonly awaitsFirings = false;
  /** Steps of the system clock seen, and the last one (ms; negative: back). */
  steps = 0;
  lastStepMs: number | undefined;
  private lastWall: number;
  private lastMono: number;

  constructor(private readonly sources: WallSources = { wall: () => Date.now(), monotonic: () => performance.now() }) {
    super();
    this.lastWall = sources.wall();
    this.lastMono = sources.monotonic();
  }

  now(): number {
    return this.sources.wall();
  }

  private waiting = false;

  protected override arm(): void {
    // The step detector's reference is taken when a wait starts from idle: a step while nothing waited
    // moved no timer (each new one was set from the new time).
    if (!this.waiting) this.mark();
    super.arm();
    this.waiting = this.queue.earliest() !== undefined;
  }

  protected override beforeFiring(): void {
    const wall = this.sources.wall();
    const step = wall - this.lastWall - (this.sources.monotonic() - this.lastMono);
    if (Math.abs(step) > STEP_TOLERANCE_MS) {
      this.steps++;
      this.lastStepMs = step;
      this.queue.shiftOneShots(step);
      this.queue.rearmCrons(wall);
    }
    this.mark();
  }

  private mark(): void {
    this.lastWall = this.sources.wall();
    this.lastMono = this.sources.monotonic();
  }
}

/** The process's wall clock. */
export const wallClock = new WallClock();
