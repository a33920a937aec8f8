/**
 * The daemon's HTTP face (Hono on @hono/node-server): /healthz, /readyz and /metrics (open), the control API
 * under /api/v1 (token), and the dashboard at / (static files; its data comes from the API). Reads use the
 * status read model (the one behind `bot status`), cached for a second; actions go through the operator
 * actions, journaled with the caller's address. No request does heavy work on the engine's path.
 */
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import { serve, type ServerType } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { z } from 'zod';
import type { ActionResult, OperatorActions } from '../app/operator-actions.js';
import type { Engine } from '../engine/engine.js';
import { BotError } from '../errors.js';
import type { Logger } from '../ops/logger.js';
import {
  buildStatusView,
  eventRowJson,
  fillJson,
  orderJson,
  type StatusView,
  statusJson,
} from '../status/status-view.js';
import type { JobStats } from '../ports/scheduler.js';
import { EVENT_KINDS } from '../store/events.js';
import type { Store } from '../store/store.js';
import { LogBudget } from '../ops/log-budget.js';
import { AuthFailures, localOnlyWithoutToken, operatorAuth, type Refuse } from './auth.js';
import { dashboardAsset } from './dashboard-assets.js';
import type { DaemonMetrics } from './metrics.js';
import { pnlSeries } from './pnl-series.js';
import { DEFAULT_READINESS, readiness, type ReadinessOptions } from './readiness.js';

