/**
 * The daemon's two HTTP listeners, up before the venue is reached: the main one on API_HOST:API_PORT (probes
 * first, the control API and the dashboard once the engine runs; 503 E_NOT_RUNNING for those until then) and,
 * with METRICS_PORT set, the metrics listener on METRICS_HOST:METRICS_PORT (/healthz, /readyz, /metrics only).
 * A port either cannot have stops the start, naming the variable.
 */
import { Hono } from 'hono';
import { probeGuard } from '../api/auth.js';
import { fail } from '../api/responses.js';
import type { DaemonMetrics } from '../api/daemon-metrics.js';
import { type Listener, type ProbeState, probeRoutes, startListener, startMetricsListener } from '../api/probes.js';
import { type ApiDeps, createApi, logApiListener } from '../api/api-server.js';
import type { Env } from './env.js';
import { ConfigError } from '../errors.js';
import type { Logger } from '../ops/logger.js';

/** A listener, or a ConfigError naming the variable when its port cannot be had. */
async function listen(
  variable: 'API_PORT' | 'METRICS_PORT',
  host: string,
  port: number,
  start: () => Promise<Listener>,
) {
  try {
    return await start();
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new ConfigError(
      [
        `${variable}: cannot listen on ${host}:${port} (${why}); set another port, or ${variable}=0 to turn the listener off`,
      ],
      { cause: err },
    );
  }
}

/** The main listener's answer while the daemon starts: the probes, and 503 for the rest. */
function startingApp(probes: ProbeState, metrics: DaemonMetrics, token: string | undefined): Hono {
  const app = new Hono();
  // The same guard as the control API's own probe routes (auth.ts).
  app.use('/readyz', probeGuard(token));
  app.use('/metrics', probeGuard(token));
  app.route('/', probeRoutes(probes, metrics));
  app.notFound((c) => {
    const why = probes.readiness().checks.find((check) => !check.ok)?.detail ?? 'starting';
    return fail(c, 'E_NOT_RUNNING', `the daemon is not running yet (${why})`);
  });
  return app;
}

export class DaemonListeners {
  private constructor(
    private readonly main: Listener | undefined,
    private readonly metricsListener: Listener | undefined,
    private readonly logger: Logger,
  ) {}

  /** Starts the listeners the environment asks for, answering probes at once. */
  static async start(env: Env, probes: ProbeState, metrics: DaemonMetrics, logger: Logger): Promise<DaemonListeners> {
    const main =
      env.API_PORT === 0
        ? undefined
        : await listen('API_PORT', env.API_HOST, env.API_PORT, () =>
            startListener(env.API_HOST, env.API_PORT, startingApp(probes, metrics, env.API_TOKEN), logger),
          );
    if (main !== undefined)
      logger.info({ url: main.url }, `listening on ${main.url}: probes now, the control API once the engine runs`);
    let metricsListener: Listener | undefined;
    try {
      metricsListener =
        env.METRICS_PORT === 0
          ? undefined
          : await listen('METRICS_PORT', env.METRICS_HOST, env.METRICS_PORT, () =>
              startMetricsListener(env.METRICS_HOST, env.METRICS_PORT, probes, metrics, logger),
            );
    } catch (err) {
      await main?.close();
      throw err;
    }
    return new DaemonListeners(main, metricsListener, logger);
  }

  /** The main listener's URL (undefined with API_PORT=0). */
  get apiUrl(): string | undefined {
    return this.main?.url;
  }

  /** The metrics listener's URL (undefined without METRICS_PORT). */
  get metricsUrl(): string | undefined {
    return this.metricsListener?.url;
  }

  /**
   * The engine runs: the main listener answers with the control API from now on. The API is built even with
   * the main listener off, since building it binds the metrics the metrics listener serves.
   */
  serveApi(deps: ApiDeps): void {
    const app = createApi(deps);
    if (this.main === undefined) return;
    this.main.serve(app);
    logApiListener(this.logger, this.main.url, deps.token);
  }

  async close(): Promise<void> {
    await Promise.all([this.main?.close(), this.metricsListener?.close()]);
  }
}
