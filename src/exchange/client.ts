/**
 * The signed HTTP client for the exchange of spot-api.md: the Venue adapter for live trading, and for paper
 * trading against the simulated exchange's server. One undici Pool with keep-alive per client.
 *
 * Reads are retried (network errors, timeouts, 5xx, 429) with exponential backoff and full jitter, each
 * attempt re-signed with a fresh timestamp. Order create and cancel are sent exactly once: when the answer is
 * lost they fail with OutcomeUnknownError, and the order manager reconciles from open orders and history.
 */
import { Pool } from 'undici';
import { z } from 'zod';
import type { Logger } from 'pino';
import { ConfigError } from '../errors.js';
import type { ClockReading } from '../ports/clock.js';
import { wallClock } from '../clocks/wall-clock.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';
import {
  type ExchangeClientError,
  AuthError,
  HttpStatusError,
  MissingCredentialsError,
  NetworkError,
  OutcomeUnknownError,
  RateLimitError,
  ResponseShapeError,
  TimeoutError,
  type UnknownOutcomeRequest,
} from './errors.js';
import {
  booleanParam,
  decimalParam,
  integerParam,
  jsonText,
  type Param,
  queryText,
  textParam,
  timeParam,
} from './query.js';
import { RateLimiter, type RateLimitOptions, realSleep, type Sleep } from '../ops/rate-limiter.js';
import { readResponse } from './response.js';
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../ports/venue-records.js';
import {
  BalancesSchema,
  OpenOrdersSchema,
  OrderRecordSchema,
  PairConfigSchema,
  tickerFromWire,
  TickerSchema,
  TradeRecordSchema,
  type WireTicker,
} from '../wire/schemas.js';
import { signQuery } from '../wire/signing.js';

export interface RetryOptions {
  /** Attempts in total for a read, the first included. */
  maxAttempts: number;
  /** Backoff before retry n is a random delay in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))). */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 whose Retry-After is longer than this is not waited for: the RateLimitError goes to the caller. */
  maxRetryAfterMs: number;
}

export interface ExchangeClientOptions {
  /** Origin, optionally with a path prefix: `https://host` or `http://127.0.0.1:8080/prefix`. */
  baseUrl: string;
  /** Needed for the private endpoints only. */
  apiKey?: string;
  apiSecret?: string;
  /** Source of request timestamps (default: the system clock). */
  clock?: ClockReading;
  /**
   * Per request: the whole of it, from sending to the answer's last byte (default 10 000). An answer that
   * trickles in (each byte within any inactivity limit) ends here, as one that never starts does.
   */
  timeoutMs?: number;
  /** The largest answer read (default 8 MiB): a bigger one is cut off at that size, a failure of the request. */
  maxResponseBytes?: number;
  /** Default: 3 attempts, 200 ms base, 5 000 ms max backoff, Retry-After honoured up to 30 000 ms. */
  retry?: Partial<RetryOptions>;
  /**
   * Token bucket in front of every request (default 10 req/s, burst 10), timed by the monotonic clock, not
   * by `clock`; a RateLimiter instance can be shared between clients (or given a fake clock); false: off.
   */
  rateLimit?: RateLimitOptions | RateLimiter | false;
  /**
   * Correct timestamps by the server's clock, estimated from each answer's HTTP Date header (default false).
   * The header has one-second resolution, so an estimated offset within ±1 s is treated as zero. A signed
   * read answered 401 whose Date header moved the offset (the first request of a client, or one after this
   * machine's clock stepped) is signed again once with the corrected timestamp; a create or cancel is not.
   */
  serverTimeOffset?: boolean;
  /** Debug lines per request: endpoint, status, duration, attempt. Never parameters or secrets. */
  logger?: Logger;
  /** Keep-alive connections in the pool (default 4). */
  connections?: number;
  /** Offer cancelOrder (default true). When false, `cancelOrder` is undefined, as on a venue without cancel. */
  cancel?: boolean;
  /** Sees every attempt's outcome and duration, and every retry (metrics). */
  observer?: RequestObserver;
  /** For tests: how to wait (backoff, Retry-After, rate limit) and the jitter's random source. */
  sleep?: Sleep;
  random?: () => number;
}