export interface ApiDeps {
  store: Store;
  now: () => number;
  logger: Logger;
  /** Bearer token of /api/v1; undefined: loopback clients only, no other web origin (see auth.ts). */
  token: string | undefined;
  killSwitchFile: string;
  actions: OperatorActions;
  engine: Pick<Engine, 'instances' | 'brakes' | 'running' | 'balances'>;
  jobs: () => JobStats[];
  /** Recent prices per symbol (the chart). */
  prices: () => ReadonlyMap<string, readonly { time: number; price: number }[]>;
  /** What runs where: the banner's facts. */
  daemon: { mode: 'live' | 'paper'; venue: string; banner: string };
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

/** How long a status view is reused: the dashboard polls, Prometheus scrapes, the database is read once a second. */
const STATUS_CACHE_MS = 1_000;

/** HTTP status of each operator error code (the code itself goes in the body, stable). */
const ERROR_STATUS: Record<string, 400 | 404 | 409 | 422 | 500 | 502 | 503> = {
  E_UNKNOWN_INSTANCE: 404,
  E_UNKNOWN_ORDER: 404,
  E_NOT_RUNNING: 503,
  E_INSTANCE_STATE: 409,
  E_NOT_CANCELLABLE: 409,
  E_CANCEL_FAILED: 502,
  E_RELOAD_INVALID: 422,
  E_RELOAD_NEEDS_RESTART: 409,
  E_STILL_UNAUTHORIZED: 502,
  E_KILL_SWITCH_FILE: 500,
};

type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 429 | 500 | 502 | 503;

function fail(c: Context, status: ErrorStatus, code: string, message: string, extra: Record<string, unknown> = {}) {
  return c.json({ error: { code, message, ...extra } }, status);
}

/** The first problem of a zod error, naming where (`query.limit`, `body.on`). */
function badRequest(c: Context, where: 'query' | 'body', error: z.ZodError) {
  const issues = error.issues.map((i) => ({ field: [where, ...i.path].join('.'), message: i.message }));
  const first = issues[0];
  return fail(c, 400, 'E_BAD_REQUEST', first ? `${first.field}: ${first.message}` : `${where}: invalid`, { issues });
}

const name = z.string().min(1).max(200);
const cursor = z.coerce
  .number({ error: 'expected a positive integer' })
  .int('expected a positive integer')
  .positive('expected a positive integer');
const limit = (max: number, fallback: number) =>
  z.coerce
    .number({ error: `expected an integer from 1 to ${max}` })
    .int()
    .min(1)
    .max(max)
    .default(fallback);
const OrdersQuery = z.strictObject({ instance: name.optional() });
const FillsQuery = z.strictObject({ instance: name.optional(), before: cursor.optional(), limit: limit(500, 50) });
const EventsQuery = z.strictObject({
  instance: name.optional(),
  kind: z.enum(EVENT_KINDS, { error: 'expected an event kind (see docs/operations.md)' }).optional(),
  before: cursor.optional(),
  limit: limit(500, 50),
});
const PnlQuery = z.strictObject({ instance: name.optional() });
const PauseBody = z.strictObject({ cancelOrders: z.boolean().optional() });
const KillSwitchBody = z.strictObject({ on: z.boolean({ error: 'expected true or false' }) });
const EmptyBody = z.strictObject({});

export interface ApiServer {
  url: string;
  close(): Promise<void>;
}

/** The Hono application (exported for tests that need no socket). */
export function createApi(deps: ApiDeps): Hono {
  const app = new Hono();
  const log = deps.logger.child({ component: 'api' });
  const quiet = new LogBudget(log, deps.now, {
    linesPerWindow: UNAUTHENTICATED_LOG_LINES_PER_MINUTE,
    windowMs: 60_000,
    what: 'requests without authentication',
  });
  const failures = new AuthFailures(quiet, deps.now);
  const authenticated = new WeakSet<Request>();
  const refuse: Refuse = (c, status, code, message) => fail(c, status, code, message);

  let cached: { at: number; view: StatusView; json: string; etag: string } | undefined;
  const status = () => {
    const now = deps.now();
    if (cached === undefined || now - cached.at >= STATUS_CACHE_MS || now < cached.at) {
      const view = buildStatusView(deps.store, { now, killSwitchFile: deps.killSwitchFile });
      const json = JSON.stringify(statusJson(view));
      cached = { at: now, view, json, etag: `"${createHash('sha1').update(json).digest('base64url')}"` };
    }
    return cached;
  };
  deps.metrics.bind({
    store: deps.store,
    status: () => status().view,
    engine: deps.engine,
    jobs: deps.jobs,
    now: deps.now,
    balances: deps.metricsBalances,
  });

  const source = (c: Context): string => {
    try {
      return getConnInfo(c).remote.address ?? 'unknown';
    } catch {
      return 'unknown';
    }
  };

  app.onError((err, c) => {
    const line = (l: Logger) => l.error({ err, path: c.req.path.slice(0, 200) }, 'control API: request failed');
    if (authenticated.has(c.req.raw)) line(log);
    else quiet.line(line);
    return fail(c, 500, 'E_INTERNAL', 'internal error (logged)');
  });
  app.notFound((c) => fail(c, 404, 'E_NOT_FOUND', `no such endpoint: ${c.req.method} ${c.req.path}`));

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.use('/readyz', localOnlyWithoutToken(deps.token, refuse));
  app.use('/metrics', localOnlyWithoutToken(deps.token, refuse));
  app.get('/readyz', (c) => {
    const result = readiness(
      {
        now: deps.now,
        jobs: deps.jobs,
        checkWritable: () => {
          deps.store.db.exec('BEGIN IMMEDIATE');
          deps.store.db.exec('ROLLBACK');
        },
        halted: () => deps.engine.brakes().halted,
        running: () => deps.engine.running,
      },
      deps.readiness ?? DEFAULT_READINESS,
    );
    return c.json(result, result.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const { text, contentType } = await deps.metrics.render();
    return c.body(text, 200, { 'content-type': contentType });
  });

  // The dashboard: its own files only, with a policy that forbids anything from elsewhere (the charting
  // library sets inline styles on the elements it creates: styles, not scripts, may be inline).
  const page = async (c: Context, file: string) => {
    const asset = dashboardAsset(file);
    if (asset === undefined) return fail(c, 404, 'E_NOT_FOUND', `no such file: ${file}`);
    const { body: text, type } = await asset;
    // The page knows before its first request whether to ask for a token (no 401 to start with).
    const body = file === 'index.html' ? text.replace('{{AUTH}}', deps.token === undefined ? 'local' : 'token') : text;
    return c.body(body, 200, {
      'content-type': type,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
      'referrer-policy': 'no-referrer',
    });
  };
  app.get('/', (c) => page(c, 'index.html'));
  app.get('/assets/:file', (c) => page(c, c.req.param('file')));

  // Everything under /api/v1 needs the token (or, without one, a local request from no other origin).
  app.use(
    '/api/v1/*',
    operatorAuth({
      token: deps.token,
      failures,
      source,
      refuse,
      authenticated: (c) => authenticated.add(c.req.raw),
    }),
  );
  app.use(
    '/api/v1/*',
    bodyLimit({ maxSize: 16 * 1024, onError: (c) => fail(c, 413, 'E_TOO_LARGE', 'body over 16 KiB') }),
  );

  const query = <T extends z.ZodType>(c: Context, schema: T) => schema.safeParse(c.req.query());
  /** The JSON body (absent counts as `{}`); undefined after answering 400/415 itself. */
  const body = async <T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T> | Response> => {
    const text = await c.req.text();
    let value: unknown = {};
    if (text.trim() !== '') {
      if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
        return fail(c, 415, 'E_BAD_REQUEST', 'body: expected Content-Type: application/json');
      try {
        value = JSON.parse(text);
      } catch {
        return fail(c, 400, 'E_BAD_REQUEST', 'body: not valid JSON');
      }
    }
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : badRequest(c, 'body', parsed.error);
  };
  const knownInstance = (instance: string | undefined) =>
    instance === undefined ||
    deps.engine.instances().some((i) => i.name === instance) ||
    status().view.report.instances.some((i) => i.instance === instance);
  const unknownInstance = (c: Context, instance: string) =>
    fail(c, 404, 'E_UNKNOWN_INSTANCE', `no instance named ${JSON.stringify(instance)}`);

  /** Runs an operator action: its result, or its stable error code and message (and every problem). */
  const act = async (c: Context, action: () => Promise<ActionResult>) => {
    try {
      const result = await action();
      cached = undefined;
      return c.json({ ok: true, ...result });
    } catch (err) {
      if (err instanceof BotError && Object.hasOwn(ERROR_STATUS, err.code)) {
        const problems = (err as { problems?: unknown }).problems;
        return fail(c, ERROR_STATUS[err.code] as ErrorStatus, err.code, err.message, {
          ...(Array.isArray(problems) && problems.length > 0 ? { problems } : {}),
        });
      }
      throw err;
    }
  };
  const by = (c: Context) => ({ source: `api ${source(c)}` });

  const v1 = new Hono();
  v1.get('/status', (c) => {
    const { json, etag } = status();
    c.header('etag', etag);
    c.header('cache-control', 'no-cache');
    if (c.req.header('if-none-match') === etag) return c.body(null, 304);
    return c.body(json, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
  v1.get('/daemon', (c) =>
    c.json({
      ...deps.daemon,
      instances: deps.engine
        .instances()
        .map((i) => ({ name: i.name, symbol: i.symbol, schedule: i.schedule, status: i.status })),
    }),
  );
  v1.get('/instances', (c) => {
    const live = new Map(deps.engine.instances().map((i) => [i.name, i]));
    const instances = statusJson(status().view).instances.map((i) => {
      const engine = live.get(i.instance);
      return { ...i, schedule: engine?.schedule ?? null, counters: engine?.counters ?? null };
    });
    return c.json({ instances });
  });
  v1.get('/orders', (c) => {
    const q = query(c, OrdersQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    if (!knownInstance(q.data.instance)) return unknownInstance(c, q.data.instance as string);
    const orders =
      q.data.instance === undefined ? deps.store.orders.active() : deps.store.orders.activeForInstance(q.data.instance);
    return c.json({ orders: orders.map(orderJson) });
  });
  v1.get('/fills', (c) => {
    const q = query(c, FillsQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    if (!knownInstance(q.data.instance)) return unknownInstance(c, q.data.instance as string);
    const page = deps.store.fills.page(q.data);
    return c.json({ fills: page.fills.map(fillJson), next: page.next ?? null });
  });
  v1.get('/events', (c) => {
    const q = query(c, EventsQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    if (!knownInstance(q.data.instance)) return unknownInstance(c, q.data.instance as string);
    const events = deps.store.events.list({
      instance: q.data.instance,
      kinds: q.data.kind === undefined ? undefined : [q.data.kind],
      beforeId: q.data.before,
      limit: q.data.limit + 1,
    });
    const more = events.length > q.data.limit;
    const page = more ? events.slice(0, q.data.limit) : events;
    return c.json({ events: page.map(eventRowJson), next: more ? (page[page.length - 1]?.id ?? null) : null });
  });
  v1.get('/pnl', (c) => {
    const q = query(c, PnlQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    if (!knownInstance(q.data.instance)) return unknownInstance(c, q.data.instance as string);
    const { view } = status();
    const prices = new Map(view.prices.map((p) => [p.symbol, p]));
    const series: Record<string, ReturnType<typeof pnlSeries>> = {};
    for (const i of view.report.instances) {
      if (q.data.instance !== undefined && i.instance !== q.data.instance) continue;
      const last = i.symbols.length === 1 ? prices.get(i.symbols[0] as string) : undefined;
      series[i.instance] = pnlSeries(
        deps.store.fills.forInstance(i.instance),
        last === undefined ? undefined : { time: Math.max(last.time, view.report.time), price: last.price },
      );
    }
    return c.json({ instances: series });
  });
  v1.get('/prices', (c) => {
    const recent: Record<string, [number, number][]> = {};
    for (const [symbol, points] of deps.prices()) recent[symbol] = points.map((p) => [p.time, p.price]);
    const last = status().view.prices.map((p) => ({
      symbol: p.symbol,
      price: p.price,
      time: new Date(p.time).toISOString(),
    }));
    return c.json({ last, recent });
  });

  v1.post('/instances/:name/pause', async (c) => {
    const b = await body(c, PauseBody);
    if (b instanceof Response) return b;
    return act(c, () => deps.actions.pauseInstance(c.req.param('name'), { ...by(c), cancelOrders: b.cancelOrders }));
  });
  v1.post('/instances/:name/resume', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => deps.actions.resumeInstance(c.req.param('name'), by(c)));
  });
  v1.delete('/orders/:id', (c) => act(c, () => deps.actions.cancelOrder(c.req.param('id'), by(c))));
  v1.put('/kill-switch', async (c) => {
    const b = await body(c, KillSwitchBody);
    if (b instanceof Response) return b;
    return act(c, () => deps.actions.setKillSwitch(b.on, by(c)));
  });
  v1.post('/reload', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => deps.actions.reloadStrategyFiles(by(c)));
  });
  v1.post('/halt/clear', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => deps.actions.clearAuthHalt(by(c)));
  });
  app.route('/api/v1', v1);
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
