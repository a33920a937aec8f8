/**
 * `npm run bench:live-pairs [-- --pairs 1,20,100 --seconds 60 --warmup 10 --swing 1]`: the live loop's cost
 * against the pair count (issue 41). For each count, a fresh `bot sim` replays (looping, at the recorded pace)
 * one synthetic recording per pair (QAAUSDT, QABUSDT…: a swing of ±`--swing`% around 100, period 37 s, each
 * pair's own phase, the pair's rules in the header, so the simulator lists and trades them), and a live daemon
 * (MODE=live, the shipped ORDERS_POLL and REFRESH, LOG_LEVEL info) runs one strategy file of the shipped grid
 * (spacing 0.3%) over that many pairs (`symbols`, market schedule every 2 s): its ladders rest, and fill when the
 * swing crosses their levels. After "daemon running" and `--warmup` seconds, it measures `--seconds` of wall
 * time: the daemon's CPU seconds a minute (/proc/PID/stat) and its requests a second to the exchange by endpoint
 * (its /metrics, spot_bot_exchange_requests_total), against the request budget. The exchange's contract states
 * no rate limit or request weights (spot-api.md, Limits: "not shown"), so every request weighs 1 and the budget
 * is the client's own token bucket (EXCHANGE_RATE_LIMIT, 10 a second by default). Prints a table and the load.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DAEMON_SCHEDULE } from '../src/config/env.js';
import { RECORDING_FORMAT, RECORDING_VERSION } from '../src/record/recording-format.js';
import { RecordingWriter } from '../src/record/recording-writer.js';
import { DEFAULT_ASSETS, simPairConfig } from '../src/sim/default-market.js';
import { freshCredentials, SimProcess } from '../test/chaos/sim-process.js';
import { DaemonProcess, daemonEnv, ROOT, waitFor } from '../test/e2e/daemon-process.js';
import { freePort } from '../test/support/free-port.js';
import { deadline } from '../test/support/until.js';

const { values } = parseArgs({
  options: {
    pairs: { type: 'string', default: '1,20,100' },
    seconds: { type: 'string', default: '60' },
    warmup: { type: 'string', default: '10' },
    swing: { type: 'string', default: '1' },
  },
});
const COUNTS = values.pairs.split(',').map(Number);
const SECONDS = Number(values.seconds);
const WARMUP = Number(values.warmup);
const SWING = Number(values.swing);
if (
  !COUNTS.every((n) => Number.isInteger(n) && n >= 1 && n <= 676) ||
  !(SECONDS > 0) ||
  !(WARMUP >= 0) ||
  !(SWING >= 0)
) {
  console.error(
    'bench:live-pairs: --pairs takes counts from 1 to 676; --seconds, --warmup and --swing positive numbers',
  );
  process.exit(2);
}
/** The client's default token bucket (src/config/env.ts EXCHANGE_RATE_LIMIT): the budget the daemon keeps to. */
const BUDGET = 10;
const USDT = DEFAULT_ASSETS.find((a) => a.code === 'USDT')!;
const TICKS = 600;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const progress = (text: string) =>
  process.stderr.isTTY ? process.stderr.write(`\r\x1b[K${text}`) : process.stderr.write(`${text}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The i-th synthetic pair's base asset: QAA, QAB, … */
const base = (i: number) => `Q${String.fromCharCode(65 + Math.floor(i / 26), 65 + (i % 26))}`;

/** The recording of pair i: a ±SWING% swing around 100 a ticker a second, its rules in the header. */
async function recording(dir: string, i: number): Promise<string> {
  const pair = simPairConfig({ id: 100 + i, code: base(i) }, USDT);
  const file = join(dir, `${pair.symbol}.jsonl.gz`);
  const writer = await RecordingWriter.open(file, {
    header: {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      symbol: pair.symbol,
      source: 'market-watch',
      provenance: 'synthetic (bench/live-pairs.ts)',
      pair,
    },
  });
  const start = Date.UTC(2024, 0, 1);
  const lines: string[] = [];
  for (let t = 0; t < TICKS; t++) {
    const p = Math.round(100 * (1 + (SWING / 100) * Math.sin((2 * Math.PI * t) / 37 + i)) * 100) / 100;
    lines.push(JSON.stringify({ s: pair.symbol, p, t: start + t * 1000 }));
  }
  await writer.writeLines(lines);
  await writer.close();
  return file;
}

/** The shipped grid (config/grid-btcusdt.json) over `symbols`, its amounts scaled to prices around 100. */
function gridFile(symbols: string[]): string {
  return JSON.stringify({
    name: `grid-${symbols.length}`,
    strategy: 'grid',
    symbols,
    schedule: '*/2 * * * * *',
    params: { levels: 5, spacingPct: '0.3', quantity: '0.1', budgetQuote: '200' },
    risk: { maxOrderNotional: '50', maxOpenOrders: 12, maxPosition: '10', dailyLossLimit: '25' },
  });
}

/** spot_bot_exchange_requests_total by endpoint (both outcomes), and the rate-limit errors, from /metrics. */
async function requestCounts(port: number): Promise<{ byEndpoint: Map<string, number>; limited: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const byEndpoint = new Map<string, number>();
  let limited = 0;
  for (const line of text.split('\n')) {
    const request = /^spot_bot_exchange_requests_total\{endpoint="([^"]+)",outcome="\w+"\} (\S+)$/.exec(line);
    if (request) byEndpoint.set(request[1]!, (byEndpoint.get(request[1]!) ?? 0) + Number(request[2]));
    const error = /^spot_bot_exchange_errors_total\{code="E_RATE_LIMIT"\} (\S+)$/.exec(line);
    if (error) limited = Number(error[1]);
  }
  return { byEndpoint, limited };
}

/** The CPU seconds (user and system, all threads) process `pid` has used: /proc/PID/stat fields 14 and 15. */
function cpuSeconds(pid: number): number {
  const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const stat = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

interface Row {
  pairs: number;
  cpuPerMinute: number;
  perSecond: Map<string, number>;
  total: number;
  limited: number;
  openOrders: number;
  load: string;
}

async function measure(dir: string, files: string[], n: number): Promise<Row> {
  const run = join(dir, `run-${n}`);
  mkdirSync(join(run, 'config'), { recursive: true });
  const symbols = files.slice(0, n).map((f) => f.slice(f.lastIndexOf('/') + 1, -'.jsonl.gz'.length));
  writeFileSync(join(run, 'config', 'grid.json'), gridFile(symbols));
  const credentials = freshCredentials();
  progress(`${n} pairs: starting the simulated exchange on ${files.length} recordings…`);
  const sim = await SimProcess.start(
    ['--data', files.join(','), '--loop', '--speed', '1', '--balance', 'USDT=1000000'],
    credentials,
  );
  const port = await freePort();
  const daemon = new DaemonProcess(
    daemonEnv({
      MODE: 'live',
      EXCHANGE_BASE_URL: sim.url!,
      EXCHANGE_API_KEY: credentials.apiKey,
      EXCHANGE_API_SECRET: credentials.apiSecret,
      DB_PATH: join(run, 'bot.db'),
      CONFIG_DIR: join(run, 'config'),
      STRATEGIES_DIR: join(ROOT, 'strategies'),
      KILL_SWITCH_FILE: join(run, 'KILL'),
      ORDERS_POLL: DEFAULT_DAEMON_SCHEDULE.ordersPoll,
      REFRESH: DEFAULT_DAEMON_SCHEDULE.refresh,
      METRICS_PORT: String(port),
    }),
  );
  try {
    progress(`${n} pairs: starting the live daemon…`);
    await waitFor('"daemon running"', () => daemon.messages(/"daemon running"/).length > 0, {
      daemon,
      giveUp: deadline(180_000),
    });
    for (let s = WARMUP; s > 0; s--) {
      progress(`${n} pairs: warming up, ${s} s left (the ladders placed)`);
      await sleep(1000);
    }
    const pid = daemon.child.pid!;
    const before = await requestCounts(port);
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    for (let s = SECONDS; s > 0; s--) {
      progress(`${n} pairs: measuring, ${s} s left`);
      await sleep(1000);
    }
    const after = await requestCounts(port);
    const cpu = cpuSeconds(pid) - cpu0;
    const wall = (performance.now() - t0) / 1000;
    const perSecond = new Map<string, number>();
    for (const [endpoint, count] of after.byEndpoint) {
      const delta = count - (before.byEndpoint.get(endpoint) ?? 0);
      if (delta > 0) perSecond.set(endpoint, delta / wall);
    }
    const open = await sim.client(credentials).openOrders();
    return {
      pairs: n,
      cpuPerMinute: (cpu / wall) * 60,
      perSecond,
      total: [...perSecond.values()].reduce((a, b) => a + b, 0),
      limited: after.limited - before.limited,
      openOrders: open.length,
      load: load(),
    };
  } finally {
    await daemon.stop('SIGTERM');
    await sim.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-live-pairs-'));
const rows: Row[] = [];
try {
  const most = Math.max(...COUNTS);
  progress(`writing ${most} recordings…`);
  const files: string[] = [];
  for (let i = 0; i < most; i++) files.push(await recording(dir, i));
  for (const n of COUNTS) rows.push(await measure(dir, files, n));
} finally {
  if (process.stderr.isTTY) process.stderr.write('\n');
  rmSync(dir, { recursive: true, force: true });
}

const short = (endpoint: string) => endpoint.replace(/\/api\/v\d\/(spot\/)?/, '');
const endpoints = [...new Set(rows.flatMap((r) => [...r.perSecond.keys()]))].sort();
console.log(
  `live loop against the pair count: the shipped grid (spacing 0.3%) on a live daemon against bot sim, prices ` +
    `swinging ±${SWING}% (period 37 s), ${SECONDS} s measured ` +
    `after ${WARMUP} s of warm-up; market schedule */2 s, ORDERS_POLL ${DEFAULT_DAEMON_SCHEDULE.ordersPoll}, ` +
    `REFRESH ${DEFAULT_DAEMON_SCHEDULE.refresh}`,
);
console.log('requests a second by endpoint, each weighing 1 (spot-api.md states no weights or limits):');
console.log(
  [
    'pairs'.padStart(5),
    'CPU s/min'.padStart(9),
    ...endpoints.map((e) => short(e).padStart(Math.max(10, short(e).length))),
    'total/s'.padStart(8),
    'of budget'.padStart(9),
    '429s'.padStart(4),
    'open'.padStart(5),
    '  load 1/5/15',
  ].join(' '),
);
for (const r of rows)
  console.log(
    [
      String(r.pairs).padStart(5),
      r.cpuPerMinute.toFixed(2).padStart(9),
      ...endpoints.map((e) => (r.perSecond.get(e) ?? 0).toFixed(2).padStart(Math.max(10, short(e).length))),
      r.total.toFixed(2).padStart(8),
      `${((100 * r.total) / BUDGET).toFixed(0)}%`.padStart(9),
      String(r.limited).padStart(4),
      String(r.openOrders).padStart(5),
      `  ${r.load}`,
    ].join(' '),
  );
console.log(
  `budget: the client's token bucket, ${BUDGET} requests a second (EXCHANGE_RATE_LIMIT's default); ` +
    `open: the account's open orders at the end; load average at the end ${load()}`,
);
