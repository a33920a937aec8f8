import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ExchangeClient, type ExchangeClientOptions } from '../../src/exchange/client.js';
import {
  AuthError,
  ExchangeClientError,
  ExchangeRejectedError,
  HttpStatusError,
  MissingCredentialsError,
  NetworkError,
  OutcomeUnknownError,
  RateLimitError,
  RequestParamError,
  ResponseShapeError,
  TimeoutError,
} from '../../src/exchange/errors.js';
import { describeError } from '../../src/errors.js';
import { plain } from '../../src/market/decimal.js';
import { RateLimiter } from '../../src/ops/rate-limiter.js';
import type { OrderRequest } from '../../src/ports/venue.js';
import {
  ok,
  orderRecord,
  pairConfigRecord,
  refusedUrl,
  type SigningServer,
  startSigningServer,
} from './signing-server.js';

const KEY = 'test-api-key';
const SECRET = 'test-secret-must-never-leak';
const NOW = Date.parse('2024-05-01T00:00:00.000Z');

let server: SigningServer;
const clients: ExchangeClient[] = [];

beforeEach(async () => {
  server = await startSigningServer({ apiKey: KEY, apiSecret: SECRET });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await server.close();
});

function client(extra: Partial<ExchangeClientOptions> = {}): ExchangeClient {
  const c = new ExchangeClient({
    baseUrl: server.url,
    apiKey: KEY,
    apiSecret: SECRET,
    clock: { now: () => NOW },
    timeoutMs: 2_000,
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 },
    rateLimit: false,
    ...extra,
  });
  clients.push(c);
  return c;
}

async function failure(promise: Promise<unknown>): Promise<ExchangeClientError> {
  const err = await promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExchangeClientError);
  return err as ExchangeClientError;
}

const LIMIT: OrderRequest = { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '50000' };

