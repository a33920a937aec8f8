/**
 * The measuring half of `npm run bench:journal-reads`: opens the journal at --db with the code under --root
 * (this tree, or the baseline's source unpacked elsewhere), serves the control API and metrics on a free
 * loopback port, and times GET /api/v1/status and GET /metrics with the clock moved two seconds before each
 * request (so no cache answers: every request reads the journal). Prints one JSON line.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as MetricsModule from '../src/api/daemon-metrics.js';
import type * as ServerModule from '../src/api/api-server.js';
import type { OperatorActions } from '../src/operator/actions.js';
import type * as QueriesModule from '../src/operator/queries.js';
import type * as LoggerModule from '../src/ops/logger.js';
import type * as StoreModule from '../src/store/store.js';
import { wallClock } from '../src/clocks/wall-clock.js';

const { values } = parseArgs({
  options: { root: { type: 'string' }, db: { type: 'string' }, requests: { type: 'string' }, now: { type: 'string' } },
});
const root = values.root ?? process.cwd();
/** A module of the tree under test, typed as this tree's (the baseline's has the same shape where used). */
const load = <T>(file: string) => import(pathToFileURL(join(root, file)).href) as Promise<T>;

const { openStore } = await load<typeof StoreModule>('src/store/store.ts');
const { createQueries } = await load<typeof QueriesModule>('src/operator/queries.ts');
const { createMetrics } = await load<typeof MetricsModule>('src/api/daemon-metrics.ts');
const { startApiServer } = await load<typeof ServerModule>('src/api/api-server.ts');
const { silentLogger } = await load<typeof LoggerModule>('src/ops/logger.ts');

let now = Number(values.now);
let t = performance.now();
const store = openStore({ path: values.db ?? '', clock: { now: () => now } });
const openMs = performance.now() - t;
const read = createQueries({
  store,
  now: () => now,
  wallNow: () => now,
  killSwitchFile: join(root, 'no-such-kill-switch'),
  engine: {
    instances: () => [],
    indicatorSpecs: () => ({}),
    brakes: () => ({ killSwitch: false, stopBuy: false, breakerOpenUntil: undefined, halted: undefined }),
    running: true,
    balances: () => [],
    journalProblem: () => undefined,
    pairRules: () => undefined,
    venueRefusals: () => [],
    maxOpenTrades: () => undefined,
  },
  jobs: () => [],
  prices: () => new Map(),
  daemon: { mode: 'paper', venue: 'bench', banner: 'bench' },
});
const server = await startApiServer({
  host: '127.0.0.1',
  port: 0,
  // Nothing here acts: only the reads are timed.
  operator: { read, act: {} as OperatorActions, build: { version: 'bench', revision: undefined } },
  now: () => now,
  wall: wallClock,
  logger: silentLogger,
  token: undefined,
  metrics: createMetrics(),
  metricsBalances: false,
});

async function time(path: string): Promise<number> {
  now += 2_000;
  const start = performance.now();
  const res = await fetch(`${server.url}${path}`);
  const body = await res.text();
  const ms = performance.now() - start;
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 200)}`);
  return ms;
}

const requests = Number(values.requests ?? '200');
const result: Record<string, unknown> = { openMs };
for (const path of ['/api/v1/status', '/metrics']) {
  t = performance.now();
  const first = await time(path);
  const times: number[] = [];
  for (let i = 0; i < requests; i++) times.push(await time(path));
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
  result[path] = { first, p50: at(0.5), p99: at(0.99), max: at(1) };
  process.stderr.write(`  ${path}: ${requests} requests in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}
await server.close();
store.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
