/**
 * The replay clock (paper on recordings): the recording's time, moving at `pace` times the wall clock's
 * monotonic time from where it was anchored. The replay feed anchors it at the first ticker it feeds; until
 * then it tells the wall clock's time at the same pace. Cron schedules fire as the replay's time crosses
 * them, sub-second at high speeds (no one-second floor); a looping replay's times go on increasing, and so
 * does this clock: it never goes back.
 */
import { performance } from 'node:perf_hooks';
import { PacedClock } from './paced-clock.js';

export class ReplayClock extends PacedClock {
  private anchorTime: number;
  private anchorMono: number;
  anchored = false;

  constructor(
    readonly pace: number,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    super();
    this.anchorTime = Date.now();
    this.anchorMono = monotonic();
  }

  now(): number {
    return this.anchorTime + (this.monotonic() - this.anchorMono) * this.pace;
  }

  /**
   * From now on the clock tells `time` and goes on from there (never backwards: a time before now is ignored
   * once anchored). Timers set before keep their remaining duration; cron schedules go on from the new time.
   */
  anchor(time: number): void {
    const before = this.now();
    if (this.anchored && time <= before) return;
    this.anchorTime = time;
    this.anchorMono = this.monotonic();
    this.anchored = true;
    this.queue.shiftOneShots(time - before);
    this.queue.rearmCrons(time);
  }
}