describe('endpoints', () => {
  it('balance: signed GET with type (default spot) first and timestamp last', async () => {
    const balances = await client().balance();
    const [req] = server.calls('GET /api/v4/user/balance');
    expect(req!.names).toEqual(['type', 'timestamp', 'signature']);
    expect(req!.params.type).toBe('0');
    expect(req!.params.timestamp).toBe(String(NOW));
    expect(req!.headers['x-api-key']).toBe(KEY);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.verified).toBe(true);
    expect(balances['1']).toMatchObject({ value: 1000, locked_value: 0, type: 0 });

    await client().balance({ type: 2, currency: 5 });
    expect(server.calls('GET /api/v4/user/balance')[1]!.rawQuery).toMatch(
      /^type=2&currency=5&timestamp=\d+&signature=[0-9a-f]{64}$/,
    );
  });

  it('order history: the filters in the spec order, ISO times URL-encoded and signed as sent', async () => {
    const orders = await client().orderHistory({
      timeTo: '2024-05-02T00:00:00Z',
      page: 2,
      symbol: 'BTCUSDT',
      side: 'SELL',
      hideCanceled: true,
      pageSize: 50,
      timeFrom: '2024-05-01T00:00:00Z',
    });
    const [req] = server.calls('GET /api/v4/spot/history');
    expect(req!.names).toEqual([
      'side',
      'symbol',
      'hideCanceled',
      'pageSize',
      'page',
      'timeFrom',
      'timeTo',
      'timestamp',
      'signature',
    ]);
    expect(req!.rawQuery).toContain('timeFrom=2024-05-01T00%3A00%3A00Z');
    expect(req!.params.timeFrom).toBe('2024-05-01T00:00:00Z');
    expect(req!.params.hideCanceled).toBe('true');
    expect(req!.verified).toBe(true);
    expect(orders[0]).toMatchObject({ displayingId: '1001', status: 'FILLED' });
  });

  it('trade history: records with string ids and the order id normalised to text', async () => {
    const trades = await client().tradeHistory({ symbol: 'BTCUSDT' });
    expect(server.calls('GET /api/v4/spot/trade')[0]!.names).toEqual(['symbol', 'timestamp', 'signature']);
    expect(trades[0]).toMatchObject({ displayingId: '9001', orderId: '1001', flag: 'BUY_ORDER_FILL' });
  });

  it('open orders: filterByPair, {orders: [...]} unwrapped to an array', async () => {
    const open = await client().openOrders('BTCUSDT');
    const [req] = server.calls('GET /api/v4/spot/open');
    expect(req!.names).toEqual(['filterByPair', 'timestamp', 'signature']);
    expect(req!.params.filterByPair).toBe('BTCUSDT');
    expect(open.map((o) => o.displayingId)).toEqual(['1001']);
  });

  it('create order: fields in the query in the documented order, mirrored as a JSON body', async () => {
    const order = await client().createOrder({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'OCO',
      useQuoteQty: false,
      limitPrice: '58000',
      stopPrice: '59000',
      price: '70000',
      quantity: '0.5',
    });
    const [req] = server.calls('POST /api/v4/spot/order');
    expect(req!.names).toEqual([
      'symbol',
      'side',
      'type',
      'quantity',
      'price',
      'stopPrice',
      'limitPrice',
      'useQuoteQty',
      'timestamp',
      'signature',
    ]);
    expect(req!.verified).toBe(true);
    expect(req!.headers['content-type']).toBe('application/json');
    const body = JSON.parse(req!.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(req!.names);
    expect(body).toEqual({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'OCO',
      quantity: 0.5,
      price: 70000,
      stopPrice: 59000,
      limitPrice: 58000,
      useQuoteQty: false,
      timestamp: NOW,
      signature: req!.params.signature,
    });
    expect(order).toMatchObject({ displayingId: '1001', status: 'NEW' });
  });

  it('cancel order: signed DELETE with symbol, displayingId as text, allowNotification; body mirrors', async () => {
    const c = client();
    const canceled = await c.cancelOrder!('BTCUSDT', '1001');
    const [req] = server.calls('DELETE /api/v4/spot/order');
    expect(req!.names).toEqual(['symbol', 'displayingId', 'allowNotification', 'timestamp', 'signature']);
    expect(req!.verified).toBe(true);
    expect(JSON.parse(req!.body)).toEqual({
      symbol: 'BTCUSDT',
      displayingId: '1001',
      allowNotification: false,
      timestamp: NOW,
      signature: req!.params.signature,
    });
    expect(canceled.status).toBe('CANCELED');
    await c.cancelOrder!('BTCUSDT', '1002', { allowNotification: true });
    expect(server.calls('DELETE /api/v4/spot/order')[1]!.params.allowNotification).toBe('true');
  });

  it('cancel is an optional capability: absent when turned off', () => {
    expect(client({ cancel: false }).cancelOrder).toBeUndefined();
    expect(typeof client().cancelOrder).toBe('function');
  });

  it('public endpoints: no key, no timestamp, no signature; symbol passed through', async () => {
    const c = client({ apiKey: undefined, apiSecret: undefined });
    const tickers = await c.marketWatchEntries('BTCUSDT');
    const named = await c.marketWatch('BTCUSDT');
    const configs = await c.pairConfig();
    const [tickerReq] = server.calls('GET /api/v3/spot/market_watch');
    expect(tickerReq!.rawQuery).toBe('symbol=BTCUSDT');
    expect(tickerReq!.headers['x-api-key']).toBeUndefined();
    expect(server.calls('GET /api/v3/spot/config')[0]!.rawQuery).toBe('');
    expect(tickers[0]).toMatchObject({ s: 'BTCUSDT', p: 63000.5, lbl: 'x' });
    // The Venue port's ticker is named; the wire's one-letter keys stay in the client.
    expect(named[0]).toMatchObject({ symbol: 'BTCUSDT', last: 63000.5 });
    expect(named[0]).not.toHaveProperty('s');
    expect(configs[0]!.filters[0]).toMatchObject({ filterType: 'PRICE_FILTER', tickSize: 0.01 });
  });

  it('keeps a path prefix of the base URL', async () => {
    const c = client({ baseUrl: `${server.url}/prefix/` });
    await failure(c.marketWatch());
    expect(server.requests[0]!.path).toBe('/prefix/api/v3/spot/market_watch');
  });
});

