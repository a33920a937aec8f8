/**
 * The listener's open routes: /healthz (the process answers), /readyz (the daemon does its job) and /metrics
 * (Prometheus). No token: a supervisor, an orchestrator and a scraper read them. Mounted on the main listener,
 * and on any other listener that serves only these (a metrics port).
 */
import { Hono } from 'hono';
import type { Operator } from '../operator/operator.js';
import type { DaemonMetrics } from './metrics.js';
import { DEFAULT_READINESS, readiness, type ReadinessOptions } from './readiness.js';

export interface PublicRouteDeps {
  read: Operator['read'];
  now: () => number;
  metrics: DaemonMetrics;
  readiness?: ReadinessOptions;
}

/** The readiness of the daemon now (also the metrics' readiness gauge). */
export function readinessNow(deps: PublicRouteDeps) {
  const { read } = deps;
  return readiness(
    {
      now: deps.now,
      jobs: read.jobs,
      checkWritable: read.checkWritable,
      halted: () => read.brakes().halted,
      running: read.running,
    },
    deps.readiness ?? DEFAULT_READINESS,
  );
}

export function publicRoutes(deps: PublicRouteDeps): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', (c) => {
    const result = readinessNow(deps);
    return c.json(result, result.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const { text, contentType } = await deps.metrics.render();
    return c.body(text, 200, { 'content-type': contentType });
  });
  return app;
}
