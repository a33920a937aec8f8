import type { Clock } from '../ports/clock.js';

/** The replay's clock: now() is the time of the recorded tick being processed, set by the replay loop. */
export class VirtualClock implements Clock {
  time: number;

  constructor(time: number) {
    this.time = time;
  }

  now(): number {
    return this.time;
  }
}