/** Every request the client makes, as its observer names them (`METHOD path`): the metrics start each at 0. */
export const ENDPOINTS = [
  'GET /api/v3/spot/market_watch',
  'GET /api/v3/spot/config',
  'GET /api/v4/user/balance',
  'GET /api/v4/spot/open',
  'GET /api/v4/spot/history',
  'GET /api/v4/spot/trade',
  'POST /api/v4/spot/order',
  'DELETE /api/v4/spot/order',
] as const;

/** The codes of the client's own errors, those an observer is told when the exchange gave no code of its own. */
export const CLIENT_ERROR_CODES = [
  'E_NETWORK',
  'E_TIMEOUT',
  'E_HTTP',
  'E_AUTH',
  'E_RATE_LIMIT',
  'E_RESPONSE_SHAPE',
] as const;

/**
 * Told of every request attempt and every retry of a read (the daemon's metrics). Called on the request path:
 * must be cheap and must not throw. `code` is the error's code (its exchange code when the exchange gave one).
 */
export interface RequestObserver {
  requested(endpoint: string, ok: boolean, seconds: number, code: string | undefined): void;
  retried(endpoint: string, code: string | undefined): void;
}

export interface CancelOptions {
  /** Ask the exchange to notify the account holder (default false). */
  allowNotification?: boolean;
}

type Method = 'GET' | 'POST' | 'DELETE';

interface Call<T> {
  method: Method;
  path: string;
  params: Param[];
  signed: boolean;
  schema: z.ZodType<T>;
  /** Served by the rate limiter before the requests waiting (the market watch: ops/rate-limiter.ts). */
  urgent?: boolean;
}

const DEFAULT_RETRY: RetryOptions = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5_000, maxRetryAfterMs: 30_000 };
const DEFAULT_RATE: RateLimitOptions = { requestsPerSecond: 10, burst: 10 };
/** Far above any answer of spot-api.md (every pair's configuration is a few hundred KB), far below what stalls a poll. */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** Connection errors that happen before a byte of the request is written: the request certainly never left. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** The Date header only says the second; a smaller estimated offset is noise. */
const OFFSET_DEADBAND_MS = 1_000;

const TickersSchema = z.array(TickerSchema);
const PairConfigsSchema = z.array(PairConfigSchema);
const OrderRecordsSchema = z.array(OrderRecordSchema);
const TradeRecordsSchema = z.array(TradeRecordSchema);

export class ExchangeClient implements Venue {
  /** Present unless the client was built with `cancel: false`. */
  readonly cancelOrder?: (symbol: string, displayingId: string, options?: CancelOptions) => Promise<OrderRecord>;

  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly apiKey: string | undefined;
  private readonly apiSecret: string | undefined;
  private readonly clock: ClockReading;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly retry: RetryOptions;
  private readonly limiter: RateLimiter | undefined;
  private readonly useServerTime: boolean;
  private readonly logger: Logger | undefined;
  private readonly sleep: Sleep;
  private readonly random: () => number;
  private readonly observer: RequestObserver | undefined;
  private offsetMs = 0;

