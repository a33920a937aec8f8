import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { ClockScheduler } from '../../src/app/clock-scheduler.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { WallClock, wallClock } from '../../src/clocks/wall-clock.js';
import { DaemonScheduling } from '../../src/app/daemon-scheduling.js';
import { INCIDENT_QUIET_MS } from '../../src/ops/incident.js';
import { silentLogger } from '../../src/ops/logger.js';
import type { JobStats, Scheduler } from '../../src/ports/scheduler.js';
import { Harness, instance, matching, strategy } from '../engine/harness.js';
import { captureLogger } from '../support/capture-logger.js';
import { until } from '../support/until.js';

describe('ClockScheduler on the wall clock', () => {
  it('rejects invalid expressions and duplicate names', async () => {
    const s = new ClockScheduler(silentLogger, wallClock);
    expect(() => s.schedule('x', 'not a cron', () => Promise.resolve())).toThrow(/invalid cron expression/);
    s.schedule('x', '0 0 1 1 *', () => Promise.resolve());
    expect(() => s.schedule('x', '0 0 1 1 *', () => Promise.resolve())).toThrow(/scheduled twice/);
    expect(await s.stop(1000)).toBe(true);
  });

  it('never overlaps a job with itself, lets a slow job delay only itself, and counts failures', async () => {
    const s = new ClockScheduler(silentLogger, wallClock);
    let release: () => void = () => undefined;
    let slowRuns = 0;
    let fastRuns = 0;
    s.schedule('slow', '* * * * * *', () => {
      slowRuns++;
      return new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    s.schedule('failing', '* * * * * *', () => {
      fastRuns++;
      return Promise.reject(new Error('boom'));
    });
    const stat = (name: string) => s.stats().find((j) => j.name === name) as JobStats;
    await until(
      'the jobs to run',
      () => stat('slow').overlapsSkipped + stat('slow').missed >= 1 && stat('failing').failures >= 2,
    );
    expect(slowRuns).toBe(1);
    expect(stat('slow').running).toBe(true);
    expect(stat('failing').failures).toBe(fastRuns);
    release();
    await until('the jobs to run', () => slowRuns === 2);
    release();
    expect(await s.stop(2000)).toBe(true);
  });
});

describe('ClockScheduler logging of a failing job', () => {
  it('logs once when a job starts failing, not per firing, and once when it recovers', async () => {
    const log = captureLogger();
    const clock = new VirtualClock(Date.UTC(2024, 0, 1));
    const s = new ClockScheduler(log.logger, clock, () => clock.now());
    let runs = 0;
    s.schedule('flaky', '* * * * * *', () => {
      runs++;
      return runs <= 3 ? Promise.reject(new Error(`outage ${runs}`)) : Promise.resolve();
    });
    await clock.advanceBy(3_000);
    await clock.advanceBy(INCIDENT_QUIET_MS + 2_000);
    expect(await s.stop(1000)).toBe(true);
    const told = log.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= 30);
    // Recovered once quiet for INCIDENT_QUIET_MS after the last failure (3 s): at 33 s, 32 s after the first.
    expect(told.map((l) => l.msg)).toEqual([
      'job flaky failing: outage 1',
      'job flaky recovered after 3 failure(s) over 32 s',
    ]);
  });

  it('a job that flaps (fails, works, fails again) is one incident: a line when it starts, a count a minute, one when it ends', async () => {
    const log = captureLogger();
    const clock = new VirtualClock(Date.UTC(2024, 0, 1));
    const s = new ClockScheduler(log.logger, clock, () => clock.now());
    let runs = 0;
    // Five minutes of a fault that flaps: every other firing fails; then it stays healed.
    const flapping = 300;
    s.schedule('orders poll', '* * * * * *', () => {
      runs++;
      return runs <= flapping && runs % 2 === 1 ? Promise.reject(new Error(`reset ${runs}`)) : Promise.resolve();
    });
    await clock.advanceBy(flapping * 1_000);
    await clock.advanceBy(INCIDENT_QUIET_MS + 5_000);
    expect(await s.stop(1000)).toBe(true);
    const lines = log.lines.map((l) => JSON.parse(l) as { level: number; msg: string });
    const told = lines.filter((l) => l.level >= 30).map((l) => l.msg);
    expect(told[0]).toBe('job orders poll failing: reset 1');
    // One count a minute while it flaps (150 failures over five minutes), then one line when it has ended.
    expect(told.slice(1, -1)).toEqual([
      matching(/^job orders poll still failing: 31 failures over 60 s \(last: reset 61\)$/),
      matching(/^job orders poll still failing: 61 failures over 120 s/),
      matching(/^job orders poll still failing: 91 failures over 180 s/),
      matching(/^job orders poll still failing: 121 failures over 240 s/),
    ]);
    expect(told.at(-1)).toMatch(/^job orders poll recovered after 150 failure\(s\) over \d+ s$/);
    expect(told).toHaveLength(6);
  });
});

describe('ClockScheduler when the system clock steps', () => {
  it('keeps firing every job when the clock is stepped back one hour (an NTP correction), and after a step forward', async () => {
    let offset = 0;
    const clock = new WallClock({ wall: () => Date.now() + offset, monotonic: () => performance.now() });
    const s = new ClockScheduler(silentLogger, clock);
    const dues: number[] = [];
    s.schedule('market', '* * * * * *', () => {
      dues.push(clock.now());
      return Promise.resolve();
    });
    await until('the jobs to run', () => dues.length >= 2);
    offset = -3_600_000;
    const before = dues.length;
    // node-cron waited for the wall clock to reach the next second it had planned: an hour here.
    await until('the jobs to run', () => dues.length >= before + 2);
    expect(clock.steps).toBe(1);
    expect(clock.lastStepMs).toBeLessThan(-3_599_000);
    expect(dues[dues.length - 1]! - dues[0]!).toBeLessThan(-3_500_000);
    offset = 0;
    const back = dues.length;
    await until('the jobs to run', () => dues.length >= back + 2);
    expect(clock.steps).toBe(2);
    const missed = s.stats()[0]!.missed;
    expect(await s.stop(1000)).toBe(true);
    // The hour jumped over forward is skipped and counted, not run 3600 times.
    expect(dues.length).toBeLessThan(back + 10);
    expect(missed).toBeLessThanOrEqual(1000);
  });
});

describe('ClockScheduler on a virtual clock', () => {
  it("fires each job at every match of its schedule in the clock's time, in the order they were scheduled", async () => {
    const clock = new VirtualClock(Date.UTC(2023, 2, 1));
    const s = new ClockScheduler(silentLogger, clock);
    const runs: string[] = [];
    const job = (name: string) => () => {
      runs.push(`${name}@${(clock.now() - Date.UTC(2023, 2, 1)) / 1000}`);
      return Promise.resolve();
    };
    s.schedule('market', '*/2 * * * * *', job('market'));
    s.schedule('orders poll', '*/5 * * * * *', job('poll'));
    s.schedule('refresh', '0 * * * * *', job('refresh'));
    await clock.advanceTo(Date.UTC(2023, 2, 1, 0, 0, 10));
    expect(runs).toEqual(['market@2', 'market@4', 'poll@5', 'market@6', 'market@8', 'market@10', 'poll@10']);
    await clock.advanceTo(Date.UTC(2023, 2, 1, 0, 1, 0));
    expect(runs.slice(-3)).toEqual(['market@60', 'poll@60', 'refresh@60']);
    expect(s.stats().map((j) => [j.name, j.runs, j.intervalMs])).toEqual([
      ['market', 30, 2000],
      ['orders poll', 12, 5000],
      ['refresh', 1, 60_000],
    ]);
    expect(await s.stop(1000)).toBe(true);
    await clock.advanceBy(60_000);
    expect(runs).toHaveLength(43);
  });
});

describe('DaemonScheduling', () => {
  it('maps one market job per distinct schedule, the orders poll and the refresh onto the scheduler', async () => {
    const h = new Harness();
    h.price(100);
    const jobs = new Map<string, { cron: string; run: () => Promise<void> }>();
    let stopped = false;
    const scheduler: Scheduler = {
      schedule: (name, cron, run) => void jobs.set(name, { cron, run }),
      stats: () => [],
      stop: () => {
        stopped = true;
        return Promise.resolve(true);
      },
    };
    const ticks: string[] = [];
    const s = (tag: string) => strategy({ onTick: () => void ticks.push(tag) });
    const engine = await h.start([
      instance('a', s('a'), { schedule: '*/5 * * * * *' }),
      instance('b', s('b'), { schedule: '*/5 * * * * *', symbol: 'ETHUSDT' }),
      instance('c', s('c'), { schedule: '0 * * * * *' }),
    ]);
    h.price(2000, 'ETHUSDT');
    const daemon = new DaemonScheduling(engine, scheduler, { ordersPoll: '*/2 * * * * *', refresh: '0 */5 * * * *' });
    daemon.start();
    expect([...jobs].map(([name, j]) => [name, j.cron])).toEqual([
      ['market */5 * * * * *', '*/5 * * * * *'],
      ['market 0 * * * * *', '0 * * * * *'],
      ['orders poll', '*/2 * * * * *'],
      ['refresh', '0 */5 * * * *'],
    ]);
    await jobs.get('market */5 * * * * *')!.run();
    expect(ticks.sort()).toEqual(['a', 'b']);
    await jobs.get('orders poll')!.run();
    await jobs.get('refresh')!.run();
    await daemon.stop(1000);
    expect(stopped).toBe(true);
    expect(h.events('stopped')).toHaveLength(3);
    await h.close();
  });
});
