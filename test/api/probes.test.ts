import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/api/daemon-metrics.js';
import { loopCheck, probeRoutes, ProbeState, STUCK_RUN_MS } from '../../src/api/probes.js';
import type { Readiness } from '../../src/api/readiness.js';
import type { JobStats } from '../../src/ports/scheduler.js';

const T0 = Date.UTC(2026, 0, 1);

function job(overrides: Partial<JobStats>): JobStats {
  return {
    name: 'orders poll',
    cron: '*/5 * * * * *',
    runs: 0,
    failures: 0,
    overlapsSkipped: 0,
    missed: 0,
    running: false,
    scheduledAt: T0,
    intervalMs: 5_000,
    lastStartedAt: undefined,
    lastLagMs: undefined,
    lastSucceededAt: undefined,
    ...overrides,
  };
}

describe('liveness of a job loop', () => {
  it('is alive while the loop keeps starting runs, failing or not; dead once it stops firing', () => {
    // Dead after max(10 × 5 s, 60 s) = 60 s without a start.
    expect(loopCheck(job({ lastStartedAt: T0, failures: 40, runs: 40 }), T0 + 60_000).ok).toBe(true);
    const dead = loopCheck(job({ lastStartedAt: T0 }), T0 + 60_001);
    expect(dead).toMatchObject({ name: 'orders poll', ok: false });
    expect(dead.detail).toBe('last run started 60.0 s ago (dead after 60 s)');
    // Before its first run, from when it was scheduled; a long schedule gets ten intervals.
    expect(loopCheck(job({}), T0 + 61_000).ok).toBe(false);
    expect(loopCheck(job({ intervalMs: 3_600_000 }), T0 + 9 * 3_600_000).ok).toBe(true);
  });

  it('is alive during a long run (a slow venue), dead once a run is stuck', () => {
    const running = job({ running: true, lastStartedAt: T0 });
    expect(loopCheck(running, T0 + STUCK_RUN_MS).ok).toBe(true);
    const stuck = loopCheck(running, T0 + STUCK_RUN_MS + 1_000);
    expect(stuck.ok).toBe(false);
    expect(stuck.detail).toBe('a run going on for 301 s (stuck after 300 s)');
  });
});

describe('the probes through the daemon phases', () => {
  const readyAnswer: Readiness = { ready: true, checks: [{ name: 'engine', ok: true, detail: 'running' }] };

  it('starting: alive, not ready, naming what start-up waits for; running: the loops and the readiness of the daemon', async () => {
    let now = T0;
    const state = new ProbeState(() => now);
    const app = probeRoutes(state, createMetrics());
    const get = async (path: string) => {
      const res = await app.request(path);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    state.starting('cannot set up the venue (attempt 2): connect ECONNREFUSED; retrying in 2.0 s');
    expect(await get('/healthz')).toEqual({
      status: 200,
      body: {
        status: 'ok',
        live: true,
        phase: 'starting',
        checks: [
          {
            name: 'starting',
            ok: true,
            detail: 'starting: cannot set up the venue (attempt 2): connect ECONNREFUSED; retrying in 2.0 s',
          },
        ],
      },
    });
    expect(await get('/readyz')).toEqual({
      status: 503,
      body: {
        ready: false,
        checks: [
          {
            name: 'startup',
            ok: false,
            detail: 'starting: cannot set up the venue (attempt 2): connect ECONNREFUSED; retrying in 2.0 s',
          },
        ],
      },
    });

    const jobs = [
      job({ name: 'market * * * * * *', intervalMs: 1_000, lastStartedAt: T0 }),
      job({ lastStartedAt: T0 }),
    ];
    state.running({ ready: () => readyAnswer, jobs: () => jobs });
    expect((await get('/readyz')).status).toBe(200);
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { live: true, phase: 'running' } });
    // The market loop stops firing: not alive (the orchestrator restarts it); readiness is another question.
    now = T0 + 30_000;
    jobs[1] = job({ lastStartedAt: now });
    now = T0 + 61_000;
    const dead = await get('/healthz');
    expect(dead.status).toBe(503);
    expect(dead.body).toMatchObject({ status: 'failing', live: false });
    expect((dead.body.checks as { name: string; ok: boolean }[]).map((c) => [c.name, c.ok])).toEqual([
      ['market * * * * * *', false],
      ['orders poll', true],
    ]);

    state.stopping();
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { phase: 'stopping' } });
    expect(await get('/readyz')).toMatchObject({ status: 503, body: { ready: false } });
  });
});
