/**
 * The daemon's HTTP face (Hono on @hono/node-server): the public routes (/healthz, /readyz, /metrics), the
 * dashboard at / (static files; its data comes from the API), and the control API under /api/v1 (token). Every
 * read and action goes through the operator layer (src/operator/); no request does heavy work on the engine's
 * path.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { LogBudget } from '../ops/log-budget.js';
import type { Logger } from '../ops/logger.js';
import type { Operator } from '../operator/operator.js';
import { AuthFailures, localOnlyWithoutToken, operatorAuth, type Refuse } from './auth.js';
import { dashboardRoutes } from './dashboard-routes.js';
import type { DaemonMetrics } from './metrics.js';
import { publicRoutes, readinessNow } from './public-routes.js';
import type { ReadinessOptions } from './readiness.js';
import { fail, remoteAddress } from './responses.js';
import { v1Routes } from './v1-routes.js';

export interface ApiDeps {
  operator: Operator;
  now: () => number;
  logger: Logger;
  /** Bearer token of /api/v1; undefined: loopback clients only, no other web origin (see auth.ts). */
  token: string | undefined;
  metrics: DaemonMetrics;
  /** Balances in /metrics (METRICS_BALANCES). */
  metricsBalances: boolean;
  readiness?: ReadinessOptions;
}

/**
 * Log lines per minute that requests nobody authenticated may cause (failed authentications, errors of the
 * open routes); the rest are counted in one line. A flood of such requests cannot fill the disk.
 */
const UNAUTHENTICATED_LOG_LINES_PER_MINUTE = 20;

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** The Hono application: the public routes, the page, and the control API behind its token. */
export function createApi(deps: ApiDeps): Hono {
  const app = new Hono();
  const log = deps.logger.child({ component: 'api' });
  const quiet = new LogBudget(log, deps.now, {
    linesPerWindow: UNAUTHENTICATED_LOG_LINES_PER_MINUTE,
    windowMs: 60_000,
    what: 'requests without authentication',
  });
  const authenticated = new WeakSet<Request>();
  const refuse: Refuse = (c, status, code, message) => fail(c, status, code, message);
  const { read } = deps.operator;
  const pub = { read, now: deps.now, metrics: deps.metrics, readiness: deps.readiness };
  deps.metrics.bind({
    read,
    now: deps.now,
    balances: deps.metricsBalances,
    ready: () => readinessNow(pub).ready,
    build: deps.operator.build,
  });

  app.onError((err, c) => {
    const line = (l: Logger) => l.error({ err, path: c.req.path.slice(0, 200) }, 'control API: request failed');
    if (authenticated.has(c.req.raw)) line(log);
    else quiet.line(line);
    return fail(c, 500, 'E_INTERNAL', 'internal error (logged)');
  });
  app.notFound((c) => fail(c, 404, 'E_NOT_FOUND', `no such endpoint: ${c.req.method} ${c.req.path}`));

  app.use('/readyz', localOnlyWithoutToken(deps.token, refuse));
  app.use('/metrics', localOnlyWithoutToken(deps.token, refuse));
  app.route('/', publicRoutes(pub));
  app.route('/', dashboardRoutes({ token: deps.token }));
  // Everything under /api/v1 needs the token (or, without one, a local request from no other origin).
  app.use(
    '/api/v1/*',
    operatorAuth({
      token: deps.token,
      failures: new AuthFailures(quiet, deps.now),
      source: remoteAddress,
      refuse,
      authenticated: (c) => authenticated.add(c.req.raw),
    }),
  );
  app.use(
    '/api/v1/*',
    bodyLimit({ maxSize: 16 * 1024, onError: (c) => fail(c, 413, 'E_TOO_LARGE', 'body over 16 KiB') }),
  );
  app.route('/api/v1', v1Routes(deps.operator));
  return app;
}

/** Listens on host:port (port 0: a free one); resolves once listening. */
export async function startApiServer(deps: ApiDeps & { host: string; port: number }): Promise<ApiServer> {
  const app = createApi(deps);
  let server: ServerType | undefined;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve({ fetch: app.fetch, hostname: deps.host, port: deps.port }, resolve);
    server.once('error', reject);
  });
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  deps.logger.info(
    { url },
    `control API and dashboard on ${url}${deps.token === undefined ? ' (no API_TOKEN: local requests only)' : ''}`,
  );
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as ServerType & { closeAllConnections?: () => void };
        s.close(() => resolve());
        // Keep-alive connections (an open dashboard) would hold close() open.
        s.closeAllConnections?.();
      }),
  };
}
