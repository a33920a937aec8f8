/**
 * The exchange client's errors. Each has a stable code and carries where it happened (`METHOD /path`) and
 * what the exchange said (HTTP status, exchange code, requestId, message) so a user can act on it or quote it
 * to support. Messages never contain the secret, a signature or a signed query: the endpoint path is enough.
 */
import type { ErrorCode } from '../errors.js';
import { VenueError, type VenueErrorMeaning } from '../ports/venue-errors.js';
import type { OrderRequest } from '../ports/venue.js';

export interface ExchangeErrorDetails {
  /** `METHOD /path`, without the query. */
  endpoint: string;
  status?: number;
  exchangeCode?: number | string;
  requestId?: string;
  exchangeMessage?: string;
  cause?: unknown;
}

function detailText(d: ExchangeErrorDetails): string {
  const parts: string[] = [];
  if (d.status !== undefined) parts.push(`HTTP ${d.status}`);
  if (d.exchangeCode !== undefined) parts.push(`exchange code ${d.exchangeCode}`);
  if (d.requestId !== undefined) parts.push(`requestId ${d.requestId}`);
  return parts.length === 0 ? '' : ` [${parts.join(', ')}]`;
}

/**
 * Base of every error that comes out of a request to the exchange. Each subclass says what it means to the
 * engine (ports/venue-errors.ts): this is where the wire's failures are classified, once.
 */
export class ExchangeClientError extends VenueError {
  readonly endpoint: string;
  readonly status: number | undefined;
  readonly exchangeCode: number | string | undefined;
  readonly requestId: string | undefined;
  readonly exchangeMessage: string | undefined;

  constructor(
    code: ErrorCode,
    meaning: VenueErrorMeaning,
    what: string,
    d: ExchangeErrorDetails,
    clockSkewMs?: number,
  ) {
    const said = d.exchangeMessage ? `: ${d.exchangeMessage}` : '';
    super(code, meaning, `${d.endpoint}: ${what}${said}${detailText(d)}`, {
      cause: d.cause,
      context: { endpoint: d.endpoint, status: d.status, exchangeCode: d.exchangeCode, requestId: d.requestId },
      venueCode: d.exchangeCode,
      clockSkewMs,
    });
    this.endpoint = d.endpoint;
    this.status = d.status;
    this.exchangeCode = d.exchangeCode;
    this.requestId = d.requestId;
    this.exchangeMessage = d.exchangeMessage;
  }
}

/**
 * The connection failed. `sent: false` means the request certainly never left (connection refused, DNS
 * failure, connect timeout): an order was not placed. `sent: true` means it may have (reset after sending).
 */
export class NetworkError extends ExchangeClientError {
  readonly sent: boolean;
  constructor(d: ExchangeErrorDetails & { sent: boolean; reason: string }) {
    super(
      'E_NETWORK',
      d.sent ? 'temporary' : 'not-sent',
      `network error (${d.reason}; request ${d.sent ? 'may have been sent' : 'was not sent'})`,
      d,
    );
    this.sent = d.sent;
  }
}

export class TimeoutError extends ExchangeClientError {
  readonly timeoutMs: number;
  constructor(d: ExchangeErrorDetails & { timeoutMs: number }) {
    super('E_TIMEOUT', 'temporary', `no whole answer within ${d.timeoutMs} ms`, d);
    this.timeoutMs = d.timeoutMs;
  }
}

/**
 * An HTTP status the client cannot read as an exchange answer: a non-JSON body, an unknown shape, any 5xx.
 * A 4xx other than 408 and 429 is the gateway refusing the request as malformed: nothing was done.
 */
export class HttpStatusError extends ExchangeClientError {
  declare readonly status: number;
  constructor(d: ExchangeErrorDetails & { status: number; reason: string }) {
    const refused = d.status >= 400 && d.status < 500 && d.status !== 408 && d.status !== 429;
    super('E_HTTP', refused ? 'rejected' : 'temporary', d.reason, d);
  }
}

/** The exchange answered and refused: `status` other than ok, or the public `{statusCode, message}` shape. */
export class ExchangeRejectedError extends ExchangeClientError {
  constructor(d: ExchangeErrorDetails) {
    super('E_EXCHANGE', 'rejected', 'exchange refused the request', d);
  }
}

