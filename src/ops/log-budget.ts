/**
 * A bound on how many lines one noisy source of log lines (requests nobody authenticated, say) may write per
 * window: the first `linesPerWindow` are written, the rest only counted, and the count is written as one
 * line when the window is over (at the next line asked for, so an idle source writes nothing at all). Bounded
 * memory too: a counter, never a list.
 */
import type { Logger } from './logger.js';

export interface LogBudgetOptions {
  linesPerWindow: number;
  windowMs: number;
  /** What the suppressed lines were about, for the summary line (`requests without authentication`). */
  what: string;
}

export class LogBudget {
  private windowStart = Number.NEGATIVE_INFINITY;
  private written = 0;
  private suppressed = 0;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly options: LogBudgetOptions,
  ) {}

  /** Runs `write` (which writes one line to the logger) if the window has room left; counts it otherwise. */
  line(write: (logger: Logger) => void): void {
    const now = this.now();
    const { windowMs, linesPerWindow, what } = this.options;
    if (now - this.windowStart >= windowMs || now < this.windowStart) {
      if (this.suppressed > 0)
        this.logger.warn(
          { suppressed: this.suppressed },
          `${this.suppressed} more log lines about ${what} were not written in the last ${Math.round(windowMs / 1000)} s`,
        );
      this.windowStart = now;
      this.written = 0;
      this.suppressed = 0;
    }
    if (this.written >= linesPerWindow) {
      this.suppressed++;
      return;
    }
    this.written++;
    write(this.logger);
  }
}