  constructor(options: ExchangeClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new ConfigError([`exchange base URL: expected an http(s) URL, got '${options.baseUrl}'`]);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ConfigError([`exchange base URL: expected http or https, got '${url.protocol}'`]);
    }
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.apiKey = options.apiKey || undefined;
    this.apiSecret = options.apiSecret || undefined;
    this.clock = options.clock ?? wallClock;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.sleep = options.sleep ?? realSleep;
    this.random = options.random ?? Math.random;
    const rate = options.rateLimit ?? DEFAULT_RATE;
    this.limiter =
      rate === false
        ? undefined
        : rate instanceof RateLimiter
          ? rate
          : new RateLimiter(rate, () => performance.now(), this.sleep);
    this.useServerTime = options.serverTimeOffset ?? false;
    this.logger = options.logger;
    this.observer = options.observer;
    this.pool = new Pool(url.origin, {
      connections: options.connections ?? 4,
      connect: { timeout: this.timeoutMs },
      maxResponseSize: this.maxResponseBytes,
    });
    if (options.cancel ?? true) {
      this.cancelOrder = (symbol, displayingId, cancelOptions) => this.cancel(symbol, displayingId, cancelOptions);
    }
  }

  /** Closes the connection pool; requests in flight finish first. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** 24-hour tickers, of one pair or of all, named (the Venue port's shape). Public. */
  async marketWatch(symbol?: string): Promise<Ticker[]> {
    return (await this.marketWatchEntries(symbol)).map(tickerFromWire);
  }

  /** The market watch's entries as the exchange sends them, every key kept (what the recorder stores). Public. */
  async marketWatchEntries(symbol?: string): Promise<WireTicker[]> {
    // First in the rate limiter's queue: the strategies decide on it, and a full bucket of history reads and
    // orders would otherwise hold it back for seconds (bench:live-pairs at 100 pairs: no request in a minute).
    return this.read({ ...this.publicGet('/api/v3/spot/market_watch', symbol, TickersSchema), urgent: true });
  }

  /** Pair configurations (PRICE_FILTER etc.), of one pair or of all. Public. */
  async pairConfig(symbol?: string): Promise<PairConfig[]> {
    return this.read(this.publicGet('/api/v3/spot/config', symbol, PairConfigsSchema));
  }

  /** Wallet balances keyed by currency id; `type` 0 = spot (default), 2 = futures. */
  async balance(query: BalanceQuery = {}): Promise<Balances> {
    const endpoint = 'GET /api/v4/user/balance';
    const params = [integerParam(endpoint, 'type', query.type ?? 0)];
    if (query.currency !== undefined) params.push(integerParam(endpoint, 'currency', query.currency));
    return this.read({ method: 'GET', path: '/api/v4/user/balance', params, signed: true, schema: BalancesSchema });
  }

  /** Open orders, of one pair or of all. The exchange sends `{orders: […]}`; a plain array is accepted too. */
  async openOrders(pair?: string): Promise<OrderRecord[]> {
    const endpoint = 'GET /api/v4/spot/open';
    const params = pair === undefined ? [] : [textParam(endpoint, 'filterByPair', pair)];
    return this.read({ method: 'GET', path: '/api/v4/spot/open', params, signed: true, schema: OpenOrdersSchema });
  }

  async orderHistory(query: HistoryQuery = {}): Promise<OrderRecord[]> {
    return this.read(this.historyCall('/api/v4/spot/history', query, OrderRecordsSchema));
  }

  async tradeHistory(query: HistoryQuery = {}): Promise<TradeRecord[]> {
    return this.read(this.historyCall('/api/v4/spot/trade', query, TradeRecordsSchema));
  }

  /**
   * Places an order, exactly once. Decimal fields go on the wire verbatim and must be plain positive
   * decimals. Fails with OutcomeUnknownError when the order may or may not have been placed.
   */
  async createOrder(order: OrderRequest): Promise<OrderRecord> {
    const endpoint = 'POST /api/v4/spot/order';
    const params = [
      textParam(endpoint, 'symbol', order.symbol),
      textParam(endpoint, 'side', order.side),
      textParam(endpoint, 'type', order.type),
    ];
    for (const name of ['quantity', 'price', 'stopPrice', 'limitPrice', 'quoteOrderQty'] as const) {
      const value = order[name];
      if (value !== undefined) params.push(decimalParam(endpoint, name, value));
    }
    if (order.useQuoteQty !== undefined) params.push(booleanParam('useQuoteQty', order.useQuoteQty));
    const call = {
      method: 'POST',
      path: '/api/v4/spot/order',
      params,
      signed: true,
      schema: OrderRecordSchema,
    } as const;
    return this.write(call, { kind: 'create', order: { ...order } });
  }

  private async cancel(symbol: string, displayingId: string, options: CancelOptions = {}): Promise<OrderRecord> {
    const endpoint = 'DELETE /api/v4/spot/order';
    const params = [
      textParam(endpoint, 'symbol', symbol),
      textParam(endpoint, 'displayingId', displayingId),
      booleanParam('allowNotification', options.allowNotification ?? false),
    ];
    const call = {
      method: 'DELETE',
      path: '/api/v4/spot/order',
      params,
      signed: true,
      schema: OrderRecordSchema,
    } as const;
    return this.write(call, { kind: 'cancel', symbol, displayingId });
  }

  private publicGet<T>(path: string, symbol: string | undefined, schema: z.ZodType<T>): Call<T> {
    const params = symbol === undefined ? [] : [textParam(`GET ${path}`, 'symbol', symbol)];
    return { method: 'GET', path, params, signed: false, schema };
  }

  /** The history filters, in the order spot-api.md lists them. */
  private historyCall<T>(path: string, q: HistoryQuery, schema: z.ZodType<T>): Call<T> {
    const endpoint = `GET ${path}`;
    const params: Param[] = [];
    if (q.side !== undefined) params.push(textParam(endpoint, 'side', q.side));
    if (q.symbol !== undefined) params.push(textParam(endpoint, 'symbol', q.symbol));
    if (q.hideCanceled !== undefined) params.push(booleanParam('hideCanceled', q.hideCanceled));
    if (q.pageSize !== undefined) params.push(integerParam(endpoint, 'pageSize', q.pageSize));
    if (q.page !== undefined) params.push(integerParam(endpoint, 'page', q.page));
    if (q.timeFrom !== undefined) params.push(timeParam(endpoint, 'timeFrom', q.timeFrom));
    if (q.timeTo !== undefined) params.push(timeParam(endpoint, 'timeTo', q.timeTo));
    return { method: 'GET', path, params, signed: true, schema };
  }

  private credentials(endpoint: string): { key: string; secret: string } {
    if (this.apiKey === undefined || this.apiSecret === undefined) throw new MissingCredentialsError(endpoint);
    return { key: this.apiKey, secret: this.apiSecret };
  }

  private timestamp(): number {
    return Math.round(this.clock.now() + this.offsetMs);
  }

  private async read<T>(call: Call<T>): Promise<T> {
    const endpoint = `${call.method} ${call.path}`;
    if (call.signed) this.credentials(endpoint);
    let resigned = false;
    for (let attempt = 1; ; attempt++) {
      const offset = this.offsetMs;
      try {
        return await this.send(call, attempt);
      } catch (err) {
        // A 401 whose answer moved the server-time offset: the timestamp was the problem, sign again once.
        const resign = err instanceof AuthError && !resigned && this.offsetMs !== offset;
        if (resign) resigned = true;
        const delay = resign ? 0 : this.retryDelay(err, attempt);
        if (delay === undefined) throw err;
        this.observer?.retried(endpoint, errorCodeOf(err));
        this.logger?.debug(
          { endpoint, attempt, delayMs: delay, code: (err as ExchangeClientError).code },
          'exchange read retry',
        );
        await this.sleep(delay);
      }
    }
  }

  /** The wait before the next attempt of a read, or undefined when the error must go to the caller. */
  private retryDelay(err: unknown, attempt: number): number | undefined {
    if (attempt >= this.retry.maxAttempts) return undefined;
    if (err instanceof RateLimitError && err.retryAfterMs !== undefined) {
      return err.retryAfterMs <= this.retry.maxRetryAfterMs ? err.retryAfterMs : undefined;
    }
    const transient =
      err instanceof NetworkError ||
      err instanceof TimeoutError ||
      err instanceof RateLimitError ||
      (err instanceof HttpStatusError && err.status >= 500);
    if (!transient) return undefined;
    const cap = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    return Math.floor(this.random() * cap);
  }

  private async write<T>(call: Call<T>, request: UnknownOutcomeRequest): Promise<T> {
    this.credentials(`${call.method} ${call.path}`);
    let sentAt = 0;
    try {
      return await this.send(call, 1, (timestamp) => (sentAt = timestamp));
    } catch (err) {
      if (err instanceof RateLimitError) {
        const { endpoint, status, exchangeCode, requestId, exchangeMessage, retryAfterMs } = err;
        throw new RateLimitError({
          endpoint,
          status,
          exchangeCode,
          requestId,
          exchangeMessage,
          retryAfterMs,
          write: true,
        });
      }
      throw outcomeUnknown(err) ? new OutcomeUnknownError(err, request, sentAt) : err;
    }
  }

  /** One attempt: wait for the rate limiter, sign with a fresh timestamp, send, read the answer. */
  private async send<T>(call: Call<T>, attempt: number, onSign?: (timestamp: number) => void): Promise<T> {
    const endpoint = `${call.method} ${call.path}`;
    await this.limiter?.acquire(call.urgent);
    let query = queryText(call.params);
    let bodyParams = call.params;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    let signature: string | undefined;
    if (call.signed) {
      const { key, secret } = this.credentials(endpoint);
      const timestamp = this.timestamp();
      onSign?.(timestamp);
      ({ query, signature } = signQuery(secret, query, timestamp));
      headers['x-api-key'] = key;
      bodyParams = [
        ...call.params,
        { name: 'timestamp', wire: String(timestamp), json: String(timestamp) },
        { name: 'signature', wire: signature, json: JSON.stringify(signature) },
      ];
    }
    const path = `${this.basePath}${call.path}${query === '' ? '' : `?${query}`}`;
    const body = call.method === 'GET' ? undefined : jsonText(bodyParams);
    const sentAt = this.clock.now();
    const started = performance.now();
    let status: number;
    let text: string;
    let dateHeader: string | undefined;
    let retryAfter: string | undefined;
    try {
      const res = await this.pool.request({
        method: call.method,
        path,
        headers,
        body,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        // The whole request, answer read to its end: the two timeouts above bound silences only.
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      dateHeader = headerValue(res.headers.date);
      retryAfter = headerValue(res.headers['retry-after']);
      text = await res.body.text();
    } catch (err) {
      const error = this.transportError(err, endpoint);
      this.observer?.requested(endpoint, false, elapsed(started) / 1000, error.code);
      this.logger?.debug(
        { endpoint, attempt, durationMs: elapsed(started), code: error.code },
        'exchange request failed',
      );
      throw error;
    }
    this.logger?.debug({ endpoint, status, durationMs: elapsed(started), attempt }, 'exchange request');
    const receivedAt = this.clock.now();
    const signedWith = this.offsetMs;
    const serverOffset = dateHeader === undefined ? undefined : serverOffsetOf(dateHeader, sentAt, receivedAt);
    if (this.useServerTime && serverOffset !== undefined) this.offsetMs = serverOffset;
    // A 401 on a timestamp off the exchange's time by more than the header's noise is put down to the clock.
    const clockSkewMs =
      status === 401 && call.signed && serverOffset !== undefined && serverOffset !== signedWith
        ? signedWith - serverOffset
        : undefined;
    const scrub = (s: string) => scrubSecrets(s, [signature, this.apiSecret]);
    if (this.observer === undefined)
      return readResponse({ endpoint, status, retryAfter, text, clockSkewMs }, call.schema, scrub, receivedAt);
    const seconds = elapsed(started) / 1000;
    try {
      const data = readResponse({ endpoint, status, retryAfter, text, clockSkewMs }, call.schema, scrub, receivedAt);
      this.observer.requested(endpoint, true, seconds, undefined);
      return data;
    } catch (err) {
      this.observer.requested(endpoint, false, seconds, errorCodeOf(err));
      throw err;
    }
  }

  private transportError(err: unknown, endpoint: string): ExchangeClientError {
    const code = errorCode(err);
    const deadline = err instanceof Error && err.name === 'TimeoutError';
    if (deadline || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new TimeoutError({ endpoint, timeoutMs: this.timeoutMs, cause: err });
    }
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') {
      const problem = `larger than ${this.maxResponseBytes} bytes (EXCHANGE_MAX_RESPONSE_BYTES): not read further`;
      return new ResponseShapeError({ endpoint, path: 'body', problem, cause: err });
    }
    const reason = code ?? (err instanceof Error ? err.message : String(err));
    return new NetworkError({ endpoint, sent: code === undefined || !NOT_SENT.has(code), reason, cause: err });
  }
}

