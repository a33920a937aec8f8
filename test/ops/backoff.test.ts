import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { retryWithBackoff } from '../../src/ops/backoff.js';

function capture() {
  const messages: string[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (s: string) => void messages.push((JSON.parse(s) as { msg: string }).msg) },
  );
  return { logger, messages };
}

describe('retryWithBackoff', () => {
  it('retries with doubling delays up to the cap, logging each failure, until an attempt works', async () => {
    const { logger, messages } = capture();
    const result = await retryWithBackoff(
      'reach the venue',
      (n) => (n < 4 ? Promise.reject(new Error(`refused ${n}`)) : Promise.resolve(`ok after ${n}`)),
      { logger, isFatal: () => false, baseMs: 2, maxMs: 5 },
    );
    expect(result).toBe('ok after 4');
    expect(messages).toEqual([
      'cannot reach the venue (attempt 1): refused 1; retrying in 0.0 s',
      'cannot reach the venue (attempt 2): refused 2; retrying in 0.0 s',
      'cannot reach the venue (attempt 3): refused 3; retrying in 0.0 s',
    ]);
  });

  it('throws a fatal error at once', async () => {
    const { logger, messages } = capture();
    let attempts = 0;
    const fatal = Object.assign(new Error('401'), { code: 'E_AUTH' });
    await expect(
      retryWithBackoff('log in', () => (attempts++, Promise.reject(fatal)), {
        logger,
        isFatal: (e) => (e as { code?: string }).code === 'E_AUTH',
      }),
    ).rejects.toBe(fatal);
    expect(attempts).toBe(1);
    expect(messages).toEqual([]);
  });

  it('stops waiting when the signal aborts', async () => {
    const { logger } = capture();
    const abort = new AbortController();
    const attempt = retryWithBackoff('reach the venue', () => Promise.reject(new Error('down')), {
      logger,
      isFatal: () => false,
      signal: abort.signal,
      baseMs: 60_000,
    });
    setTimeout(() => abort.abort(new Error('shutting down')), 10);
    await expect(attempt).rejects.toThrow('shutting down');
  });
});
