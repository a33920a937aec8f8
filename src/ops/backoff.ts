/**
 * Retrying start-up against a venue that cannot be reached yet: exponential backoff with a cap, each failure
 * logged once with when the next attempt comes, until it works, a fatal error (e.g. authentication) ends it,
 * or a shutdown aborts the wait. Not a crash loop: one process, waiting.
 */
import type { Logger } from './logger.js';

export interface BackoffOptions {
  logger: Logger;
  /** Errors that no retry will heal: thrown at once. */
  isFatal: (err: unknown) => boolean;
  /** Aborting it ends the wait; the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** First delay (default 1 s), doubled after each failure up to maxMs (default 60 s). */
  baseMs?: number;
  maxMs?: number;
  /** Told of each failure that will be retried (what the readiness probe says while start-up waits). */
  onRetry?: (what: string) => void;
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new Error(String(reason));
}

function abortable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      if (signal) reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `attempt` until it resolves; `what` names it in the log ("connect to the venue"). */
export async function retryWithBackoff<T>(
  what: string,
  attempt: (n: number) => Promise<T>,
  options: BackoffOptions,
): Promise<T> {
  const base = options.baseMs ?? 1_000;
  const max = options.maxMs ?? 60_000;
  for (let n = 1; ; n++) {
    options.signal?.throwIfAborted();
    try {
      return await attempt(n);
    } catch (err) {
      if (options.isFatal(err) || options.signal?.aborted) throw err;
      const delay = Math.min(max, base * 2 ** (n - 1));
      const message = err instanceof Error ? err.message : String(err);
      const line = `cannot ${what} (attempt ${n}): ${message}; retrying in ${(delay / 1000).toFixed(1)} s`;
      options.logger.warn({ attempt: n, retryInMs: delay, err }, line);
      options.onRetry?.(line);
      await abortable(delay, options.signal);
    }
  }
}
