import { Cron } from 'croner';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { CronSchedule, cronProblem } from '../../src/clocks/cron-schedule.js';
import { ReplayClock } from '../../src/clocks/replay-clock.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { WallClock } from '../../src/clocks/wall-clock.js';

const T0 = Date.UTC(2023, 2, 1);

describe('CronSchedule', () => {
  it.each([
    '*/5 * * * * *',
    '0 * * * * *',
    '*/2 * * * * *',
    '0 */5 * * * *',
    '7,31 3-17 * * * *',
    '0 0 * * *',
    '30 2 * * 1',
    '0 0 1 * *',
    '0 30 9 * * MON-FRI',
    '0 0 0 29 2 *',
  ])('%s: next() is croner’s next run in the UTC time zone strictly after any instant', (expression) => {
    const schedule = new CronSchedule(expression);
    const cron = new Cron(expression, { timezone: 'UTC', paused: true });
    fc.assert(
      fc.property(fc.integer({ min: T0, max: T0 + 40 * 86_400_000 }), (t) => {
        expect(schedule.next(t)).toBe(cron.nextRun(new Date(t))!.getTime());
      }),
      { numRuns: 300 },
    );
    // Over the years too (leap days, month ends), from instants anywhere in them.
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2090, 0, 1) }), (t) => {
        expect(schedule.next(t)).toBe(cron.nextRun(new Date(t))!.getTime());
      }),
      { numRuns: 100 },
    );
  });

  it('evaluates a schedule without Intl (a named time zone maps ICU’s data: about 8 MB a process)', () => {
    // Any formatter's use (croner keeps one per time zone once made, as the tests above made the UTC one).
    const formats = vi.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
    try {
      for (const expression of ['*/5 * * * * *', '0 0 * * *', '0 30 9 * * MON-FRI']) {
        const schedule = new CronSchedule(expression);
        for (let t = T0; t < T0 + 10 * 86_400_000; t += 3_600_000) schedule.next(t);
      }
      expect(formats).not.toHaveBeenCalled();
    } finally {
      formats.mockRestore();
    }
  });

  it.each(['*/2 * * * * *', '7,31 3-17 * * * *', '0 59 * * * *'])(
    '%s: a run of next() from its own answers, with jumps between, stays croner’s next run',
    (expression) => {
      const cron = new Cron(expression, { timezone: 'UTC', paused: true });
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.boolean(), fc.integer({ min: T0, max: T0 + 3 * 86_400_000 })), { maxLength: 40 }),
          (steps) => {
            // One schedule asked over and over, as a replay asks it: mostly from its previous answer.
            const schedule = new CronSchedule(expression);
            let at = T0;
            for (const [jump, t] of steps) {
              const after = jump ? t : at;
              at = schedule.next(after);
              expect(at).toBe(cron.nextRun(new Date(after))!.getTime());
            }
          },
        ),
        { numRuns: 100 },
      );
    },
  );

  it('names what is wrong with an expression', () => {
    expect(cronProblem('*/5 * * *')).toBe('expected 5 or 6 fields but got 4');
    expect(cronProblem('99 * * * * *')).toMatch(/second/);
    expect(cronProblem('* * * * * * *')).toBe('expected 5 or 6 fields but got 7');
    expect(cronProblem('*/5 * * * * *')).toBeUndefined();
    expect(() => new VirtualClock(T0).cron('often', () => undefined)).toThrow(/invalid cron expression "often"/);
  });
});

describe('VirtualClock', () => {
  it('fires timers in time order, a one-shot before a schedule at the same time, schedules in the order made, each awaited', async () => {
    const clock = new VirtualClock(T0);
    const seen: string[] = [];
    const at = (tag: string) => () => void seen.push(`${tag}@${(clock.now() - T0) / 1000}`);
    clock.cron('*/5 * * * * *', at('b'));
    clock.cron('*/5 * * * * *', async () => {
      await new Promise((r) => setTimeout(r, 5));
      seen.push(`slow@${(clock.now() - T0) / 1000}`);
    });
    clock.setTimer(at('one-shot'), 10_000);
    const slept = clock.sleep(7_000).then(at('sleep'));
    await clock.advanceTo(T0 + 10_000);
    await slept;
    expect(seen).toEqual(['b@5', 'slow@5', 'sleep@7', 'one-shot@10', 'b@10', 'slow@10']);
    expect(clock.now()).toBe(T0 + 10_000);
    expect(clock.nextDue()).toBe(T0 + 15_000);
  });

  it('hands a schedule the match it fires for, the time it stands at', async () => {
    const clock = new VirtualClock(T0);
    const seen: number[][] = [];
    clock.cron('*/5 * * * * *', (due) => void seen.push([due - T0, clock.now() - T0]));
    await clock.advanceTo(T0 + 15_000);
    expect(seen).toEqual([
      [5_000, 5_000],
      [10_000, 10_000],
      [15_000, 15_000],
    ]);
  });

  it('a sleep ends early when its signal aborts', async () => {
    const clock = new VirtualClock(T0);
    const abort = new AbortController();
    const slept = clock.sleep(60_000, abort.signal);
    abort.abort();
    await slept;
    expect(clock.nextDue()).toBeUndefined();
  });
});

