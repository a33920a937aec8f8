/**
 * The simulated exchange's HTTP server: the seven endpoints of spot-api.md plus cancel, over the one matching
 * engine (design.md invariant 6), with the live exchange's envelopes (exchange-notes.md), so the bot's signed
 * client talks to it exactly as to the exchange. node:http on 127.0.0.1 by default; no framework.
 *
 * Answers:
 * - success: 200 `{"status":"ok","data":…}`; open orders as `{"orders":[…]}`; create and cancel return the
 *   order record as it stands after matching.
 * - a private endpoint's refusal: 400 `{"status":"BROKER_ERROR","code":<6101…6120>,"data":{"requestId":"<uuid>"},
 *   "message":"…"}` with the codes of error-codes.ts; a bad query value is INVALID_QUERY (6120) naming it.
 * - a public endpoint's refusal: 400 `{"statusCode":400,"message":"…","error":"Bad Request"}`; the same shape
 *   for 401 (authentication, see auth.ts), 404 (unknown path), 405 (known path, other method), 413 (body over
 *   maxBodyBytes) and 500 (a bug: logged with its requestId, which the message quotes).
 * Parameters: query and JSON body, as request-params.ts documents (fields in both must agree).
 *
 * Demo credentials and funding: without `credentials` the one account is DEMO_CREDENTIALS, a public pair
 * documented here and in README.md (never use it beyond the local simulator), funded with
 * DEFAULT_PAPER_BALANCES: 10000 USDT, 10000 USDC and 0.5 BTC.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BotError } from '../errors.js';
import { silentLogger, type Logger } from '../ops/logger.js';
import type { ClockReading } from '../ports/clock.js';
import { wallClock } from '../clocks/wall-clock.js';
import type { HistoryQuery } from '../ports/venue.js';
import { authenticate } from './auth.js';
import { SimRejectError } from './error-codes.js';
import type { PriceFeed } from './feeds.js';
import { MatchingEngine } from './matching-engine.js';
import { Params, parseBody, parseQuery } from './request-params.js';

export interface SimCredentials {
  apiKey: string;
  apiSecret: string;
}

/** The documented demo pair: public, for the local simulator only. */
export const DEMO_CREDENTIALS: SimCredentials = Object.freeze({
  apiKey: 'DEMO-SIM-KEY',
  apiSecret: 'DEMO-SIM-SECRET-public-do-not-use-elsewhere',
});

/** The paper account's default funding by asset code. */
export const DEFAULT_PAPER_BALANCES: Record<string, string> = Object.freeze({
  USDT: '10000',
  USDC: '10000',
  BTC: '0.5',
});

export interface SimServerOptions {
  /** Default: new MatchingEngine() with the default market. */
  engine?: MatchingEngine;
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Default DEMO_CREDENTIALS; the account is created and funded unless the engine already has it (restored). */
  credentials?: SimCredentials;
  /** Funding by asset code, default DEFAULT_PAPER_BALANCES. */
  balances?: Record<string, string>;
  /** Default: none (prices only move through engine.onPrice/onTicker). */
  feed?: PriceFeed;
  /** Accepted |now - timestamp|, default 10_000. */
  timestampWindowMs?: number;
  /** For the timestamp window, default the system clock. */
  clock?: ClockReading;
  /** Serve DELETE /api/v4/spot/order (default true). */
  cancel?: boolean;
  logger?: Logger;
  /** Largest request body accepted, default 64 KiB (an order is well under 1 KiB). */
  maxBodyBytes?: number;
}

export interface SimServer {
  /** e.g. http://127.0.0.1:40123 */
  readonly url: string;
  readonly engine: MatchingEngine;
  readonly credentials: SimCredentials;
  /** Stops the feed and the server, waits for requests in flight. */
  close(): Promise<void>;
}

interface Context {
  apiKey: string;
  params: Params;
}

interface Route {
  signed: boolean;
  names: ReadonlySet<string>;
  handle(ctx: Context): unknown;
}

/** A body larger than this is not even drained: the connection is dropped. */
const DRAIN_LIMIT_BYTES = 16 << 20;
/** close() stops waiting for slow requests after this long and drops their connections. */
const CLOSE_GRACE_MS = 5_000;

