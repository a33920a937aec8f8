import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ExchangeClient } from '../../src/exchange/client.js';
import { ExchangeClientError } from '../../src/exchange/errors.js';
import { sign } from '../../src/wire/signing.js';
import type { PriceFeed } from '../../src/sim/feeds.js';
import { SIM_ERROR_CODES } from '../../src/sim/error-codes.js';
import {
  DEFAULT_PAPER_BALANCES,
  DEMO_CREDENTIALS,
  type SimServer,
  type SimServerOptions,
  startSimServer,
} from '../../src/sim/sim-server.js';
import { raw, rawSigned, signed } from './server-fixtures.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const CREDS = { apiKey: 'server-test-key', apiSecret: 'server-test-secret-do-not-print' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(options: SimServerOptions = {}): Promise<SimServer> {
  const server = await startSimServer({ credentials: CREDS, ...options });
  cleanups.push(() => server.close());
  server.engine.onPrice('BTCUSDT', 60000, T0);
  return server;
}

function client(server: SimServer, overrides: Partial<ConstructorParameters<typeof ExchangeClient>[0]> = {}) {
  const c = new ExchangeClient({
    baseUrl: server.url,
    ...server.credentials,
    rateLimit: false,
    retry: { maxAttempts: 1 },
    ...overrides,
  });
  cleanups.push(() => c.close());
  return c;
}

async function failure(promise: Promise<unknown>): Promise<ExchangeClientError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExchangeClientError);
  return err as ExchangeClientError;
}

/** A feed whose market-watch hook runs `hook` (for bugs and slow requests). */
function hookFeed(hook: () => Promise<void> | void): PriceFeed {
  return { progress: { fed: 0, done: false }, start: () => undefined, stop: () => undefined, beforeMarketWatch: hook };
}

