/**
 * What a venue's failure means to the engine, decided by the adapter that saw it (the HTTP client from the
 * wire, the in-process venue from the matching engine's refusal) and nowhere else. The engine switches on
 * `meaning`; it never looks at HTTP statuses or exchange codes.
 *
 * | meaning         | what happened                                        | what the engine does                        |
 * |-----------------|------------------------------------------------------|---------------------------------------------|
 * | rejected        | the venue (or the adapter's strict writer) refused   | the order is REJECTED: back to the strategy |
 * | not-sent        | the request certainly never left                     | the order is NOT_SENT: nothing exists       |
 * | outcome-unknown | an order create/cancel may have taken effect         | reconcile from open orders and history      |
 * | temporary       | a read failed for now (network, timeout, 5xx, 429,   | reads are retried by the adapter; feeds the |
 * |                 | an answer that cannot be read)                       | circuit breaker; a create is reconciled     |
 * | authentication  | credentials or the clock were refused                | trading halts until an operator clears it;  |
 * |                 |                                                      | put down to the clock: until a signed read  |
 * |                 |                                                      | succeeds                                    |
 */
import { BotError, type ErrorCode, errorCode } from '../errors.js';

export type VenueErrorMeaning = 'rejected' | 'not-sent' | 'outcome-unknown' | 'temporary' | 'authentication';

export class VenueError extends BotError {
  readonly meaning: VenueErrorMeaning;
  /** The venue's own code for a refusal (the exchange's BROKER_ERROR code), when it gave one. */
  readonly venueCode: number | string | undefined;
  /**
   * An authentication failure the adapter puts down to the clock: how far the request's timestamp was from
   * the venue's time (ms, positive when ours was ahead). Such a halt clears itself once a signed read succeeds.
   */
  readonly clockSkewMs: number | undefined;

  constructor(
    code: ErrorCode,
    meaning: VenueErrorMeaning,
    message: string,
    options: {
      cause?: unknown;
      context?: Record<string, unknown>;
      venueCode?: number | string;
      clockSkewMs?: number;
    } = {},
  ) {
    super(code, message, options);
    this.meaning = meaning;
    this.venueCode = options.venueCode;
    this.clockSkewMs = options.clockSkewMs;
  }
}

/** The meaning of anything a venue call threw: a failure no adapter classified is `unexpected`. */
export function meaningOf(err: unknown): VenueErrorMeaning | 'unexpected' {
  return err instanceof VenueError ? err.meaning : 'unexpected';
}

/** The code to journal for a failure: the venue's own refusal code when it gave one, else the error's code. */
export function failureCode(err: unknown): string {
  if (err instanceof VenueError && err.venueCode !== undefined) return String(err.venueCode);
  return errorCode(err);
}

export function failureMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