describe('signing', () => {
  it('text values are URL-encoded before signing: the server verifies over the raw text it received', async () => {
    await client().orderHistory({ symbol: 'BTC/USDT & more=x' });
    const [req] = server.calls('GET /api/v4/spot/history');
    expect(req!.rawQuery.startsWith('symbol=BTC%2FUSDT%20%26%20more%3Dx&timestamp=')).toBe(true);
    expect(req!.params.symbol).toBe('BTC/USDT & more=x');
    expect(req!.verified).toBe(true);
  });

  it('the signature is the HMAC of exactly the sent text before &signature=', async () => {
    await client().createOrder(LIMIT);
    const [req] = server.calls('POST /api/v4/spot/order');
    const signed = `symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0.01&price=50000&timestamp=${NOW}`;
    expect(req!.rawQuery).toBe(`${signed}&signature=${createHmac('sha256', SECRET).update(signed).digest('hex')}`);
  });

  it('a wrong secret is refused by the server: E_AUTH, never retried, message points at key/secret/clock', async () => {
    const err = await failure(client({ apiSecret: 'wrong' }).openOrders());
    expect(err).toBeInstanceOf(AuthError);
    expect(err.code).toBe('E_AUTH');
    expect(err.status).toBe(401);
    expect(err.exchangeMessage).toBe('Invalid signature');
    expect(err.message).toMatch(/GET \/api\/v4\/spot\/open: .*EXCHANGE_API_KEY.*EXCHANGE_API_SECRET.*clock/);
    expect(server.requests).toHaveLength(1);
  });

  it('private endpoints without credentials fail before any I/O', async () => {
    const c = client({ apiKey: undefined, apiSecret: undefined });
    for (const call of [
      () => c.balance(),
      () => c.openOrders(),
      () => c.createOrder(LIMIT),
      () => c.cancelOrder!('X', '1'),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(MissingCredentialsError);
      expect((err as MissingCredentialsError).code).toBe('E_CREDENTIALS');
    }
    expect(server.requests).toHaveLength(0);
  });

  it('every retry of a read is re-signed with a fresh timestamp', async () => {
    let now = NOW;
    server.reply('GET /api/v4/spot/open', { status: 503, body: 'busy' });
    await client({ clock: { now: () => (now += 1000) } }).openOrders();
    const reqs = server.calls('GET /api/v4/spot/open');
    expect(reqs).toHaveLength(2);
    expect(reqs.every((r) => r.verified)).toBe(true);
    expect(reqs[0]!.params.timestamp).not.toBe(reqs[1]!.params.timestamp);
  });

  it('corrects timestamps by the server clock from the Date header when asked', async () => {
    const hourAhead = new Date(NOW + 3_600_000).toUTCString();
    server.reply('GET /api/v3/spot/config', { ...ok([]), headers: { date: hourAhead } });
    const c = client({ serverTimeOffset: true });
    await c.pairConfig();
    await c.balance();
    // The header says the second; the server's time is taken as half a second past it.
    expect(server.calls('GET /api/v4/user/balance')[0]!.params.timestamp).toBe(String(NOW + 3_600_500));
  });
});

describe('numbers on the wire', () => {
  it('plain decimals in both query and body: no float noise, no exponent, long values verbatim', async () => {
    await client().createOrder({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity: plain(1e-7),
      price: plain(0.1 + 0.2),
      quoteOrderQty: '123456789.123456789',
    });
    const [req] = server.calls('POST /api/v4/spot/order');
    expect(req!.rawQuery).toMatch(
      /^symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0\.0000001&price=0\.3&quoteOrderQty=123456789\.123456789&timestamp=/,
    );
    expect(req!.body).toContain('"quantity":0.0000001,"price":0.3,"quoteOrderQty":123456789.123456789,');
    expect(req!.body).not.toMatch(/e-|E-|0000000000004/);
    expect(req!.verified).toBe(true);
  });

  it.each(['1e-7', '-1', '0', '0.000', '', 'abc', '007', ' 1', '1.', '0x10', 'NaN'])(
    'refuses quantity %j before any I/O, naming the field',
    async (quantity) => {
      const err = await client()
        .createOrder({ ...LIMIT, quantity })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RequestParamError);
      expect((err as RequestParamError).code).toBe('E_INVALID_REQUEST');
      expect((err as Error).message).toMatch(/^POST \/api\/v4\/spot\/order: quantity must be a plain positive decimal/);
      expect(server.requests).toHaveLength(0);
    },
  );

  it('refuses a bad page, wallet type or time before any I/O', async () => {
    const c = client();
    await expect(c.orderHistory({ page: 1.5 })).rejects.toThrow(/page must be a non-negative integer/);
    await expect(c.balance({ type: -1 })).rejects.toThrow(/type must be a non-negative integer/);
    await expect(c.tradeHistory({ timeFrom: 'yesterday' })).rejects.toThrow(/timeFrom must be an ISO 8601 time/);
    await expect(c.marketWatch('')).rejects.toThrow(/symbol must not be empty/);
    expect(server.requests).toHaveLength(0);
  });
});