/** The server's clock minus ours, estimated from an answer's Date header (0 within the header's noise). */
function serverOffsetOf(dateHeader: string, sentAt: number, receivedAt: number): number | undefined {
  const server = Date.parse(dateHeader);
  if (Number.isNaN(server)) return undefined;
  // The header truncates to the second: the server's time was, on average, half a second later.
  const estimate = server + 500 - (sentAt + receivedAt) / 2;
  return Math.abs(estimate) <= OFFSET_DEADBAND_MS ? 0 : Math.round(estimate);
}

/**
 * Whether a failed create/cancel may have taken effect: it was sent and no answer proves a refusal.
 * A refusal (4xx, 401, 429) or a request that never left is a plain failure.
 */
function outcomeUnknown(err: unknown): err is ExchangeClientError {
  if (err instanceof NetworkError) return err.sent;
  if (err instanceof TimeoutError || err instanceof ResponseShapeError) return true;
  if (err instanceof HttpStatusError) return err.status >= 500 || (err.status >= 200 && err.status < 300);
  return false;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A failed request's code for metrics: the exchange's own code when it gave one, else the client's. */
function errorCodeOf(err: unknown): string | undefined {
  const exchangeCode = (err as { exchangeCode?: unknown } | null)?.exchangeCode;
  if (typeof exchangeCode === 'number' || typeof exchangeCode === 'string') return String(exchangeCode);
  return errorCode(err);
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

function scrubSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}
