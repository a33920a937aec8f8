import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/ops/rate-limiter.js';

/** A clock that only moves when the limiter sleeps (or the test says so). */
function fakeTime() {
  const t = { now: 0, waits: [] as number[] };
  // Time passes when the sleep ends (after what was already due at its start has run).
  const sleep = (ms: number) => {
    t.waits.push(ms);
    return Promise.resolve().then(() => void (t.now += ms));
  };
  return { t, now: () => t.now, sleep };
}

describe('token bucket', () => {
  it('lets a burst through at once, then paces at the sustained rate', async () => {
    const { t, now, sleep } = fakeTime();
    const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 3 }, now, sleep);
    for (let i = 0; i < 5; i++) await limiter.acquire();
    expect(t.waits).toEqual([100, 100]);
    expect(t.now).toBe(200);
  });

  it('refills over quiet time, never beyond the burst', async () => {
    const { t, now, sleep } = fakeTime();
    const limiter = new RateLimiter({ requestsPerSecond: 2, burst: 2 }, now, sleep);
    await limiter.acquire();
    await limiter.acquire();
    t.now += 60_000;
    await limiter.acquire();
    await limiter.acquire();
    expect(t.waits).toEqual([]);
    await limiter.acquire();
    expect(t.waits).toEqual([500]);
  });

  it('serves waiting callers in call order, one interval apart', async () => {
    const { t, now, sleep } = fakeTime();
    const limiter = new RateLimiter({ requestsPerSecond: 4, burst: 1 }, now, sleep);
    const served: string[] = [];
    await Promise.all(['a', 'b', 'c', 'd'].map((id) => limiter.acquire().then(() => served.push(`${id}@${t.now}`))));
    expect(served).toEqual(['a@0', 'b@250', 'c@500', 'd@750']);
  });

  it('serves an urgent caller before those already waiting, within the same rate', async () => {
    const { t, now, sleep } = fakeTime();
    const limiter = new RateLimiter({ requestsPerSecond: 10, burst: 1 }, now, sleep);
    const served: string[] = [];
    const take = (id: string, urgent = false) => limiter.acquire(urgent).then(() => served.push(`${id}@${t.now}`));
    // Five history reads queue behind the first; then the market watch asks.
    const all = [take('r1'), take('r2'), take('r3'), take('r4'), take('r5'), take('market', true)];
    await Promise.all(all);
    expect(served).toEqual(['r1@0', 'market@100', 'r2@200', 'r3@300', 'r4@400', 'r5@500']);
  });

  it('fails every caller waiting when its sleep is cut short', async () => {
    let now = 0;
    const limiter = new RateLimiter(
      { requestsPerSecond: 1, burst: 1 },
      () => now,
      () => Promise.reject(new Error('gave up')),
    );
    await limiter.acquire();
    await expect(Promise.all([limiter.acquire(), limiter.acquire(true)])).rejects.toThrow('gave up');
    now += 1000;
    await expect(limiter.acquire()).resolves.toBeUndefined();
  });

  it('fails the callers waiting when its sleep throws at once, and serves the next caller', async () => {
    const { t, now, sleep } = fakeTime();
    let broken = true;
    const limiter = new RateLimiter({ requestsPerSecond: 1, burst: 1 }, now, (ms) => {
      if (broken) throw new Error('no timer');
      return sleep(ms);
    });
    await limiter.acquire();
    await expect(limiter.acquire()).rejects.toThrow('no timer');
    broken = false;
    // Before, the sleep stayed taken and the failed caller stayed queued: every later caller waited for ever.
    // Fake time runs in microtasks, so the next turn of the event loop comes after any answer due.
    const next = limiter.acquire().then(() => 'served');
    const turn = new Promise((resolve) => setImmediate(() => resolve('still waiting')));
    await expect(Promise.race([next, turn])).resolves.toBe('served');
    expect(t.waits).toEqual([1000]);
  });

  it('rejects a rate or burst that cannot work', () => {
    expect(() => new RateLimiter({ requestsPerSecond: 0, burst: 1 })).toThrow(/requestsPerSecond/);
    expect(() => new RateLimiter({ requestsPerSecond: 1, burst: 0 })).toThrow(/burst/);
  });
});