const HISTORY_NAMES = ['side', 'symbol', 'hideCanceled', 'pageSize', 'page', 'timeFrom', 'timeTo'];
const ORDER_NAMES = ['symbol', 'side', 'type', 'quantity', 'price', 'stopPrice', 'limitPrice', 'quoteOrderQty'];

class BodyTooLarge extends Error {}

function publicBody(status: number, message: string) {
  return { statusCode: status, message, error: STATUS_CODES[status] ?? 'Error' };
}

function historyQuery(p: Params): HistoryQuery {
  const side = p.text('side');
  if (side !== undefined && side !== 'BUY' && side !== 'SELL')
    throw new SimRejectError('INVALID_QUERY', `side must be BUY or SELL, got ${JSON.stringify(side)}`, {
      field: 'side',
    });
  return {
    side,
    symbol: p.text('symbol'),
    hideCanceled: p.bool('hideCanceled'),
    pageSize: p.int('pageSize'),
    page: p.int('page'),
    timeFrom: p.text('timeFrom'),
    timeTo: p.text('timeTo'),
  };
}

function routesFor(engine: MatchingEngine, feed: PriceFeed | undefined, cancel: boolean): Map<string, Route> {
  const route = (signed: boolean, names: string[], handle: Route['handle']): Route => ({
    signed,
    names: new Set(signed ? [...names, 'timestamp', 'signature'] : names),
    handle,
  });
  const routes = new Map<string, Route>([
    [
      'GET /api/v3/spot/market_watch',
      route(false, ['symbol'], async ({ params }) => {
        const symbol = params.text('symbol');
        await feed?.beforeMarketWatch?.();
        return engine.tickers(symbol);
      }),
    ],
    ['GET /api/v3/spot/config', route(false, ['symbol'], ({ params }) => engine.pairConfigs(params.text('symbol')))],
    [
      'GET /api/v4/user/balance',
      route(true, ['type', 'currency'], ({ apiKey, params }) => {
        const type = params.int('type');
        if (type === undefined)
          throw new SimRejectError('INVALID_QUERY', 'type is required (0 spot, 2 future)', { field: 'type' });
        return engine.balances(apiKey, { type, currency: params.int('currency') });
      }),
    ],
    [
      'GET /api/v4/spot/open',
      route(true, ['filterByPair'], ({ apiKey, params }) => ({
        orders: engine.openOrders(apiKey, params.text('filterByPair')),
      })),
    ],
    [
      'GET /api/v4/spot/history',
      route(true, HISTORY_NAMES, ({ apiKey, params }) => engine.orderHistory(apiKey, historyQuery(params))),
    ],
    [
      'GET /api/v4/spot/trade',
      route(true, HISTORY_NAMES, ({ apiKey, params }) => engine.tradeHistory(apiKey, historyQuery(params))),
    ],
    [
      'POST /api/v4/spot/order',
      route(true, [...ORDER_NAMES, 'useQuoteQty'], ({ apiKey, params }) =>
        engine.placeOrder(apiKey, {
          symbol: params.required('symbol'),
          side: params.required('side'),
          type: params.required('type'),
          quantity: params.amount('quantity'),
          price: params.amount('price'),
          stopPrice: params.amount('stopPrice'),
          limitPrice: params.amount('limitPrice'),
          quoteOrderQty: params.amount('quoteOrderQty'),
          useQuoteQty: params.bool('useQuoteQty'),
        }),
      ),
    ],
  ]);
  if (cancel) {
    routes.set(
      'DELETE /api/v4/spot/order',
      route(true, ['symbol', 'displayingId', 'allowNotification'], ({ apiKey, params }) => {
        // Validated for the client's sake; there is nobody to notify.
        params.bool('allowNotification');
        return engine.cancelOrder(apiKey, params.required('symbol'), params.required('displayingId'));
      }),
    );
  }
  return routes;
}

/** The body as text; past `limit` bytes the rest is drained (up to DRAIN_LIMIT_BYTES) and BodyTooLarge thrown. */
async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > DRAIN_LIMIT_BYTES) {
      req.socket.destroy();
      throw new BodyTooLarge();
    }
    if (size <= limit) chunks.push(chunk);
  }
  if (size > limit) throw new BodyTooLarge();
  return Buffer.concat(chunks).toString('utf8');
}