describe('simulated exchange server through the signed client', () => {
  it('defaults to the documented demo pair and paper funding', async () => {
    const server = await startSimServer();
    cleanups.push(() => server.close());
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.credentials).toEqual(DEMO_CREDENTIALS);
    const wallet = await client(server).balance();
    expect(wallet['2']).toMatchObject({ value: Number(DEFAULT_PAPER_BALANCES.USDT), locked_value: 0 });
    expect(wallet['3']).toMatchObject({ value: Number(DEFAULT_PAPER_BALANCES.USDC) });
    expect(wallet['1']).toMatchObject({ value: Number(DEFAULT_PAPER_BALANCES.BTC) });
  });

  it('serves every endpoint: market watch with every key fed, config, balance, open, create, history, trades, cancel', async () => {
    const server = await serve({ balances: { USDT: '100000', BTC: '1' } });
    server.engine.onTicker({ s: 'BTCUSDC', p: 59990.5, t: T0 + 1, h: 61000, lbl: 'x', extra: { k: [1] } });
    const c = client(server);
    const [usdc] = await c.marketWatchEntries('BTCUSDC');
    expect(usdc).toEqual({
      s: 'BTCUSDC',
      p: 59990.5,
      t: T0 + 1,
      h: 61000,
      lbl: 'x',
      extra: { k: [1] },
      b: 'BTC',
      q: 'USDC',
      bi: 1,
      qi: 3,
    });
    expect((await c.marketWatchEntries()).map((t) => t.s).sort()).toEqual(['BTCUSDC', 'BTCUSDT']);
    expect((await c.pairConfig()).map((p) => p.symbol)).toEqual(['BTCUSDT', 'BTCUSDC', 'ETHUSDT']);
    expect(await c.pairConfig('NOPE')).toEqual([]);
    expect(await c.balance({ type: 2, currency: 2 })).toEqual({ '2': { value: 0, locked_value: 0, type: 2 } });

    const placed = await c.createOrder({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity: '0.5',
      price: '59000',
    });
    expect(placed).toMatchObject({ status: 'NEW', price: 59000, quantity: 0.5 });
    expect((await c.openOrders('BTCUSDT')).map((o) => o.displayingId)).toEqual([placed.displayingId]);
    const sold = await c.createOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.1' });
    expect(sold.status).toBe('FILLED');
    expect((await c.tradeHistory()).map((t) => t.orderId)).toEqual([sold.displayingId]);
    const canceled = await c.cancelOrder!('BTCUSDT', placed.displayingId, { allowNotification: true });
    expect(canceled).toMatchObject({ displayingId: placed.displayingId, status: 'CANCELED' });
    expect((await c.orderHistory({ hideCanceled: true, side: 'SELL' })).map((o) => o.displayingId)).toEqual([
      sold.displayingId,
    ]);
  });

  it('the open-orders answer is {orders: […]} on the wire', async () => {
    const server = await serve();
    const res = await rawSigned(server.url, CREDS, 'GET', '/api/v4/spot/open', '');
    expect(res.json).toEqual({ status: 'ok', data: { orders: [] } });
  });

  it('refusals come back as E_EXCHANGE with the exchange code and a requestId', async () => {
    const server = await serve();
    const c = client(server);
    const err = await failure(
      c.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '1', price: '59000' }),
    );
    expect(err).toMatchObject({ code: 'E_EXCHANGE', status: 400, exchangeCode: SIM_ERROR_CODES.INSUFFICIENT_BALANCE });
    expect(err.requestId).toMatch(UUID);
    expect(err.exchangeMessage).toMatch(/needs 59000 USDT free, have 10000/);
    const page = await failure(c.orderHistory({ page: 0 }));
    expect(page).toMatchObject({ code: 'E_EXCHANGE', exchangeCode: SIM_ERROR_CODES.INVALID_QUERY });
    expect(page.exchangeMessage).toMatch(/page/);
  });

  it('authentication failures are E_AUTH: wrong secret, unknown key, stale or future timestamp', async () => {
    const now = { t: Date.now() };
    const server = await serve({ clock: { now: () => now.t }, timestampWindowMs: 5000 });
    const wrongSecret = await failure(client(server, { apiSecret: 'not-the-secret' }).balance());
    expect(wrongSecret).toMatchObject({ code: 'E_AUTH', status: 401, exchangeMessage: 'Invalid signature' });
    const unknownKey = await failure(client(server, { apiKey: 'nobody' }).balance());
    expect(unknownKey).toMatchObject({ code: 'E_AUTH', exchangeMessage: 'Invalid API key' });
    now.t = Date.now() + 60_000;
    const stale = await failure(client(server).balance());
    expect(stale).toMatchObject({ code: 'E_AUTH' });
    expect(stale.exchangeMessage).toMatch(/ms behind server time .*±5000 ms/);
    now.t = Date.now() - 60_000;
    expect((await failure(client(server).openOrders())).exchangeMessage).toMatch(/ahead of server time/);
    now.t = Date.now();
    expect(await client(server).openOrders()).toEqual([]);
  });

  it('answers an unknown path 404 and a path without that method 405, in the public shape', async () => {
    const server = await serve({ cancel: false });
    const prefixed = await failure(client(server, { baseUrl: `${server.url}/nope` }).pairConfig());
    expect(prefixed).toMatchObject({ code: 'E_EXCHANGE', status: 404 });
    expect(prefixed.exchangeMessage).toBe('Cannot GET /nope/api/v3/spot/config');
    const noCancel = await failure(client(server).cancelOrder!('BTCUSDT', '1'));
    expect(noCancel).toMatchObject({ code: 'E_EXCHANGE', status: 405 });
    const res = await raw(server.url, 'DELETE', '/api/v4/spot/order');
    expect(res.json).toEqual({
      statusCode: 405,
      message: 'DELETE /api/v4/spot/order: method not allowed; this path takes POST',
      error: 'Method Not Allowed',
    });
    expect(res.headers.allow).toBe('POST');
  });
});

