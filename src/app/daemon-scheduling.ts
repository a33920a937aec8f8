/**
 * The daemon's wall-clock wiring: the engine's jobs mapped onto a Scheduler. One market job per distinct
 * instance schedule (instances sharing a schedule share its request), the orders poll, and the less frequent
 * refresh of pair configs and balances. The engine itself knows nothing of schedulers.
 */
import { DEFAULT_DAEMON_SCHEDULE, type DaemonSchedule } from '../config/env.js';
import { BotError } from '../errors.js';
import type { JobStats, Scheduler } from '../ports/scheduler.js';
import type { Engine } from '../engine/engine.js';

export class DaemonScheduling {
  constructor(
    private readonly engine: Engine,
    private readonly scheduler: Scheduler,
    private readonly schedule: DaemonSchedule = DEFAULT_DAEMON_SCHEDULE,
  ) {}

  /** Schedules every job; call after engine.start(). */
  start(): void {
    for (const cron of this.engine.schedules()) {
      this.scheduler.schedule(marketJob(cron), cron, () => this.engine.marketCycle(cron));
    }
    this.scheduler.schedule('orders poll', this.schedule.ordersPoll, async () => {
      await this.engine.pollOrders();
      // The poll logs each symbol it could not read and goes on; the job counts as failed (readiness sees it).
      if (!this.engine.ordersPollComplete)
        throw new BotError('E_POLL_INCOMPLETE', 'orders poll incomplete: the venue could not be read for a symbol');
    });
    this.scheduler.schedule('refresh', this.schedule.refresh, () => this.engine.refresh());
  }

  /** Stops the jobs (waiting for running ones, bounded), then the engine (onStop hooks). */
  async stop(timeoutMs = 10_000): Promise<void> {
    await this.scheduler.stop(timeoutMs);
    await this.engine.stop();
  }
}

const marketJob = (cron: string) => `market ${cron}`;

/**
 * The scheduler's figures with each market job's decisions that still run apart (Engine.decisionRuns) counted
 * as the job's run going on: the job itself ends once its tickers are in, so without them a run of decisions
 * that never ends would show no job running, and liveness's stuck-run check (api/probes.ts) would not see it.
 */
export function withDecisions(jobs: JobStats[], runs: readonly { schedule: string; since: number }[]): JobStats[] {
  if (runs.length === 0) return jobs;
  const since = new Map(runs.map((run) => [marketJob(run.schedule), run.since]));
  return jobs.map((job) => {
    const began = since.get(job.name);
    if (began === undefined) return job;
    const lastStartedAt = job.running ? Math.min(job.lastStartedAt ?? began, began) : began;
    return { ...job, running: true, lastStartedAt };
  });
}
