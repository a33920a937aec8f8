/**
 * A real HTTP server on 127.0.0.1 that checks signatures the way the exchange does: it recomputes the HMAC
 * over the RAW query string it received (everything before `&signature=`), answers 401 in the exchange's
 * shape on a mismatch, records every request, and serves scripted answers per route.
 */
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string exactly as received, without the leading '?'. */
  rawQuery: string;
  /** Parameter names in received order. */
  names: string[];
  /** Decoded parameter values by name. */
  params: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the signature (if any was required) checked out. */
  verified: boolean;
  /** Whether the whole answer was written (a trickling one cut off by the client never is). */
  answered: boolean;
}

export interface Reply {
  status?: number;
  /** Serialised with JSON.stringify unless it is a string (sent raw). */
  body?: unknown;
  headers?: Record<string, string>;
  /** Destroy the socket instead of answering (a reset after the request was sent). */
  destroy?: boolean;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
  /** Write the answer one byte every this many ms (each byte well within any inactivity limit). */
  trickleMs?: number;
  /** This many spaces before the JSON (still valid JSON): an answer of any size. */
  padBytes?: number;
}

export interface SigningServer {
  url: string;
  requests: RecordedRequest[];
  /** Queue one-shot answers for `METHOD /path`; once used up, the route's default answers again. */
  reply(route: string, ...replies: Reply[]): void;
  /** Requests received for a route. */
  calls(route: string): RecordedRequest[];
  close(): Promise<void>;
}

export const ok = (data: unknown): Reply => ({ status: 200, body: { status: 'ok', data } });

export function orderRecord(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: '665f1c2e9b1e8a0012345678',
    displayingId: 1001,
    userId: 7,
    symbol: 'BTCUSDT',
    side: 'BUY',
    type: 'LIMIT',
    status: 'NEW',
    price: 50000,
    stopPrice: 0,
    limitPrice: null,
    executedPrice: 0,
    quantity: 0.01,
    executedQty: 0,
    quoteQty: 500,
    executedQuoteQty: 0,
    useQuoteQty: false,
    ocoOrderId: null,
    createdAt: '2024-05-01T00:00:00.000Z',
    updatedAt: '2024-05-01T00:00:00.000Z',
    metadata: {},
    feeMetadata: { assetId: 2, asset: 'BTC', value: 0, feeRatio: 0.001, executed: 0 },
    ...overrides,
  };
}

export const tradeRecord = {
  _id: 't-1',
  symbol: 'BTCUSDT',
  side: 'BUY',
  displayingId: '9001',
  orderId: 1001,
  price: 50000,
  baseQty: 0.01,
  quoteQty: 500,
  flag: 'BUY_ORDER_FILL',
  createdAt: '2024-05-01T00:00:01.000Z',
  baseAssetId: 2,
  quoteAssetId: 1,
  feeMetadata: { feeValue: 0.30000000000000004, feeAssetId: 2, feeAsset: 'BTC', feeRatio: 0.001, quoteQty: 500 },
};

export const pairConfigRecord = {
  symbol: 'BTCUSDT',
  status: 'TRADING',
  baseAsset: 'BTC',
  baseAssetPrecision: 6,
  quoteAsset: 'USDT',
  quotePrecision: 2,
  orderTypes: ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'],
  filters: [{ filterType: 'PRICE_FILTER', minPrice: 0.01, maxPrice: 1000000, tickSize: 0.01 }],
  permissions: ['SPOT'],
  liquidityBroker: 'X',
};

export const tickerRecord = {
  s: 'BTCUSDT',
  p: 63000.5,
  t: 1714521600000,
  h: 64000,
  l: 62000,
  b: 'BTC',
  q: 'USDT',
  lbl: 'x',
};

const DEFAULTS: Record<string, Reply> = {
  'GET /api/v4/user/balance': ok({ '1': { value: 1000, locked_value: 0, type: 0 } }),
  'GET /api/v4/spot/history': ok([orderRecord({ status: 'FILLED' })]),
  'GET /api/v4/spot/trade': ok([tradeRecord]),
  'GET /api/v4/spot/open': ok({ orders: [orderRecord()] }),
  'POST /api/v4/spot/order': ok(orderRecord()),
  'DELETE /api/v4/spot/order': ok(orderRecord({ status: 'CANCELED' })),
  'GET /api/v3/spot/config': ok([pairConfigRecord]),
  'GET /api/v3/spot/market_watch': ok([tickerRecord]),
};

/** The exchange's own 401 body (exchange-notes.md). */
const unauthorized = (message: string): Reply => ({
  status: 401,
  body: { statusCode: 401, message, error: 'Unauthorized' },
});

function verify(rawQuery: string, headers: IncomingHttpHeaders, apiKey: string, apiSecret: string): string | undefined {
  if (headers['x-api-key'] !== apiKey) return 'Invalid API key';
  const at = rawQuery.lastIndexOf('&signature=');
  if (at < 0) return 'Missing API key, signature, or timestamp';
  const signed = rawQuery.slice(0, at);
  const signature = rawQuery.slice(at + '&signature='.length);
  if (!/(^|&)timestamp=\d+$/.test(signed)) return 'timestamp must be the last signed parameter';
  const expected = createHmac('sha256', apiSecret).update(signed).digest('hex');
  return signature === expected ? undefined : 'Invalid signature';
}

function send(res: ServerResponse, reply: Reply): void {
  const body = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? null);
  res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
  if (reply.padBytes !== undefined) {
    const chunk = Buffer.alloc(64 * 1024, ' ');
    for (let left = reply.padBytes; left > 0 && !res.destroyed; left -= chunk.length)
      res.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
  }
  if (reply.trickleMs === undefined) return void res.end(body);
  let at = 0;
  const timer = setInterval(() => {
    if (res.destroyed) return clearInterval(timer);
    res.write(body.slice(at, at + 1));
    if (++at >= body.length) {
      clearInterval(timer);
      res.end();
    }
  }, reply.trickleMs);
}

export async function startSigningServer(credentials: { apiKey: string; apiSecret: string }): Promise<SigningServer> {
  const requests: RecordedRequest[] = [];
  const queues = new Map<string, Reply[]>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const [path = '', rawQuery = ''] = (req.url ?? '').split(/\?(.*)/s);
      const pairs = rawQuery === '' ? [] : rawQuery.split('&').map((p) => p.split(/=(.*)/s) as [string, string]);
      const route = `${req.method} ${path}`;
      const problem = path.startsWith('/api/v4/')
        ? verify(rawQuery, req.headers, credentials.apiKey, credentials.apiSecret)
        : undefined;
      requests.push({
        method: req.method ?? '',
        path,
        rawQuery,
        names: pairs.map(([n]) => n),
        params: Object.fromEntries(pairs.map(([n, v]) => [n, decodeURIComponent(v ?? '')])),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        verified: problem === undefined,
        answered: false,
      });
      const recorded = requests[requests.length - 1]!;
      res.on('finish', () => (recorded.answered = true));
      if (problem !== undefined) return send(res, unauthorized(problem));
      const reply = queues.get(route)?.shift() ?? DEFAULTS[route] ?? { status: 404, body: 'not found' };
      if (reply.destroy) return req.socket.destroy();
      if (reply.hang) return;
      send(res, reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    reply(route, ...replies) {
      queues.set(route, [...(queues.get(route) ?? []), ...replies]);
    },
    calls: (route) => requests.filter((r) => `${r.method} ${r.path}` === route),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 with nothing listening: connections to it are refused. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
