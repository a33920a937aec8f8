/**
 * The Scheduler port on the wall clock, with node-cron v4. Each job runs on its own task: `noOverlap` plus
 * our own running flag keep a job from overlapping itself, so a slow job delays only itself, and errors are
 * caught, logged and counted per job. Timers are imprecise (design.md): a firing that the heartbeat wakes up
 * for late, within MISSED_TOLERANCE_MS, still runs; later ones are counted as missed. Jobs are idempotent,
 * so correctness never depends on a particular firing. A failing job logs once when it starts failing (with
 * the error), a count at most once a minute while it goes on failing, and once when it recovers: an outage
 * is a few lines, not one stack trace per firing.
 */
import { createTask, type ScheduledTask, type TaskContext, validate } from 'node-cron';
import { ConfigError } from '../errors.js';
import type { Logger } from '../ops/logger.js';
import type { JobStats, Scheduler } from '../ports/scheduler.js';

/** While a job keeps failing, one line with the count at most this often (the first failure is logged in full). */
export const FAILING_REPORT_MS = 60_000;

/** A late firing still runs within this many ms (node-cron's default is 1 s; an event-loop stall can be longer). */
export const MISSED_TOLERANCE_MS = 5_000;

interface Job {
  stats: JobStats;
  task: ScheduledTask;
  current: Promise<void> | undefined;
}

export class CronScheduler implements Scheduler {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly logger: Logger,
    /** IANA time zone of the expressions; UTC, like the daily loss limit's day. */
    private readonly timezone = 'UTC',
  ) {}

  schedule(name: string, cron: string, run: () => Promise<void>): void {
    if (!validate(cron)) throw new ConfigError([`job ${name}: invalid cron expression ${JSON.stringify(cron)}`]);
    if (this.jobs.has(name)) throw new ConfigError([`job ${name} is scheduled twice`]);
    const stats: JobStats = {
      name,
      cron,
      runs: 0,
      failures: 0,
      overlapsSkipped: 0,
      missed: 0,
      running: false,
      scheduledAt: Date.now(),
      intervalMs: undefined,
      lastStartedAt: undefined,
      lastLagMs: undefined,
      lastSucceededAt: undefined,
    };
    const log = this.logger.child({ job: name });
    const job: Job = { stats, task: undefined as unknown as ScheduledTask, current: undefined };
    let failing: { since: number; count: number; reportedAt: number } | undefined;
    const fire = (context?: TaskContext): Promise<void> | undefined => {
      if (job.current) {
        stats.overlapsSkipped++;
        log.debug('previous run still going: firing skipped');
        return undefined;
      }
      stats.running = true;
      stats.runs++;
      const started = Date.now();
      stats.lastStartedAt = started;
      // node-cron passes the time the firing was due: how late the timer woke up for it.
      if (context !== undefined) stats.lastLagMs = Math.max(0, started - context.date.getTime());
      const current = (async () => {
        try {
          await run();
          stats.lastSucceededAt = Date.now();
          if (failing) {
            const seconds = Math.round((Date.now() - failing.since) / 1000);
            log.info(
              { failures: failing.count },
              `job ${name} recovered after ${failing.count} failure(s) over ${seconds} s`,
            );
            failing = undefined;
          }
        } catch (err) {
          stats.failures++;
          const now = Date.now();
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
    job.task = createTask(cron, fire, {
      name,
      timezone: this.timezone,
      noOverlap: true,
      missedExecutionTolerance: MISSED_TOLERANCE_MS,
      suppressMissedWarning: true,
      logger: {
        info: (m) => log.debug(m),
        warn: (m) => log.debug(m),
        error: (m, err) => log.warn({ err }, String(m)),
        debug: (m) => log.debug(String(m)),
      },
    });
    job.task.on('execution:missed', () => {
      stats.missed++;
    });
    // node-cron's noOverlap blocks the firing before `fire` sees it: count it here.
    job.task.on('execution:overlap', () => {
      stats.overlapsSkipped++;
      log.debug('previous run still going: firing skipped');
    });
    const [next, after] = job.task.getNextRuns(2);
    if (next !== undefined && after !== undefined) stats.intervalMs = after.getTime() - next.getTime();
    this.jobs.set(name, job);
    void job.task.start();
  }

  stats(): JobStats[] {
    return [...this.jobs.values()].map((j) => ({ ...j.stats }));
  }

  async stop(timeoutMs: number): Promise<boolean> {
    for (const job of this.jobs.values()) await job.task.stop();
    const running = [...this.jobs.values()].flatMap((j) => (j.current ? [j.current] : []));
    for (const job of this.jobs.values()) await job.task.destroy();
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