describe('tolerant reading', () => {
  it('accepts unknown fields, nulls, numeric-text numbers and ids of either type; open orders as a plain array', async () => {
    server.reply(
      'GET /api/v4/spot/open',
      ok([
        orderRecord({
          displayingId: '42',
          quantity: '0.5',
          brandNewField: { nested: true },
          stopPrice: null,
          _id: null,
        }),
        orderRecord({ displayingId: 43, feeMetadata: null }),
      ]),
    );
    const open = await client().openOrders();
    expect(open.map((o) => o.displayingId)).toEqual(['42', '43']);
    expect(open[0]!.quantity).toBe(0.5);
    expect(open[0]!.stopPrice).toBeUndefined();
    expect(open[0]).toHaveProperty('brandNewField', { nested: true });
  });

  it('a response of the wrong shape names the endpoint and the JSON path that failed', async () => {
    server.reply('GET /api/v4/spot/open', ok({ orders: [orderRecord({ quantity: { amount: 1 } })] }));
    const err = await failure(client().openOrders());
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect(err.code).toBe('E_RESPONSE_SHAPE');
    expect(err.message).toBe(
      'GET /api/v4/spot/open: response data.orders[0].quantity: expected number, got object [HTTP 200]',
    );
    expect((err as ResponseShapeError).path).toBe('data.orders[0].quantity');
    expect(server.requests).toHaveLength(1);
  });

  it('names a missing field and a bad value', async () => {
    server.reply('GET /api/v3/spot/market_watch', ok([{ p: 1, t: 2 }]));
    await expect(client().marketWatch()).rejects.toThrow('response data[0].s: expected string, field missing');
    server.reply('GET /api/v3/spot/config', ok([{ ...pairConfigRecord, baseAssetPrecision: -1 }]));
    await expect(client().pairConfig()).rejects.toThrow(/response data\[0\]\.baseAssetPrecision: /);
  });

  it('a 200 without the ok envelope is a shape error at `status`', async () => {
    server.reply('GET /api/v3/spot/market_watch', ok([]), { status: 200, body: { result: [] } });
    await client().marketWatch();
    const err = await failure(client().marketWatch());
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect((err as ResponseShapeError).path).toBe('status');
  });
});

