/**
 * Pacing outgoing requests, whatever they are for: a token bucket (RateLimiter), the sleep it waits with, and
 * the delay a server's Retry-After asks for. The exchange client and the notification channels both use it.
 */
/**
 * Sleep for `ms` milliseconds; injectable so tests can run a limiter or a retry loop without waiting. A sleep
 * its owner cuts short (a channel giving up at its stop's deadline) must reject, not resolve: the limiter takes
 * a resolved sleep for time passed and, still short of a token, sleeps again.
 */
export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RateLimitOptions {
  /** Sustained requests per second. */
  requestsPerSecond: number;
  /** Requests allowed at once after a quiet spell (the bucket's size). */
  burst: number;
}

/** A caller waiting for a token. */
interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Token bucket. A caller that finds a token (and nobody waiting) goes at once; the others wait in two lanes,
 * `urgent` before the rest, each in call order, and one sleep at a time hands out the tokens as they refill.
 * An urgent request (the market watch, whose cadence the strategies decide on) so waits for at most the next
 * token, not behind every request queued before it; the rate and the burst are the same for both lanes.
 */
export class RateLimiter {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last: number;
  private readonly urgent: Waiter[] = [];
  private readonly waiting: Waiter[] = [];
  private sleeping = false;

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

  /** Resolves when the caller may send one request; `urgent` ones are served before the others waiting. */
  acquire(urgent = false): Promise<void> {
    this.refill();
    if (this.tokens >= 1 && this.urgent.length === 0 && this.waiting.length === 0) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      (urgent ? this.urgent : this.waiting).push({ resolve, reject });
      this.wake();
    });
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.last) * this.perMs);
    this.last = now;
  }

  /** Sleeps until the next token, hands out what refilled (urgent first), and again while anyone waits. */
  private wake(): void {
    if (this.sleeping) return;
    this.sleeping = true;
    const ms = Math.max(1, Math.ceil((1 - this.tokens) / this.perMs));
    // A sleep that throws at once fails like one that rejects (the executor turns the throw into a rejection).
    new Promise<void>((resolve) => resolve(this.sleep(ms))).then(
      () => {
        this.sleeping = false;
        this.refill();
        while (this.tokens >= 1) {
          const next = this.urgent.shift() ?? this.waiting.shift();
          if (next === undefined) break;
          this.tokens -= 1;
          next.resolve();
        }
        if (this.urgent.length > 0 || this.waiting.length > 0) this.wake();
      },
      (err: unknown) => {
        // The sleep was cut short (its owner gives up): every caller waiting fails with it.
        this.sleeping = false;
        for (const w of [...this.urgent.splice(0), ...this.waiting.splice(0)]) w.reject(err);
      },
    );
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
