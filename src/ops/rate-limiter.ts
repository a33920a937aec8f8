/**
 * Pacing outgoing requests, whatever they are for: a token bucket (RateLimiter), the sleep it waits with, and
 * the delay a server's Retry-After asks for. The exchange client and the notification channels both use it.
 */
/** Sleep for `ms` milliseconds; injectable so tests can run a limiter or a retry loop without waiting. */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RateLimitOptions {
  /** Sustained requests per second. */
  requestsPerSecond: number;
  /** Requests allowed at once after a quiet spell (the bucket's size). */
  burst: number;
}

/**
 * Token bucket. A caller that finds the bucket empty takes a token on credit (the count goes negative) and
 * sleeps until that token would have been refilled; the debt makes later callers wait longer, so waiters are
 * served in call order without a queue or a polling loop.
 */
export class RateLimiter {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;

  constructor(
    options: RateLimitOptions,
    private readonly now: () => number = Date.now,
    private readonly sleep: Sleep = realSleep,
  ) {
    if (!(options.requestsPerSecond > 0) || !Number.isFinite(options.requestsPerSecond)) {
      throw new RangeError(`requestsPerSecond must be a positive number, got ${options.requestsPerSecond}`);
    }
    if (!(options.burst >= 1) || !Number.isFinite(options.burst)) {
      throw new RangeError(`burst must be at least 1, got ${options.burst}`);
    }
    this.perMs = options.requestsPerSecond / 1000;
    this.burst = options.burst;
    this.tokens = options.burst;
    this.last = now();
  }

  /** Resolves when the caller may send one request. */
  acquire(): Promise<void> {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.last) * this.perMs);
    this.last = now;
    this.tokens -= 1;
    if (this.tokens >= 0) return Promise.resolve();
    return this.sleep(Math.ceil(-this.tokens / this.perMs));
  }
}

/** Retry-After is either delay seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