describe('errors', () => {
  it('BROKER_ERROR: E_EXCHANGE with exchange code, requestId and HTTP status; not retried', async () => {
    server.reply('GET /api/v4/spot/history', {
      status: 400,
      body: { status: 'BROKER_ERROR', code: 6104, data: { requestId: 'req-123' }, message: null },
    });
    const err = await failure(client().orderHistory());
    expect(err).toBeInstanceOf(ExchangeRejectedError);
    expect(err).toMatchObject({
      code: 'E_EXCHANGE',
      status: 400,
      exchangeCode: 6104,
      requestId: 'req-123',
      endpoint: 'GET /api/v4/spot/history',
    });
    expect(describeError(err)).toBe(
      'E_EXCHANGE: GET /api/v4/spot/history: exchange refused the request: BROKER_ERROR [HTTP 400, exchange code 6104, requestId req-123]',
    );
    expect(server.requests).toHaveLength(1);
  });

  it('the public 400 shape: E_EXCHANGE with the exchange message', async () => {
    server.reply('GET /api/v3/spot/config', {
      status: 400,
      body: { statusCode: 400, message: 'symbol is invalid', error: 'Bad Request' },
    });
    const err = await failure(client().pairConfig('NOPE'));
    expect(err).toMatchObject({ code: 'E_EXCHANGE', status: 400, exchangeMessage: 'symbol is invalid' });
    expect(describeError(err)).toBe(
      'E_EXCHANGE: GET /api/v3/spot/config: exchange refused the request: symbol is invalid [HTTP 400]',
    );
  });

  it('5xx on a read: retried up to maxAttempts, then E_HTTP with the status', async () => {
    server.reply(
      'GET /api/v3/spot/config',
      ...Array.from({ length: 3 }, () => ({ status: 502, body: '<html>bad gateway</html>' })),
    );
    const err = await failure(client().pairConfig());
    expect(err).toBeInstanceOf(HttpStatusError);
    expect(err).toMatchObject({ code: 'E_HTTP', status: 502 });
    expect(server.requests).toHaveLength(3);
  });

  it('non-JSON answers with other statuses: E_HTTP, not retried', async () => {
    server.reply('GET /api/v3/spot/config', { status: 404, body: 'no such route' }, { status: 200, body: 'not json' });
    expect(await failure(client().pairConfig())).toMatchObject({ code: 'E_HTTP', status: 404 });
    expect((await failure(client().pairConfig())).message).toMatch(/not JSON \[HTTP 200\]/);
    expect(server.requests).toHaveLength(2);
  });

  it('a connection reset on a read is retried', async () => {
    server.reply('GET /api/v4/spot/open', { destroy: true });
    const open = await client().openOrders();
    expect(open).toHaveLength(1);
    expect(server.calls('GET /api/v4/spot/open')).toHaveLength(2);
  });

  it('a read that times out every time: E_TIMEOUT after maxAttempts', async () => {
    server.reply('GET /api/v3/spot/market_watch', { hang: true }, { hang: true });
    const err = await failure(
      client({ timeoutMs: 100, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } }).marketWatch(),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err).toMatchObject({ code: 'E_TIMEOUT', timeoutMs: 100 });
    expect(server.requests).toHaveLength(2);
  });

  it('an answer trickling in a byte at a time (never silent long): E_TIMEOUT at the time limit, cut off', async () => {
    // 1,500 bytes at a byte every 20 ms: half a minute each, each byte far within the 300 ms limit of a silence.
    const slow = { ...ok([orderRecord({ _id: 'x'.repeat(1_200) })]), trickleMs: 20 };
    server.reply('GET /api/v4/spot/open', slow, slow);
    const err = await failure(
      client({ timeoutMs: 300, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } }).openOrders(),
    );
    expect(err).toBeInstanceOf(TimeoutError);
    expect(err.message).toContain('no whole answer within 300 ms');
    const calls = server.calls('GET /api/v4/spot/open');
    expect(calls).toHaveLength(2);
    expect(calls.filter((c) => c.answered)).toEqual([]);
  });

  it('an order create whose answer trickles: one request, E_OUTCOME_UNKNOWN at the time limit', async () => {
    server.reply('POST /api/v4/spot/order', { ...ok(orderRecord({ _id: 'y'.repeat(1_200) })), trickleMs: 20 });
    const err = await failure(client({ timeoutMs: 300 }).createOrder(LIMIT));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect(err.message).toContain('E_TIMEOUT');
    expect(server.calls('POST /api/v4/spot/order')).toHaveLength(1);
  });

  it('an answer above the size cap is cut off there: E_RESPONSE_SHAPE naming the cap, not retried', async () => {
    server.reply('GET /api/v3/spot/market_watch', { ...ok([]), padBytes: 3 * 1024 * 1024 });
    const err = await failure(client({ maxResponseBytes: 1024 * 1024 }).marketWatch());
    expect(err).toBeInstanceOf(ResponseShapeError);
    expect(err.message).toContain('larger than 1048576 bytes (EXCHANGE_MAX_RESPONSE_BYTES)');
    expect(server.calls('GET /api/v3/spot/market_watch')).toHaveLength(1);
    // The same answer under the cap is read.
    server.reply('GET /api/v3/spot/market_watch', { ...ok([]), padBytes: 512 * 1024 });
    expect(await client({ maxResponseBytes: 1024 * 1024 }).marketWatch()).toEqual([]);
  });

  it('429 on a read: waits for Retry-After (seconds or HTTP date), then succeeds', async () => {
    const waits: number[] = [];
    const sleep = (ms: number) => {
      waits.push(ms);
      return Promise.resolve();
    };
    server.reply(
      'GET /api/v3/spot/market_watch',
      { status: 429, headers: { 'retry-after': '2' }, body: { statusCode: 429, message: 'Too Many Requests' } },
      { status: 429, headers: { 'retry-after': new Date(NOW + 5_000).toUTCString() }, body: '' },
    );
    const tickers = await client({ sleep }).marketWatch();
    expect(tickers).toHaveLength(1);
    expect(waits).toEqual([2_000, 5_000]);
    expect(server.requests).toHaveLength(3);
  });

  it('429 with a Retry-After beyond the limit goes to the caller with retryAfterMs', async () => {
    server.reply('GET /api/v3/spot/market_watch', { status: 429, headers: { 'retry-after': '3600' }, body: '' });
    const err = await failure(client().marketWatch());
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ code: 'E_RATE_LIMIT', status: 429, retryAfterMs: 3_600_000 });
    expect(server.requests).toHaveLength(1);
  });

  it('connection refused on a read: E_NETWORK, not sent, after the retries', async () => {
    const c = client({ baseUrl: await refusedUrl() });
    const err = await failure(c.marketWatch());
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ code: 'E_NETWORK', sent: false });
  });
});

