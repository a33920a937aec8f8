/**
 * A real Prometheus (Debian's `prometheus`, which .ci/run installs) on a free loopback port, scraping the given
 * targets every second into a temporary folder, and its HTTP API's instant queries: the collaborator of the
 * Grafana dashboard's test. The process is tracked, so a failing test leaves none behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../e2e/daemon-process.js';
import { freePort } from './free-port.js';
import { trackChild } from './child-processes.js';

export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const hasPrometheus = existsSync(PROMETHEUS);

/** An instant query's answer (the `data` of a successful one). */
export interface QueryResult {
  resultType: string;
  result: { metric: Record<string, string>; value?: [number, string] }[];
}

export interface PrometheusProcess {
  url: string;
  child: ChildProcess;
  lines: string[];
  /** An instant query now: its data, or throws with Prometheus's error (a query that does not parse). */
  query(expr: string): Promise<QueryResult>;
  /** The values of a label on the series matching `match` (Grafana's label_values). */
  labelValues(label: string, match: string): Promise<string[]>;
  /** Stops it (SIGKILL), waits for the exit and removes its folder. */
  stop(): Promise<void>;
}

/** Prometheus scraping `targets` (host:port) as job `job`, every second. */
export async function startPrometheus(job: string, targets: string[]): Promise<PrometheusProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      `  - job_name: ${JSON.stringify(job)}`,
      '    static_configs:',
      `      - targets: ${JSON.stringify(targets)}`,
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${config}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ];
  const child = trackChild(spawn(PROMETHEUS, args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  const lines: string[] = [];
  child.stdout.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  child.stderr.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  const api = async <T>(path: string): Promise<T> => {
    const res = await fetch(`${url}${path}`);
    const body = (await res.json()) as { status: string; data: T; errorType?: string; error?: string };
    if (body.status !== 'success') throw new Error(`${path}: ${body.errorType ?? ''} ${body.error ?? res.status}`);
    return body.data;
  };
  let ready = false;
  await waitFor(`prometheus on port ${port}`, () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${lines.join('\n')}`);
    void fetch(`${url}/-/ready`).then(
      (r) => (ready = r.ok),
      () => undefined,
    );
    return ready;
  });
  return {
    url,
    child,
    lines,
    query: (expr) => api<QueryResult>(`/api/v1/query?query=${encodeURIComponent(expr)}`),
    labelValues: (label, match) =>
      api<string[]>(`/api/v1/label/${encodeURIComponent(label)}/values?match[]=${encodeURIComponent(match)}`),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exit = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exit;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