describe('ReplayClock', () => {
  it('tells the recording’s time at its pace and fires schedules as that time crosses them, sub-second', () => {
    let mono = 0;
    const clock = new ReplayClock(60, () => mono);
    clock.anchor(T0);
    expect(clock.now()).toBe(T0);
    mono = 1000;
    expect(clock.now()).toBe(T0 + 60_000);
    clock.anchor(T0); // never backwards
    expect(clock.now()).toBe(T0 + 60_000);
  });

  it('fires a five-second schedule every five recorded seconds whatever the speed', async () => {
    const clock = new ReplayClock(1000);
    clock.anchor(T0);
    const dues: number[] = [];
    const timer = clock.cron('*/5 * * * * *', (due) => void dues.push(due));
    // At 1000x, five recorded seconds are five wall milliseconds: well below a one-second floor.
    await vi.waitFor(() => expect(dues.length).toBeGreaterThanOrEqual(10));
    timer.cancel();
    for (const due of dues) expect((due - T0) % 5000).toBe(0);
    expect([...dues].sort((a, b) => a - b)).toEqual(dues);
  });

  it('hands a schedule the match it fires for, never the next one (what the job-lag figure measures from)', async () => {
    const clock = new ReplayClock(1000);
    clock.anchor(T0);
    const seen: { due: number; now: number }[] = [];
    const timer = clock.cron('*/5 * * * * *', (due) => void seen.push({ due, now: clock.now() }));
    await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(5));
    timer.cancel();
    for (const { due, now } of seen) expect(due).toBeLessThanOrEqual(now);
  });

  it('keeps a timer set before the anchor at its remaining duration', async () => {
    const clock = new ReplayClock(100);
    let fired = false;
    clock.setTimer(() => (fired = true), 2_000);
    clock.anchor(T0);
    await new Promise((r) => setTimeout(r, 60));
    expect(fired).toBe(true);
    expect(clock.now()).toBeGreaterThanOrEqual(T0 + 2_000);
  });
});

describe('ReplayClock behind its pace (issue 38)', () => {
  it('waits for the work a firing returned: every match fires, in order, each at its own time', async () => {
    const clock = new ReplayClock(1000);
    clock.anchor(T0);
    const seen: { due: number; now: number; after: number }[] = [];
    // Each run takes 20 wall ms (20 recorded seconds at 1000x): four five-second matches pass meanwhile.
    const timer = clock.cron('*/5 * * * * *', async (due) => {
      const now = clock.now();
      await new Promise((r) => setTimeout(r, 20));
      seen.push({ due, now, after: clock.now() });
    });
    await vi.waitFor(() => expect(seen.length).toBeGreaterThanOrEqual(8));
    expect(clock.lagMs()).toBeGreaterThan(0);
    timer.cancel();
    // Every five-second match, none skipped, and the recording's time stood at the match while it ran.
    const dues = seen.map((s) => s.due);
    expect(dues).toEqual(dues.map((_, i) => dues[0]! + i * 5000));
    for (const s of seen) expect([s.now, s.after]).toEqual([s.due, s.due]);
  });

  it('fires a one-shot timer due before a cron match first, and never passes a timer not yet fired', async () => {
    const clock = new ReplayClock(1000);
    clock.anchor(T0);
    const order: string[] = [];
    clock.setTimer(() => void order.push(clock.now() - T0 < 5_000 ? 'tick before 5000' : 'tick late'), 4_000);
    const timer = clock.cron('*/5 * * * * *', (due) => void order.push(`job ${due - T0}`));
    await vi.waitFor(() => expect(order.length).toBeGreaterThanOrEqual(2));
    timer.cancel();
    expect(order.slice(0, 2)).toEqual(['tick before 5000', 'job 5000']);
  });
});

describe('WallClock', () => {
  it('a sleep keeps its length when the system clock steps back an hour', async () => {
    let offset = 0;
    const clock = new WallClock({ wall: () => Date.now() + offset, monotonic: () => performance.now() });
    const started = performance.now();
    const slept = clock.sleep(1_500);
    offset = -3_600_000;
    await slept;
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(clock.steps).toBe(1);
  });
});