describe('orders are never retried', () => {
  it('5xx on create: one request, E_OUTCOME_UNKNOWN carrying the unsigned order and when it was sent', async () => {
    server.reply('POST /api/v4/spot/order', { status: 500, body: { status: 'INTERNAL', code: 1 } });
    const err = await failure(client().createOrder(LIMIT));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    const unknown = err as OutcomeUnknownError;
    expect(unknown.code).toBe('E_OUTCOME_UNKNOWN');
    expect(unknown.endpoint).toBe('POST /api/v4/spot/order');
    expect(unknown.request).toEqual({ kind: 'create', order: LIMIT });
    expect(unknown.sentAt).toBe(NOW);
    expect(unknown.cause).toBeInstanceOf(HttpStatusError);
    expect(server.requests).toHaveLength(1);
  });

  it('timeout on create: one request, E_OUTCOME_UNKNOWN', async () => {
    server.reply('POST /api/v4/spot/order', { hang: true });
    const err = await failure(client({ timeoutMs: 100 }).createOrder(LIMIT));
    expect(err.code).toBe('E_OUTCOME_UNKNOWN');
    expect(err.cause).toBeInstanceOf(TimeoutError);
    expect(describeError(err)).toMatch(/^E_OUTCOME_UNKNOWN: POST \/api\/v4\/spot\/order: outcome unknown.*E_TIMEOUT/);
    expect(server.requests).toHaveLength(1);
  });

  it('reset after sending on create: one request, E_OUTCOME_UNKNOWN', async () => {
    server.reply('POST /api/v4/spot/order', { destroy: true });
    const err = await failure(client().createOrder(LIMIT));
    expect(err.code).toBe('E_OUTCOME_UNKNOWN');
    expect((err.cause as NetworkError).sent).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('an unreadable success on create is unknown too: the order may exist', async () => {
    server.reply('POST /api/v4/spot/order', ok({ id: 'no displayingId here' }));
    const err = await failure(client().createOrder(LIMIT));
    expect(err.code).toBe('E_OUTCOME_UNKNOWN');
    expect(err.cause).toBeInstanceOf(ResponseShapeError);
  });

  it('connection refused on create: certainly not placed, E_NETWORK with sent=false', async () => {
    const err = await failure(client({ baseUrl: await refusedUrl() }).createOrder(LIMIT));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).not.toBeInstanceOf(OutcomeUnknownError);
    expect((err as NetworkError).sent).toBe(false);
  });

  it('a refusal on create is a known outcome: E_EXCHANGE / E_RATE_LIMIT, one request each, no waiting', async () => {
    const waits: number[] = [];
    const c = client({ sleep: (ms) => (waits.push(ms), Promise.resolve()) });
    server.reply(
      'POST /api/v4/spot/order',
      {
        status: 400,
        body: { status: 'BROKER_ERROR', code: 6104, data: { requestId: 'r1' }, message: 'Insufficient balance' },
      },
      { status: 429, headers: { 'retry-after': '1' }, body: '' },
    );
    expect(await failure(c.createOrder(LIMIT))).toMatchObject({
      code: 'E_EXCHANGE',
      exchangeMessage: 'Insufficient balance',
    });
    // A 429 on create placed nothing: not-sent, so the engine does not wait on a reconciliation for it.
    expect(await failure(c.createOrder(LIMIT))).toMatchObject({
      code: 'E_RATE_LIMIT',
      retryAfterMs: 1000,
      meaning: 'not-sent',
    });
    expect(server.requests).toHaveLength(2);
    expect(waits).toEqual([]);
  });

  it('timeout on cancel: one request, E_OUTCOME_UNKNOWN naming what was cancelled', async () => {
    server.reply('DELETE /api/v4/spot/order', { hang: true });
    const err = await failure(client({ timeoutMs: 100 }).cancelOrder!('BTCUSDT', '1001'));
    expect(err).toBeInstanceOf(OutcomeUnknownError);
    expect((err as OutcomeUnknownError).request).toEqual({ kind: 'cancel', symbol: 'BTCUSDT', displayingId: '1001' });
    expect(server.requests).toHaveLength(1);
  });
});

describe('rate limit and logging', () => {
  it('requests wait for the token bucket', async () => {
    const waits: number[] = [];
    let now = 0;
    const limiter = new RateLimiter(
      { requestsPerSecond: 2, burst: 1 },
      () => now,
      (ms) => (waits.push(ms), (now += ms), Promise.resolve()),
    );
    const c = client({ rateLimit: limiter });
    await c.marketWatch();
    await c.marketWatch();
    await c.createOrder(LIMIT);
    expect(waits).toEqual([500, 500]);
    expect(server.requests).toHaveLength(3);
  });

  it('the market watch goes before the requests already waiting for the bucket', async () => {
    let now = 0;
    const limiter = new RateLimiter(
      { requestsPerSecond: 10, burst: 1 },
      () => now,
      (ms) => Promise.resolve().then(() => void (now += ms)),
    );
    const c = client({ rateLimit: limiter });
    // Three history reads queue (the first goes at once); then the market job asks for the tickers.
    const reads = [c.orderHistory(), c.tradeHistory(), c.orderHistory()];
    await Promise.all([...reads, c.marketWatch()]);
    expect(server.requests.map((r) => r.path.split('/').pop())).toEqual([
      'history',
      'market_watch',
      'trade',
      'history',
    ]);
  });

  it('no error message or log line contains the secret or a signature', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    const c = client({ logger, timeoutMs: 100, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 } });
    server.reply(
      'GET /api/v4/spot/open',
      { status: 503, body: 'x' },
      { status: 400, body: { status: 'BROKER_ERROR', code: 1, message: `bad ${SECRET}` } },
    );
    server.reply('POST /api/v4/spot/order', { hang: true }, { destroy: true });
    server.reply('GET /api/v4/user/balance', ok({ '1': { value: 'lots' } }));
    const errors: unknown[] = [];
    const collect = (p: Promise<unknown>) => p.catch((e: unknown) => void errors.push(e));
    await collect(c.openOrders());
    await collect(c.createOrder(LIMIT));
    await collect(c.createOrder(LIMIT));
    await collect(c.balance());
    await collect(client({ apiSecret: 'other-secret' }).tradeHistory());
    expect(errors).toHaveLength(5);
    expect(lines.length).toBeGreaterThan(0);
    const signatures = server.requests.map((r) => r.params.signature).filter((s): s is string => !!s);
    expect(signatures.length).toBeGreaterThan(4);
    const texts = [
      ...lines,
      ...errors.map((e) => describeError(e)),
      ...errors.map((e) => JSON.stringify((e as ExchangeClientError).context)),
    ];
    for (const text of texts) {
      expect(text).not.toContain(SECRET);
      for (const s of signatures) expect(text).not.toContain(s);
    }
    expect(describeError(errors[0])).toContain('[redacted]');
  });

  it('scrubs a signature the exchange echoes back', async () => {
    const c = client();
    await c.balance();
    const signature = server.calls('GET /api/v4/user/balance')[0]!.params.signature!;
    // Same clock, same query: the next signature is the same, so the server can echo it.
    server.reply('GET /api/v4/user/balance', {
      status: 400,
      body: { statusCode: 400, message: `signature ${signature} rejected` },
    });
    const err = await failure(c.balance());
    expect(err.message).toContain('signature [redacted] rejected');
    expect(err.message).not.toContain(signature);
  });

  it('logs endpoint, status, duration and attempt at debug', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
    await client({ logger }).openOrders();
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 20, endpoint: 'GET /api/v4/spot/open', status: 200, attempt: 1 });
    expect(typeof entry.durationMs).toBe('number');
  });
});
