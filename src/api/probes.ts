/**
 * What orchestrators probe, apart from the control API: liveness (/healthz: the process and its loops answer;
 * never the exchange, so a venue outage does not get the bot restarted) and readiness (/readyz: the daemon does
 * its job, venue included), through the daemon's phases. Both listeners ask the same ProbeState: the main
 * one (API_HOST:API_PORT) and the metrics listener (METRICS_HOST:METRICS_PORT), which serves /healthz, /readyz
 * and /metrics only, so Prometheus and probes reach them from outside a container without the control API.
 *
 * The listeners are up before the venue is: while start-up waits for a venue it cannot reach, /healthz is 200
 * and /readyz 503 naming why; nothing trades until the engine has started.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { isLoopbackHost } from '../config/env.js';
import { Incident } from '../ops/incident.js';
import type { Logger } from '../ops/logger.js';
import { localOnly } from './auth.js';
import { fail } from './responses.js';
import type { JobStats } from '../ports/scheduler.js';
import type { DaemonMetrics } from './daemon-metrics.js';
import type { Check, Readiness } from './readiness.js';

export interface Liveness {
  live: boolean;
  phase: DaemonPhase;
  checks: Check[];
}

export type DaemonPhase = 'starting' | 'running' | 'stopping';

/** A job's loop is dead when it has not started a run for this many times its interval… */
const LIVE_FACTOR = 10;
/** …and never sooner than this (a one-second schedule may lag through a slow minute without a restart). */
const LIVE_MIN_MS = 60_000;
/**
 * A run going on longer than this is stuck: every request has its timeout and every hook its limit, so only a
 * bug gets here, and a restart is the remedy (a merely slow or failing venue ends its runs well before).
 */
export const STUCK_RUN_MS = 5 * 60_000;

/** One job's loop: it keeps firing, and no run of it is stuck. */
export function loopCheck(job: JobStats, now: number): Check {
  if (job.running && job.lastStartedAt !== undefined) {
    const running = now - job.lastStartedAt;
    return {
      name: job.name,
      ok: running <= STUCK_RUN_MS,
      detail: `a run going on for ${(running / 1000).toFixed(0)} s (stuck after ${STUCK_RUN_MS / 1000} s)`,
    };
  }
  const deadAfter = Math.max(LIVE_FACTOR * (job.intervalMs ?? 60_000), LIVE_MIN_MS);
  const since = job.lastStartedAt ?? job.scheduledAt;
  const age = now - since;
  return {
    name: job.name,
    ok: age <= deadAfter,
    detail: `${job.lastStartedAt === undefined ? 'scheduled' : 'last run started'} ${(age / 1000).toFixed(1)} s ago (dead after ${(deadAfter / 1000).toFixed(0)} s)`,
  };
}

/** The daemon's phase and what each probe answers in it; the daemon moves it, the listeners read it. */
export class ProbeState {
  private phase: DaemonPhase = 'starting';
  private startup = 'opening the journal';
  private sources: { ready: () => Readiness; jobs: () => JobStats[] } | undefined;

  /** `now`: wall-clock ms (the jobs' figures are in wall-clock time). */
  constructor(private readonly now: () => number = () => Date.now()) {}

  /** What start-up is doing or waiting for (a venue it cannot reach: the last error and the next try). */
  starting(what: string): void {
    this.startup = what;
  }

  /** Started: readiness and the loops are the running daemon's. */
  running(sources: { ready: () => Readiness; jobs: () => JobStats[] }): void {
    this.sources = sources;
    this.phase = 'running';
  }

  stopping(): void {
    this.phase = 'stopping';
  }

  liveness(): Liveness {
    if (this.phase !== 'running' || this.sources === undefined)
      return {
        live: true,
        phase: this.phase,
        checks: [
          { name: this.phase, ok: true, detail: this.phase === 'starting' ? `starting: ${this.startup}` : 'stopping' },
        ],
      };
    const now = this.now();
    const checks = this.sources.jobs().map((job) => loopCheck(job, now));
    return { live: checks.every((c) => c.ok), phase: this.phase, checks };
  }

  readiness(): Readiness {
    if (this.phase === 'running' && this.sources !== undefined) return this.sources.ready();
    const detail = this.phase === 'starting' ? `starting: ${this.startup}` : 'stopping';
    return { ready: false, checks: [{ name: this.phase === 'starting' ? 'startup' : 'engine', ok: false, detail }] };
  }
}