/**
 * HTTP 401. Not retried, unless the answer's Date header corrected the server-time offset the request was
 * signed with (EXCHANGE_SERVER_TIME): then once, signed again. `clockSkewMs`: the request's timestamp was that
 * far from the exchange's clock (by its Date header), so the clock is the likely cause.
 */
export class AuthError extends ExchangeClientError {
  constructor(d: ExchangeErrorDetails, clockSkewMs?: number) {
    const clock =
      clockSkewMs === undefined
        ? 'that this machine’s clock is right'
        : `this machine’s clock: the request’s timestamp was ${Math.abs(Math.round(clockSkewMs / 1000))} s ` +
          `${clockSkewMs > 0 ? 'ahead of' : 'behind'} the exchange’s clock (its Date header); ` +
          'EXCHANGE_SERVER_TIME=true follows the exchange’s clock';
    const why = `authentication failed (check EXCHANGE_API_KEY, EXCHANGE_API_SECRET and ${clock})`;
    super('E_AUTH', 'authentication', why, d, clockSkewMs);
  }
}

/**
 * HTTP 429. `retryAfterMs` is the exchange's Retry-After, when it sent one. Temporary for a read; for an order
 * create or cancel (`write`) it is a refusal before the exchange acted: nothing was placed, so not-sent, and
 * nothing waits on a reconciliation.
 */
export class RateLimitError extends ExchangeClientError {
  readonly retryAfterMs: number | undefined;
  constructor(d: ExchangeErrorDetails & { retryAfterMs: number | undefined; write?: boolean }) {
    const after = d.retryAfterMs === undefined ? '' : ` (retry after ${d.retryAfterMs} ms)`;
    super('E_RATE_LIMIT', d.write === true ? 'not-sent' : 'temporary', `rate limited${after}`, d);
    this.retryAfterMs = d.retryAfterMs;
  }
}

/** A successful answer whose data is not what the bot relies on; `path` is the JSON path that failed. */
export class ResponseShapeError extends ExchangeClientError {
  readonly path: string;
  constructor(d: ExchangeErrorDetails & { path: string; problem: string }) {
    super('E_RESPONSE_SHAPE', 'temporary', `response ${d.path}: ${d.problem}`, d);
    this.path = d.path;
  }
}

/** What was asked when the outcome became unknown, unsigned, so the order manager can reconcile it. */
export type UnknownOutcomeRequest =
  { kind: 'create'; order: OrderRequest } | { kind: 'cancel'; symbol: string; displayingId: string };

/**
 * An order create or cancel may have reached the exchange but no usable answer came back (timeout, reset
 * after sending, 5xx, unreadable success). Never retried: resolve it from open orders and history.
 */
export class OutcomeUnknownError extends ExchangeClientError {
  readonly request: UnknownOutcomeRequest;
  /** The request's timestamp (epoch ms): where to start looking in the history. */
  readonly sentAt: number;
  constructor(cause: ExchangeClientError, request: UnknownOutcomeRequest, sentAt: number) {
    const reason = cause.message.startsWith(`${cause.endpoint}: `)
      ? cause.message.slice(cause.endpoint.length + 2)
      : cause.message;
    super(
      'E_OUTCOME_UNKNOWN',
      'outcome-unknown',
      `outcome unknown, reconcile before retrying (${cause.code}: ${reason})`,
      {
        endpoint: cause.endpoint,
        cause,
      },
    );
    this.request = request;
    this.sentAt = sentAt;
  }
}

/**
 * A request the client refused to send: a value that is not what the exchange expects. Raised before any I/O,
 * so nothing was placed: the strict writer rejected it.
 */
export class RequestParamError extends VenueError {
  constructor(endpoint: string, field: string, problem: string) {
    super('E_INVALID_REQUEST', 'rejected', `${endpoint}: ${field} ${problem}`, { context: { endpoint, field } });
  }
}

/** A private endpoint was called without an API key and secret. Raised before any I/O; no trading without keys. */
export class MissingCredentialsError extends VenueError {
  constructor(endpoint: string) {
    super(
      'E_CREDENTIALS',
      'authentication',
      `${endpoint} is private: it needs an API key and secret (set EXCHANGE_API_KEY and EXCHANGE_API_SECRET)`,
      { context: { endpoint } },
    );
  }
}
