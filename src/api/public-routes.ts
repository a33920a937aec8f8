/**
 * The listener's open routes: /healthz (the process and its loops answer), /readyz (the daemon does its job) and
 * /metrics (Prometheus). No token: a supervisor, an orchestrator and a scraper read them. The routes themselves
 * are probes.ts's, which the metrics listener serves too; here they are bound to the running daemon.
 */
import type { Hono } from 'hono';
import type { Operator } from '../operator/operator.js';
import type { DaemonMetrics } from './daemon-metrics.js';
import { probeRoutes, ProbeState } from './probes.js';
import { DEFAULT_READINESS, readiness, type ReadinessOptions } from './readiness.js';

export interface PublicRouteDeps {
  read: Operator['read'];
  now: () => number;
  metrics: DaemonMetrics;
  readiness?: ReadinessOptions;
  /** The daemon's probe state; without one (tests of the API alone), one that is running on `read`. */
  probes?: ProbeState;
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
      journal: read.journalProblem,
      running: read.running,
    },
    deps.readiness ?? DEFAULT_READINESS,
  );
}

export function publicRoutes(deps: PublicRouteDeps): Hono {
  let probes = deps.probes;
  if (probes === undefined) {
    probes = new ProbeState();
    probes.running({ ready: () => readinessNow(deps), jobs: deps.read.jobs });
  }
  return probeRoutes(probes, deps.metrics);
}