/** /healthz from a ProbeState: 200 while live, 503 naming the dead loop. */
export function healthzAnswer(state: ProbeState): { status: 200 | 503; body: Liveness & { status: string } } {
  const l = state.liveness();
  return { status: l.live ? 200 : 503, body: { status: l.live ? 'ok' : 'failing', ...l } };
}

/** The probe routes alone: /healthz, /readyz, /metrics (the metrics listener; the main one before the start). */
export function probeRoutes(state: ProbeState, metrics: DaemonMetrics): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => {
    const { status, body } = healthzAnswer(state);
    return c.json(body, status);
  });
  app.get('/readyz', (c) => {
    const result = state.readiness();
    return c.json(result, result.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const { text, contentType } = await metrics.render();
    return c.body(text, 200, { 'content-type': contentType });
  });
  return app;
}

/** What a listener answers with: a Hono application (its fetch gets the node-server bindings too). */
export type FetchApp = Pick<Hono, 'fetch'>;

export interface Listener {
  url: string;
  /** Answers every request with `app` from now on (the control API replaces the probes once started). */
  serve(app: FetchApp): void;
  close(): Promise<void>;
}

/**
 * What one listener holds at most (slowloris: 2 × 10,500 slow connections once filled the daemon's file
 * descriptors and an order create failed with EMFILE). Past `maxConnections` a new connection is closed at once;
 * a request's headers must arrive within `headersTimeoutMs` and the whole request within `requestTimeoutMs`
 * (Node's defaults: unbounded, 60 s, 300 s), checked every second rather than every 30 s.
 */
export interface ListenerLimits {
  maxConnections: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export const LISTENER_LIMITS: ListenerLimits = {
  maxConnections: 256,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
};

/**
 * Listens on host:port (0: a free one), answering with `app` until told otherwise; resolves once listening.
 * Bounded by `limits`; shedding load is told as one incident (a line when it starts, a count a minute, a line
 * once connections are taken again after a quiet 30 s), never a line per connection.
 */
export async function startListener(
  host: string,
  port: number,
  app: FetchApp,
  logger?: Logger,
  limits: ListenerLimits = LISTENER_LIMITS,
): Promise<Listener> {
  let current = app;
  let server: ServerType | undefined;
  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server = serve(
      {
        fetch: (request, bindings) => current.fetch(request, bindings),
        hostname: host,
        port,
        serverOptions: {
          headersTimeout: limits.headersTimeoutMs,
          requestTimeout: limits.requestTimeoutMs,
          connectionsCheckingInterval: Math.min(1_000, limits.headersTimeoutMs),
        },
      },
      resolve,
    );
    server.once('error', reject);
  });
  const http = server as ServerType & { maxConnections?: number };
  http.maxConnections = limits.maxConnections;
  if (logger !== undefined) {
    const shedding = new Incident(
      logger,
      () => Date.now(),
      `listener ${host}:${address.port} (at most ${limits.maxConnections} connections)`,
    );
    http.on('drop', () => shedding.failed(undefined, 'shedding load: new connections closed at once'));
    http.on('connection', () => shedding.succeeded());
  }
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    serve: (next) => {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as ServerType & { closeAllConnections?: () => void };
        s.close(() => resolve());
        // Keep-alive connections (an open dashboard, a scraper) would hold close() open.
        s.closeAllConnections?.();
      }),
  };
}

/** The metrics listener: the probe routes only, anything else 404. */
export async function startMetricsListener(
  host: string,
  port: number,
  state: ProbeState,
  metrics: DaemonMetrics,
  logger: Logger,
): Promise<Listener> {
  // On a loopback address it is this machine's alone: the same Host check as the main listener without a
  // token, so a page on a rebound DNS name cannot read positions, PnL or balances (off loopback, Prometheus
  // names the host as it likes, and the network is the guard).
  const app = new Hono();
  const loopback = isLoopbackHost(host);
  app.use(
    '/readyz',
    localOnly(() => loopback, `on a loopback METRICS_HOST`),
  );
  app.use(
    '/metrics',
    localOnly(() => loopback, `on a loopback METRICS_HOST`),
  );
  app.route('/', probeRoutes(state, metrics));
  app.notFound((c) => fail(c, 'E_NOT_FOUND', 'the metrics listener serves /healthz, /readyz and /metrics'));
  const listener = await startListener(host, port, app, logger);
  logger.info({ url: listener.url }, `health and metrics on ${listener.url} (/healthz, /readyz, /metrics)`);
  return listener;
}
