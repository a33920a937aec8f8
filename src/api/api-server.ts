/**
 * The daemon's HTTP face (Hono on @hono/node-server): the public routes (/healthz, /readyz, /metrics), the
 * dashboard at / (static files; its data comes from the API), and the control API under /api/v1 (token). Every
 * read and action goes through the operator layer (src/operator/); no request does heavy work on the engine's
 * path.
 */
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { LogBudget } from '../ops/log-budget.js';
import type { Logger } from '../ops/logger.js';
import type { Operator } from '../operator/operator.js';
import type { Timers } from '../ports/clock.js';
import { AuthFailures, probeGuard, operatorAuth } from './auth.js';
import { dashboardRoutes } from './dashboard-routes.js';
import { liveStream } from './live-stream.js';
import type { DaemonMetrics } from './daemon-metrics.js';
import { type ProbeState, startListener } from './probes.js';
import { publicRoutes, readinessNow } from './public-routes.js';
import type { ReadinessOptions } from './readiness.js';
import { fail, remoteAddress } from './responses.js';
import { v1Routes } from './v1-routes.js';

export interface ApiDeps {
  operator: Operator;
  now: () => number;
  /** The wall clock's timers (the live stream's pace). */
  wall: Timers;
  logger: Logger;
  /** Bearer token of /api/v1; undefined: loopback clients only, no other web origin (see auth.ts). */
  token: string | undefined;
  metrics: DaemonMetrics;
  /** Balances in /metrics (METRICS_BALANCES). */
  metricsBalances: boolean;
  readiness?: ReadinessOptions;
  /** The daemon's phase and loops, for /healthz (probes.ts); without it /healthz says only that the process answers. */
  probes?: ProbeState;
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
  const { read } = deps.operator;
  const pub = { read, now: deps.now, metrics: deps.metrics, readiness: deps.readiness, probes: deps.probes };
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
    return fail(c, 'E_INTERNAL', 'internal error (logged)');
  });
  app.notFound((c) => fail(c, 'E_NOT_FOUND', `no such endpoint: ${c.req.method} ${c.req.path}`));

  app.use('/readyz', probeGuard(deps.token));
  app.use('/metrics', probeGuard(deps.token));
  app.route('/', publicRoutes(pub));
  app.route('/', dashboardRoutes({ token: deps.token }));
  // Everything under /api/v1 needs the token (or, without one, a local request from no other origin).
  app.use(
    '/api/v1/*',
    operatorAuth({
      token: deps.token,
      failures: new AuthFailures(quiet, deps.now),
      source: remoteAddress,
      authenticated: (c) => authenticated.add(c.req.raw),
    }),
  );
  app.use('/api/v1/*', bodyLimit({ maxSize: 16 * 1024, onError: (c) => fail(c, 'E_TOO_LARGE', 'body over 16 KiB') }));
  app.get('/api/v1/stream', liveStream({ read, wall: deps.wall, ready: () => readinessNow(pub), logger: log }));
  app.route('/api/v1', v1Routes(deps.operator));
  return app;
}

/** Listens on host:port (port 0: a free one); resolves once listening. */
export async function startApiServer(deps: ApiDeps & { host: string; port: number }): Promise<ApiServer> {
  const listener = await startListener(deps.host, deps.port, createApi(deps), deps.logger);
  logApiListener(deps.logger, listener.url, deps.token);
  return listener;
}

/** The line saying where the control API listens. */
export function logApiListener(logger: Logger, url: string, token: string | undefined): void {
  logger.info(
    { url },
    `control API and dashboard on ${url}${token === undefined ? ' (no API_TOKEN: local requests only)' : ''}`,
  );
}