export async function startSimServer(options: SimServerOptions = {}): Promise<SimServer> {
  const engine = options.engine ?? new MatchingEngine();
  const credentials = options.credentials ?? DEMO_CREDENTIALS;
  const host = options.host ?? '127.0.0.1';
  const clock = options.clock ?? wallClock;
  const windowMs = options.timestampWindowMs ?? 10_000;
  const maxBody = options.maxBodyBytes ?? 64 * 1024;
  const logger = options.logger ?? silentLogger;
  const feed = options.feed;
  // A restored engine (paper trading resumed from its ledger) already holds the account, with its balances.
  if (!engine.hasAccount(credentials.apiKey))
    engine.createAccount({ apiKey: credentials.apiKey, balances: options.balances ?? DEFAULT_PAPER_BALANCES });
  const secrets = new Map([[credentials.apiKey, credentials.apiSecret]]);
  const routes = routesFor(engine, feed, options.cancel ?? true);
  const paths = new Map<string, string[]>();
  for (const key of routes.keys()) {
    const [method = '', path = ''] = key.split(' ');
    paths.set(path, [...(paths.get(path) ?? []), method]);
  }

  let closing = false;

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    if (res.headersSent || res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...(closing ? { connection: 'close' } : {}),
      ...headers,
    });
    res.end(text);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<number> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    const method = req.method ?? 'GET';
    let bodyText: string;
    try {
      bodyText = await readBody(req, maxBody);
    } catch (err) {
      // The client went away mid-body: nobody to answer (logged as nginx's 499).
      if (!(err instanceof BodyTooLarge)) {
        if (req.destroyed) return 499;
        throw err;
      }
      send(res, 413, publicBody(413, `request body is over ${maxBody} bytes`), { connection: 'close' });
      return 413;
    }
    const endpoint = `${method} ${path}`;
    const route = routes.get(endpoint);
    if (!route) {
      const allowed = paths.get(path);
      if (allowed) {
        send(res, 405, publicBody(405, `${endpoint}: method not allowed; this path takes ${allowed.join(', ')}`), {
          allow: allowed.join(', '),
        });
        return 405;
      }
      send(res, 404, publicBody(404, `Cannot ${endpoint}`));
      return 404;
    }
    let apiKey = '';
    if (route.signed) {
      const header = req.headers['x-api-key'];
      const auth = authenticate(
        { rawQuery, apiKey: Array.isArray(header) ? header[0] : header },
        { secretOf: (key) => secrets.get(key), now: clock.now(), windowMs },
      );
      if (!auth.ok) {
        send(res, 401, publicBody(401, auth.message));
        return 401;
      }
      apiKey = auth.apiKey;
    }
    try {
      const body = method === 'GET' ? {} : parseBody(bodyText);
      const params = new Params(parseQuery(rawQuery), body, route.names);
      const data = await route.handle({ apiKey, params });
      send(res, 200, { status: 'ok', data });
      return 200;
    } catch (err) {
      if (!(err instanceof SimRejectError)) throw err;
      if (route.signed) {
        send(res, 400, { status: 'BROKER_ERROR', code: err.exchangeCode, data: { requestId }, message: err.message });
      } else {
        send(res, 400, publicBody(400, err.message));
      }
      return 400;
    }
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    const path = req.url?.split('?')[0];
    void handle(req, res, requestId)
      .catch((err: unknown) => {
        logger.error({ err, requestId, method: req.method, path }, 'sim request failed');
        send(res, 500, publicBody(500, `internal error (requestId ${requestId})`));
        return 500;
      })
      .then((status) => {
        const durationMs = Math.round((performance.now() - started) * 100) / 100;
        logger.debug({ method: req.method, path, status, durationMs }, 'sim request');
      });
  });
  // Longer than undici's default keep-alive (4 s), so a pooled client never writes to a socket the server closes.
  server.keepAliveTimeout = 10_000;

  await feed?.start(engine);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await feed?.stop();
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new BotError('E_SIM_LISTEN', `simulated exchange cannot listen on ${host}:${options.port ?? 0} (${reason})`, {
      cause: err,
    });
  }
  const { port } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info({ url }, 'simulated exchange listening');

  let closed: Promise<void> | undefined;
  return {
    url,
    engine,
    credentials,
    close() {
      closed ??= (async () => {
        closing = true;
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
        await drained;
        clearTimeout(grace);
        await feed?.stop();
        logger.debug('simulated exchange closed');
      })();
      return closed;
    },
  };
}
