/**
 * The Scheduler port on a Clock: each job fires on its cron schedule in that clock's time (the wall clock
 * live, the replay clock on paper on recordings, a virtual clock in tests). A job never overlaps itself (a
 * firing while it runs is skipped and counted), so a slow job delays only itself; errors are caught, logged
 * and counted per job. Jobs are idempotent, so correctness never depends on a particular firing (design.md).
 * A failing job logs once when it starts failing (with the error), a count at most once a minute while it
 * goes on failing, and once when it recovers: an outage is a few lines, not one stack trace per firing.
 * Figures for readiness (when a job ran, its interval) are in wall-clock time, whatever the jobs' clock:
 * whether the daemon keeps up is a question of the machine's time.
 */
import { ConfigError } from '../errors.js';
import type { Logger } from '../ops/logger.js';
import type { Clock, Timer } from '../ports/clock.js';
import type { JobStats, Scheduler } from '../ports/scheduler.js';
import { cronProblem, CronSchedule } from '../clocks/cron-schedule.js';

/** While a job keeps failing, one line with the count at most this often (the first failure is logged in full). */
export const FAILING_REPORT_MS = 60_000;

interface Job {
  stats: JobStats;
  timer: Timer;
  current: Promise<void> | undefined;
}

export class ClockScheduler implements Scheduler {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** Wall-clock time for the figures readiness reads. */
    private readonly wallNow: () => number = () => Date.now(),
  ) {}

  schedule(name: string, cron: string, run: () => Promise<void>): void {
    const problem = cronProblem(cron);
    if (problem !== undefined)
      throw new ConfigError([`job ${name}: invalid cron expression ${JSON.stringify(cron)} (${problem})`]);
    if (this.jobs.has(name)) throw new ConfigError([`job ${name} is scheduled twice`]);
    const schedule = new CronSchedule(cron);
    const interval = schedule.intervalAfter(this.clock.now());
    const pace = this.clock.pace ?? 1;
    const stats: JobStats = {
      name,
      cron,
      runs: 0,
      failures: 0,
      overlapsSkipped: 0,
      missed: 0,
      running: false,
      scheduledAt: this.wallNow(),
      intervalMs: Number.isFinite(interval) ? interval / pace : undefined,
      lastStartedAt: undefined,
      lastLagMs: undefined,
      lastSucceededAt: undefined,
    };
    const log = this.logger.child({ job: name });
    let failing: { since: number; count: number; reportedAt: number } | undefined;
    let lastDue: number | undefined;
    const fire = (due: number): Promise<void> | undefined => {
      // Matches a late wake-up jumped over (a stalled event loop, a fast replay) are not run: counted.
      if (lastDue !== undefined) {
        for (let m = schedule.next(lastDue), n = 0; m < due && n < 1000; m = schedule.next(m), n++) stats.missed++;
      }
      lastDue = due;
      if (job.current) {
        stats.overlapsSkipped++;
        log.debug('previous run still going: firing skipped');
        return undefined;
      }
      stats.running = true;
      stats.runs++;
      const started = this.wallNow();
      stats.lastStartedAt = started;
      stats.lastLagMs = Math.max(0, (this.clock.now() - due) / pace);
      const current = (async () => {
        try {
          await run();
          stats.lastSucceededAt = this.wallNow();
          if (failing) {
            const seconds = Math.round((this.wallNow() - failing.since) / 1000);
            log.info(
              { failures: failing.count },
              `job ${name} recovered after ${failing.count} failure(s) over ${seconds} s`,
            );
            failing = undefined;
          }
        } catch (err) {
          stats.failures++;
          const now = this.wallNow();
          const message = err instanceof Error ? err.message : String(err);
          if (!failing) {
            failing = { since: now, count: 1, reportedAt: now };
            log.warn({ err }, `job ${name} failing: ${message}`);
          } else {
            failing.count++;
            if (now - failing.reportedAt >= FAILING_REPORT_MS) {
              failing.reportedAt = now;
              log.warn(
                { failures: failing.count },
                `job ${name} still failing: ${failing.count} failures in a row over ${Math.round((now - failing.since) / 1000)} s (last: ${message})`,
              );
            } else log.debug({ err }, `job ${name} failed again`);
          }
        } finally {
          stats.running = false;
          job.current = undefined;
        }
      })();
      job.current = current;
      return current;
    };
    const job: Job = { stats, timer: { cancel: () => undefined }, current: undefined };
    job.timer = this.clock.cron(cron, fire);
    this.jobs.set(name, job);
  }

  stats(): JobStats[] {
    return [...this.jobs.values()].map((j) => ({ ...j.stats }));
  }

  async stop(timeoutMs: number): Promise<boolean> {
    for (const job of this.jobs.values()) job.timer.cancel();
    const running = [...this.jobs.values()].flatMap((j) => (j.current ? [j.current] : []));
    this.jobs.clear();
    if (running.length === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    try {
      return await Promise.race([Promise.all(running).then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
