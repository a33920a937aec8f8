/**
 * /readyz against a venue that goes away: the daemon runs live against a separate `bot sim` process (so the
 * test can stop it and start it again on the same port), and readiness follows: 200, then 503 naming the stale
 * polls while the exchange is unreachable, then 200 again once it answers. And a venue that is not there at
 * start-up: the listeners (the control API's and the metrics listener) answer at once, alive but not ready,
 * naming why; the control API waits; `bot healthcheck` passes and `bot healthcheck --ready` does not.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DEMO_CREDENTIALS } from '../../src/sim/sim-server.js';
import { DaemonProcess, daemonEnv, everyOrderFile, http, journal, TEST_STRATEGIES, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-ready');
const processes: DaemonProcess[] = [];
afterAll(async () => {
  for (const p of processes) if (!p.exit) await p.stop('SIGTERM');
});

const Readiness = z.object({
  ready: z.boolean(),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string() })),
});

function startSim(port: number): DaemonProcess {
  const sim = new DaemonProcess(daemonEnv({}), ['sim', '--port', String(port), '--random-walk', '--seed', '3']);
  processes.push(sim);
  return sim;
}

async function readyz(url: string) {
  const res = await http(`${url}/readyz`);
  return { status: res.status, body: Readiness.parse(res.body) };
}

describe('readiness', () => {
  it('turns 503 naming the stale polls while the exchange is unreachable, and 200 once it answers again', async () => {
    const simPort = await freePort();
    let sim = startSim(simPort);
    await waitFor('the simulated exchange', () => sim.messages(/http:\/\/127\.0\.0\.1:\d+/).length > 0, {
      daemon: sim,
    });
    const config = join(dir, 'config');
    mkdirSync(config);
    // Never near enough to 1 to place anything: only the polls matter here.
    writeFileSync(join(config, 'idle.json'), everyOrderFile('idle', { near: 1 }));
    const apiPort = await freePort();
    const url = `http://127.0.0.1:${apiPort}`;
    const daemon = new DaemonProcess(
      daemonEnv({
        MODE: 'live',
        EXCHANGE_BASE_URL: `http://127.0.0.1:${simPort}`,
        EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
        EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
        EXCHANGE_TIMEOUT_MS: '2000',
        DB_PATH: join(dir, 'live.db'),
        CONFIG_DIR: config,
        STRATEGIES_DIR: TEST_STRATEGIES,
        KILL_SWITCH_FILE: join(dir, 'KILL'),
        API_PORT: String(apiPort),
      }),
    );
    processes.push(daemon);
    await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
    await waitFor('ready', async () => (await readyz(url)).status === 200, { daemon });

    expect(await sim.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    await waitFor('not ready', async () => (await readyz(url)).status === 503, { daemon });
    const down = await readyz(url);
    expect(down.body.ready).toBe(false);
    const failing = down.body.checks.filter((c) => !c.ok).map((c) => c.name);
    expect(failing).toContain('market * * * * * *');
    expect(down.body.checks.find((c) => c.name === 'database')).toMatchObject({ ok: true });
    // Health is about the process, not the venue.
    expect((await http(`${url}/healthz`)).status).toBe(200);

    sim = startSim(simPort);
    await waitFor('the simulated exchange again', () => sim.messages(/http:\/\/127\.0\.0\.1:\d+/).length > 0, {
      daemon: sim,
    });
    await waitFor('ready again', async () => (await readyz(url)).status === 200, { daemon });
    expect((await readyz(url)).body.checks.every((c) => c.ok)).toBe(true);
    expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('answers alive and not ready, naming why, while the venue is unreachable at start-up; ready once it answers', async () => {
    const simPort = await freePort();
    const config = join(dir, 'config-down');
    mkdirSync(config);
    writeFileSync(join(config, 'idle.json'), everyOrderFile('idle', { near: 1 }));
    const [apiPort, metricsPort] = [await freePort(), await freePort()];
    const api = `http://127.0.0.1:${apiPort}`;
    const metrics = `http://127.0.0.1:${metricsPort}`;
    const db = join(dir, 'live-down.db');
    const env = daemonEnv({
      MODE: 'live',
      EXCHANGE_BASE_URL: `http://127.0.0.1:${simPort}`,
      EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
      EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
      EXCHANGE_RETRY_ATTEMPTS: '1',
      DB_PATH: db,
      CONFIG_DIR: config,
      STRATEGIES_DIR: TEST_STRATEGIES,
      KILL_SWITCH_FILE: join(dir, 'KILL'),
      API_PORT: String(apiPort),
      METRICS_PORT: String(metricsPort),
    });
    const daemon = new DaemonProcess(env);
    processes.push(daemon);
    await waitFor('a failed attempt to reach the venue', () => daemon.messages(/\(attempt 1\)/).length > 0, { daemon });

    for (const url of [api, metrics]) {
      const health = await http(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(health.body).toMatchObject({ status: 'ok', live: true, phase: 'starting' });
      const { status, body } = await readyz(url);
      expect(status).toBe(503);
      expect(body.ready).toBe(false);
      expect(body.checks).toHaveLength(1);
      expect(body.checks[0]).toMatchObject({ name: 'startup', ok: false });
      expect(body.checks[0]!.detail).toMatch(/^starting: cannot .* \(attempt \d+\): .*ECONNREFUSED.*; retrying in/);
    }
    // The control API waits for the engine; the metrics listener has none.
    const early = await http(`${api}/api/v1/status`);
    expect(early.status).toBe(503);
    expect(early.body).toMatchObject({ error: { code: 'E_NOT_RUNNING' } });
    expect((await http(`${metrics}/api/v1/status`)).status).toBe(404);
    // The image's health check: alive; --ready: not yet.
    const check = (args: string[]) => new DaemonProcess(env, ['healthcheck', ...args]).exited;
    expect(await check([])).toEqual({ code: 0, signal: null });
    expect(await check(['--ready'])).toEqual({ code: 1, signal: null });
    expect(journal(db)).toEqual([]);

    const sim = startSim(simPort);
    await waitFor('the simulated exchange', () => sim.messages(/http:\/\/127\.0\.0\.1:\d+/).length > 0, {
      daemon: sim,
    });
    await waitFor('ready', async () => (await readyz(metrics)).status === 200, { daemon });
    expect((await readyz(api)).status).toBe(200);
    expect(await check(['--ready'])).toEqual({ code: 0, signal: null });
    const live = await http(`${metrics}/healthz`);
    expect(live.body).toMatchObject({ status: 'ok', phase: 'running' });
    expect((live.body as { checks: { name: string }[] }).checks.map((c) => c.name)).toContain('orders poll');
    const scrape = await fetch(`${metrics}/metrics`);
    expect(await scrape.text()).toMatch(/^spot_bot_job_runs_total\{bot_job="orders poll",schedule="[^"]+"\} \d+$/m);
    expect((await http(`${api}/api/v1/status`)).status).toBe(200);
    expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
