/**
 * The Scheduler port on a Clock: each job fires on its cron schedule in that clock's time (the wall clock
 * live, the replay clock on paper on recordings, a virtual clock in tests). A job never overlaps itself (a
 * firing while it runs is skipped and counted), so a slow job delays only itself; errors are caught, logged
 * and counted per job. Jobs are idempotent, so correctness never depends on a particular firing (design.md).
 * A failing job is an incident (ops/incident.ts): one line when it starts failing (with the error), a count at
 * most once a minute while it goes on, and one when it has recovered (quiet for a while: a job that flaps
 * between failing and working is one incident): an outage is a few lines, not one stack trace per firing.
 * Figures for readiness (when a job ran, its interval) are in wall-clock time, whatever the jobs' clock:
 * whether the daemon keeps up is a question of the machine's time.
 */
import { ConfigError } from '../errors.js';
import type { Logger } from '../ops/logger.js';
import type { Clock, Timer } from '../ports/clock.js';
import type { JobStats, Scheduler } from '../ports/scheduler.js';
import { cronProblem, CronSchedule } from '../clocks/cron-schedule.js';
import { Incident } from '../ops/incident.js';

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
    const failing = new Incident(log, this.wallNow, `job ${name}`);
    let lastDue: number | undefined;
    const fire = (due: number): Promise<void> | undefined => {
      // Matches a late wake-up of the wall clock jumped over (a stalled event loop) are not run: counted (the
      // replay and virtual clocks fire every match).
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
          failing.succeeded();
        } catch (err) {
          stats.failures++;
          failing.failed(err);
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
