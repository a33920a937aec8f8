/**
 * The Grafana dashboard in docs/ against a real Prometheus: Debian's `prometheus` (which .ci/run installs)
 * scrapes a paper daemon's /metrics every second with a scrape config like the compose file's, then every
 * PromQL expression of the dashboard (its variables set as Grafana sets them for "All") goes through
 * Prometheus's HTTP API: each parses and returns data, and each variable's label_values query finds values.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPrometheus, PROMETHEUS, type PrometheusProcess, startPrometheus } from '../support/prometheus.js';
import { DaemonProcess, everyOrderFile, fillCount, http, lockstepPaperEnv, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

interface Dashboard {
  panels: { title: string; targets?: { expr: string }[] }[];
  templating: { list: { name: string; definition?: string }[] };
}

/** The scrape job's name in the compose file's Prometheus configuration. */
const JOB = 'spot-bot';
/**
 * Series that count faults this healthy run never meets and whose labels cannot be known before the first (a
 * figure of the venue's refused, by field): Prometheus has no sample of them, so their panels are empty until one
 * happens. Anything else empty is a broken panel: the counters of rejected orders, exchange errors and retries
 * exist at 0 from the start (their panels show 0).
 */
const FAULTS_ONLY = new Set(['sum by (field) (increase(spot_bot_venue_answers_refused_total{job=~"spot-bot"}[5m]))']);
/**
 * A multi-pair strategy file's totals (bot_group): this daemon runs one single-pair file, so they have no sample
 * (test/api/daemon-metrics.test.ts checks their series over a store with a group).
 */
const GROUPS_ONLY = ['open_trades', 'running_pairs', 'pairs', 'exposure', 'realised_pnl', 'unrealised_pnl'].map(
  (name) => `spot_bot_group_${name}{job=~"${JOB}"}`,
);

const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as Dashboard;
/** An expression as Grafana sends it with every variable on "All" (`$job` all jobs, `$bot_instance` `.*`). */
const expand = (expr: string) => expr.replaceAll('$job', JOB).replaceAll('$bot_instance', '.*');

const dir = tempDir('e2e-grafana');
let daemon: DaemonProcess;
let prometheus: PrometheusProcess;

beforeAll(async () => {
  if (!hasPrometheus) return;
  const port = await freePort();
  const env = await lockstepPaperEnv(
    dir,
    { 'churn.json': everyOrderFile('churn', { churn: 100_000 }) },
    { period: 23, count: 3_000 },
    { API_PORT: String(port), METRICS_BALANCES: 'true' },
  );
  daemon = new DaemonProcess(env);
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  prometheus = await startPrometheus(JOB, [`127.0.0.1:${port}`]);
  await waitFor('some fills', () => fillCount(join(dir, 'bot.db')) >= 6, { daemon });
  // One order cancelled by the operator: the cancelled-orders panel has data.
  const open = (await http(`http://127.0.0.1:${port}/api/v1/orders?instance=churn`)).body as {
    orders: { localId: string; type: string }[];
  };
  const resting = open.orders.find((o) => o.type === 'LIMIT');
  if (resting === undefined) throw new Error(`no resting LIMIT to cancel: ${JSON.stringify(open)}`);
  const cancel = await http(`http://127.0.0.1:${port}/api/v1/orders/${resting.localId}`, { method: 'DELETE' });
  if (cancel.status !== 200) throw new Error(`the cancel was refused: ${JSON.stringify(cancel.body)}`);
  // Rates and increases need two samples in their window: ten seconds of scrapes.
  for (let scrapes = 0; scrapes < 10;) {
    if (daemon.exit) throw new Error(`the daemon exited: ${daemon.lines.slice(-10).join('\n')}`);
    await new Promise((r) => setTimeout(r, 500));
    const r = await prometheus.query(`count_over_time(up{job="${JOB}"}[1m])`);
    scrapes = Number(r.result[0]?.value?.[1] ?? 0);
  }
}, 150_000);

afterAll(async () => {
  await prometheus?.stop();
  await daemon?.stop('SIGTERM');
});

describe.skipIf(!hasPrometheus)(`the Grafana dashboard against a real Prometheus (${PROMETHEUS})`, () => {
  it('has every panel expression parse and return data from a scraped paper daemon', async () => {
    const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
    expect(targets.length).toBeGreaterThan(20);
    const empty: string[] = [];
    const failed: string[] = [];
    for (const { panel, expr } of targets) {
      const query = expand(expr);
      try {
        const data = await prometheus.query(query);
        if (data.result.length === 0) empty.push(query);
      } catch (err) {
        failed.push(`${panel}: ${(err as Error).message}`);
      }
    }
    expect(failed).toEqual([]);
    expect(empty.sort()).toEqual([...FAULTS_ONLY, ...GROUPS_ONLY].sort());
  }, 60_000);

  it('is scraped as the compose file’s Prometheus scrapes the bot', () => {
    const compose = readFileSync('docker-compose.yml', 'utf8');
    expect(compose).toMatch(new RegExp(`^  prometheus:\\n(?:    .*\\n)*    profiles: \\['monitoring'\\]`, 'm'));
    expect(compose).toMatch(new RegExp(`^ +- job_name: ${JOB}\\n(?: +.*\\n)* +- targets: \\['bot:9464'\\]`, 'm'));
  });

  it('finds values for each of its variables', async () => {
    for (const v of dashboard.templating.list.filter((v) => v.definition !== undefined)) {
      const m = /^label_values\((.+), (\w+)\)$/.exec(expand(v.definition ?? ''));
      expect(m, v.definition).not.toBeNull();
      const values = await prometheus.labelValues(m![2]!, m![1]!);
      expect(values, v.name).not.toEqual([]);
      if (v.name === 'job') expect(values).toEqual([JOB]);
      if (v.name === 'bot_instance') expect(values).toEqual(['churn']);
    }
  });
});

if (!hasPrometheus)
  console.warn(`grafana-prometheus.test.ts skipped: no Prometheus at ${PROMETHEUS} (apt-get install prometheus)`);
