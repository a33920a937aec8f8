/**
 * The Scheduler port: named jobs on cron expressions (seconds field allowed), fired in a Clock's time
 * (app/clock-scheduler.ts); a backtest needs none (its replay loop calls the engine's jobs). Implementations
 * guarantee that one job never overlaps itself and that a slow or failing job delays only itself.
 */
export interface JobStats {
  name: string;
  cron: string;
  runs: number;
  failures: number;
  /** Firings skipped because the previous run of the same job was still going. */
  overlapsSkipped: number;
  /** Firings the timer woke up too late for (beyond the missed-execution tolerance). */
  missed: number;
  running: boolean;
  /** When the job was scheduled (ms): its age before a first success counts from here. */
  scheduledAt: number;
  /** Time between two firings of the expression (ms), when the implementation knows it. */
  intervalMs: number | undefined;
  /** Start of the last run (ms), and how late it started after the time it was scheduled for. */
  lastStartedAt: number | undefined;
  lastLagMs: number | undefined;
  /** End of the last run that finished without an error (ms): what readiness checks. */
  lastSucceededAt: number | undefined;
}

export interface Scheduler {
  /** Starts firing `run` on `cron`. Throws on an invalid expression or a name already scheduled. */
  schedule(name: string, cron: string, run: () => Promise<void>): void;
  stats(): JobStats[];
  /** Stops firing and waits for running jobs to finish, at most `timeoutMs`; resolves true when they all did. */
  stop(timeoutMs: number): Promise<boolean>;
}
