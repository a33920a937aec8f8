import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/ops/rate-limiter.js';

/** A clock that only moves when the limiter sleeps (or the test says so). */
function fakeTime() {
  const t = { now: 0, waits: [] as number[] };
  const sleep = (ms: number) => {
    t.waits.push(ms);
    t.now += ms;
    return Promise.resolve();
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

  it('serves concurrent callers in call order, each waiting one interval longer', async () => {
    const waits: number[] = [];
    const limiter = new RateLimiter(
      { requestsPerSecond: 4, burst: 1 },
      () => 0,
      (ms) => (waits.push(ms), Promise.resolve()),
    );
    await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    expect(waits).toEqual([250, 500, 750]);
  });

  it('rejects a rate or burst that cannot work', () => {
    expect(() => new RateLimiter({ requestsPerSecond: 0, burst: 1 })).toThrow(/requestsPerSecond/);
    expect(() => new RateLimiter({ requestsPerSecond: 1, burst: 0 })).toThrow(/burst/);
  });
});