describe('simulated exchange server on the raw wire', () => {
  it('answers public-endpoint refusals as {statusCode: 400, message, error}', async () => {
    const server = await serve();
    const res = await raw(server.url, 'GET', '/api/v3/spot/market_watch?symbol=BTCUSDT&bogus=1');
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ statusCode: 400, message: 'unknown query parameter "bogus"', error: 'Bad Request' });
    expect(await raw(server.url, 'GET', '/api/v3/spot/config?symbol=A&symbol=B')).toMatchObject({
      status: 400,
      json: { message: 'query parameter symbol is given twice' },
    });
    const notFound = await raw(server.url, 'GET', '/api/v9/nothing');
    expect(notFound).toMatchObject({
      status: 404,
      json: { statusCode: 404, message: 'Cannot GET /api/v9/nothing', error: 'Not Found' },
    });
  });

  it('answers 401 in the public shape and never shows the secret or the expected signature', async () => {
    const server = await serve();
    const missing = await raw(server.url, 'GET', `/api/v4/spot/open?${signed(CREDS, '')}`);
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({
      statusCode: 401,
      message: 'Missing API key, signature, or timestamp',
      error: 'Unauthorized',
    });
    const key = { 'x-api-key': CREDS.apiKey };
    const ts = Date.now();
    const text = `filterByPair=BTCUSDT&timestamp=${ts}`;
    const expected = sign(CREDS.apiSecret, text);
    const tampered = await raw(
      server.url,
      'GET',
      `/api/v4/spot/open?filterByPair=BTCUSDC&timestamp=${ts}&signature=${expected}`,
      {
        headers: key,
      },
    );
    expect(tampered).toMatchObject({ status: 401, json: { message: 'Invalid signature' } });
    const bad = await raw(server.url, 'GET', `/api/v4/spot/open?${text}&signature=${'0'.repeat(64)}`, { headers: key });
    expect(bad.json).toMatchObject({ message: 'Invalid signature' });
    for (const r of [tampered, bad]) {
      expect(r.text).not.toContain(CREDS.apiSecret);
      expect(r.text).not.toContain(sign(CREDS.apiSecret, `filterByPair=BTCUSDC&timestamp=${ts}`));
    }
    expect(bad.text).not.toContain(expected);

    const notLast = await raw(
      server.url,
      'GET',
      `/api/v4/spot/open?timestamp=${ts}&signature=${sign(CREDS.apiSecret, `timestamp=${ts}`)}&filterByPair=BTCUSDT`,
      {
        headers: key,
      },
    );
    expect(notLast.json).toMatchObject({ statusCode: 401, message: 'signature must be the last query parameter' });
    const tsFirst = `timestamp=${ts}&filterByPair=BTCUSDT`;
    const timestampNotLast = await raw(
      server.url,
      'GET',
      `/api/v4/spot/open?${tsFirst}&signature=${sign(CREDS.apiSecret, tsFirst)}`,
      {
        headers: key,
      },
    );
    expect(timestampNotLast.json).toMatchObject({
      message: 'timestamp must be the last signed parameter, just before signature',
    });
  });

  it('verifies the signature over the raw query, then decodes it', async () => {
    const server = await serve();
    const placed = await rawSigned(
      server.url,
      CREDS,
      'POST',
      '/api/v4/spot/order',
      'symbol=BTC%55SDT&side=BUY&type=LIMIT&quantity=0.01&price=50000',
    );
    expect(placed).toMatchObject({ status: 200, json: { status: 'ok', data: { symbol: 'BTCUSDT', status: 'NEW' } } });
    const bad = await rawSigned(server.url, CREDS, 'GET', '/api/v4/spot/open', 'filterByPair=%E0%A4%A');
    expect(bad.json).toMatchObject({ status: 'BROKER_ERROR', code: SIM_ERROR_CODES.INVALID_QUERY });
  });

  it('takes order fields from the JSON body too, and refuses a body that disagrees with the query', async () => {
    const server = await serve();
    const body = JSON.stringify({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: 0.0000001, price: '50000' });
    const fromBody = await rawSigned(server.url, CREDS, 'POST', '/api/v4/spot/order', 'symbol=BTCUSDT', body);
    // 0.0000001 came as a JSON number (1e-7 once parsed) and is read exactly: finer than the 6-decimal step.
    expect(fromBody.json).toMatchObject({ status: 'BROKER_ERROR', code: SIM_ERROR_CODES.QUANTITY_PRECISION });
    const agreeing = JSON.stringify({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity: 0.01,
      price: 50000,
      useQuoteQty: false,
    });
    const ok = await rawSigned(
      server.url,
      CREDS,
      'POST',
      '/api/v4/spot/order',
      'quantity=0.010&useQuoteQty=false',
      agreeing,
    );
    expect(ok).toMatchObject({ status: 200, json: { data: { quantity: 0.01, price: 50000 } } });
    const mismatch = await rawSigned(
      server.url,
      CREDS,
      'POST',
      '/api/v4/spot/order',
      'symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0.01&price=50000',
      JSON.stringify({ symbol: 'ETHUSDT' }),
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.json).toMatchObject({
      status: 'BROKER_ERROR',
      code: SIM_ERROR_CODES.INVALID_QUERY,
      data: { requestId: expect.stringMatching(UUID) as string },
      message: 'symbol differs between query ("BTCUSDT") and body ("ETHUSDT")',
    });
    expect(server.engine.openOrders(CREDS.apiKey)).toHaveLength(1);
  });

  it('refuses bad query values with INVALID_QUERY naming the parameter, and missing order fields', async () => {
    const server = await serve();
    const cases: [string, string, string, RegExp][] = [
      ['GET', '/api/v4/spot/history', 'page=abc', /page must be an integer/],
      ['GET', '/api/v4/spot/trade', 'hideCanceled=yes', /hideCanceled must be true or false/],
      ['GET', '/api/v4/spot/history', 'side=buy', /side must be BUY or SELL/],
      ['GET', '/api/v4/user/balance', 'currency=2', /type is required/],
      ['GET', '/api/v4/user/balance', 'type=0&wallet=1', /unknown query parameter "wallet"/],
      ['DELETE', '/api/v4/spot/order', 'symbol=BTCUSDT&displayingId=1&allowNotification=maybe', /allowNotification/],
    ];
    for (const [method, path, query, message] of cases) {
      const res = await rawSigned(server.url, CREDS, method as 'GET', path, query);
      expect(res.status, `${method} ${path}?${query}`).toBe(400);
      expect(res.json).toMatchObject({ status: 'BROKER_ERROR', code: SIM_ERROR_CODES.INVALID_QUERY });
      expect((res.json as { message: string }).message).toMatch(message);
    }
    const noSide = await rawSigned(
      server.url,
      CREDS,
      'POST',
      '/api/v4/spot/order',
      'symbol=BTCUSDT&type=MARKET&quantity=1',
    );
    expect(noSide.json).toMatchObject({ code: SIM_ERROR_CODES.MISSING_FIELD, message: 'side is required' });
  });

  it('survives an oversize body, malformed JSON and a handler bug, and keeps serving', async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    );
    const server = await serve({
      maxBodyBytes: 1024,
      logger,
      feed: hookFeed(() => {
        throw new Error('feed bug');
      }),
    });
    const big = await rawSigned(server.url, CREDS, 'POST', '/api/v4/spot/order', 'symbol=BTCUSDT', 'x'.repeat(200_000));
    expect(big).toMatchObject({
      status: 413,
      json: { statusCode: 413, message: 'request body is over 1024 bytes', error: 'Payload Too Large' },
    });
    const malformed = await rawSigned(
      server.url,
      CREDS,
      'POST',
      '/api/v4/spot/order',
      'symbol=BTCUSDT',
      '{"side": BUY',
    );
    expect(malformed).toMatchObject({
      status: 400,
      json: { status: 'BROKER_ERROR', code: SIM_ERROR_CODES.INVALID_QUERY },
    });
    expect((malformed.json as { message: string }).message).toMatch(/^request body is not valid JSON/);
    const notObject = await rawSigned(server.url, CREDS, 'DELETE', '/api/v4/spot/order', '', '[1]');
    expect(notObject.json).toMatchObject({ message: 'request body must be a JSON object of fields' });

    const bug = await raw(server.url, 'GET', '/api/v3/spot/market_watch');
    expect(bug.status).toBe(500);
    const { message } = bug.json as { message: string };
    expect(bug.json).toMatchObject({ statusCode: 500, error: 'Internal Server Error' });
    expect(message).not.toContain('feed bug');
    const requestId = /requestId (\S+)\)/.exec(message)?.[1];
    expect(requestId).toMatch(UUID);
    const logged = lines.map((l) => JSON.parse(l) as { requestId?: string; err?: { message: string } });
    expect(logged.find((l) => l.requestId === requestId)?.err?.message).toBe('feed bug');
    expect(lines.join('')).not.toContain(CREDS.apiSecret);

    expect((await client(server).pairConfig('BTCUSDT')).map((p) => p.symbol)).toEqual(['BTCUSDT']);
  });

  it('keeps connections alive for an undici Pool', async () => {
    const server = await serve();
    const pool = new Pool(server.url, { connections: 1 });
    cleanups.push(() => pool.close());
    for (let i = 0; i < 5; i++) {
      const res = await pool.request({ method: 'GET', path: '/api/v3/spot/config?symbol=BTCUSDT' });
      expect(res.statusCode).toBe(200);
      await res.body.text();
    }
    expect(pool.stats.connected).toBe(1);
  });

  it('close() waits for a request in flight, then stops', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let entered: () => void = () => undefined;
    const inHook = new Promise<void>((r) => (entered = r));
    const server = await startSimServer({
      credentials: CREDS,
      feed: hookFeed(async () => {
        entered();
        await gate;
      }),
    });
    const pending = raw(server.url, 'GET', '/api/v3/spot/market_watch');
    await inHook;
    let closed = false;
    const closing = server.close().then(() => (closed = true));
    for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
    expect(closed).toBe(false);
    release();
    expect(await pending).toMatchObject({ status: 200, json: { status: 'ok', data: [] } });
    await closing;
    await expect(raw(server.url, 'GET', '/api/v3/spot/config')).rejects.toThrow();
  });

  it('fails to start with a clear error when the port is taken', async () => {
    const server = await serve();
    const port = Number(new URL(server.url).port);
    await expect(startSimServer({ port })).rejects.toMatchObject({
      code: 'E_SIM_LISTEN',
      message: expect.stringContaining(`127.0.0.1:${port} (EADDRINUSE)`) as string,
    });
  });
});
