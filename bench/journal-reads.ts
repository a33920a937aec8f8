/**
 * `npm run bench:journal-reads`: how fast the daemon answers GET /api/v1/status and GET /metrics on a long
 * journal. Builds a paper database as the previous schema (4) left it, with --events events (default 1M),
 * --fills fills (default 100k) of as many orders, and the paper exchange's own 100k orders and fills (one
 * transaction, prepared statements), then times both routes in a child process, each request reading the
 * journal (no cache answers):
 * - with the baseline's code (--baseline REF, default 33ad1f9: before the journal's aggregates; `none` skips
 *   it), unpacked from git into a temp folder, on a copy of the database;
 * - with this tree's code, which first upgrades the database in place (migration 5; the time is printed).
 * Prints p50, p99 and max of each beside the baseline's, and the figures. The machine is shared and
 * loaded: absolute figures are noisy, the ratio between the two runs less so.
 */
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../src/store/migrations.js';
import { mulberry32 } from '../src/sim/prng.js';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    fills: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    // The baseline reads every row on each request: fewer of them keep the run short.
    'baseline-requests': { type: 'string', default: '20' },
    baseline: { type: 'string', default: '33ad1f9' },
  },
});
const EVENTS = Number(values.events);
const FILLS = Number(values.fills);
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 1, 12);
const INSTANCES = ['grid-btc', 'grid-eth', 'trend-btc', 'trend-eth', 'dca-btc', 'dca-eth', 'scalp-btc', 'scalp-eth'];
const symbolOf = (instance: string) => (instance.endsWith('btc') ? 'BTCUSDT' : 'ETHUSDT');

const dir = mkdtempSync(join(tmpdir(), 'bench-journal-reads-'));

/** A journal at schema 4 with the rows a long paper run leaves. */
function build(path: string): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, NOW - 400 * DAY);
  }
  const random = mulberry32(25);
  const order = db.prepare(
    'INSERT INTO orders (local_id, instance, seq, symbol, side, type, price, quantity, status, venue_status, exchange_id, ' +
      'filled_qty, avg_price, exec_qty, fill_source, match_method, external, created_at, sent_at, updated_at) ' +
      "VALUES (?, ?, ?, ?, ?, 'LIMIT', ?, ?, ?, ?, ?, ?, ?, ?, 'trades', 'response', 0, ?, ?, ?)",
  );
  const fill = db.prepare(
    'INSERT INTO fills (fill_key, order_local_id, instance, symbol, side, price, qty, fee, fee_asset, fee_in, time, source, delivered, recorded_at) ' +
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'USDT', 'quote', ?, 'trade', 1, ?)",
  );
  const paperOrder = db.prepare(
    "INSERT INTO paper_orders VALUES (?, 1, ?, ?, 'LIMIT', ?, ?, ?, '0', '0', NULL, 0, NULL, NULL, NULL, '0', '0', ?, ?, ?, '0.001', ?, ?)",
  );
  const paperFill = db.prepare("INSERT INTO paper_fills VALUES (?, ?, 1, ?, ?, ?, ?, ?, ?, 'USDT', '0.001', 1, ?)");
  const event = db.prepare('INSERT INTO events (time, instance, kind, data) VALUES (?, ?, ?, ?)');
  db.transaction(() => {
    const start = NOW - 200 * DAY;
    let price = 60_000;
    db.prepare("INSERT INTO paper_exchange VALUES (1, 'live', NULL, ?, ?)").run(start, NOW);
    db.prepare('INSERT INTO paper_accounts VALUES (1, ?, ?)').run('{"USDT":"100000"}', start);
    for (let i = 1; i <= FILLS; i++) {
      const instance = INSTANCES[i % INSTANCES.length]!;
      const symbol = symbolOf(instance);
      const side = random() < 0.5 ? 'BUY' : 'SELL';
      price = Math.max(1000, price * (1 + (random() - 0.5) / 500));
      const p = price.toFixed(2);
      const qty = (0.0001 + random() / 100).toFixed(6);
      const time = start + Math.floor((i / FILLS) * 200 * DAY);
      const open = i > FILLS - 40;
      const status = open ? 'OPEN' : 'FILLED';
      order.run(`o-${i}`, instance, i, symbol, side, p, qty, status, status, `x-${i}`, qty, p, qty, time, time, time);
      fill.run(
        `t-${i}`,
        `o-${i}`,
        instance,
        symbol,
        side,
        p,
        qty,
        (Number(p) * Number(qty) * 0.001).toFixed(8),
        time,
        time,
      );
      const pstatus = open ? 'NEW' : 'FILLED';
      paperOrder.run(i, symbol, side, pstatus, qty, p, qty, (Number(p) * Number(qty)).toFixed(8), '0', time, time);
      paperFill.run(i, i, symbol, side, p, qty, (Number(p) * Number(qty)).toFixed(8), '0', time);
    }
    db.prepare("INSERT INTO paper_balances VALUES (1, 'USDT', '90000', '100'), (1, 'BTC', '0.5', '0')").run();
    db.prepare("INSERT INTO last_prices VALUES ('BTCUSDT', ?, ?, ?), ('ETHUSDT', '3000', ?, ?)").run(
      price.toFixed(2),
      NOW,
      NOW,
      NOW,
      NOW,
    );
    // What a long run writes: mostly notifications, refusals and reconciliations; a start now and then; the
    // brakes and authentication rarely or never.
    const kinds = [
      ['notification-sent', 0.55],
      ['refused', 0.25],
      ['reconciled', 0.1],
      ['operator', 0.04],
      ['paused', 0.02],
      ['resumed', 0.02],
      ['exit-triggered', 0.0199],
    ] as const;
    for (let i = 1; i <= EVENTS; i++) {
      const time = start + Math.floor((i / EVENTS) * 200 * DAY);
      if (i % 5000 === 1) {
        event.run(time, null, 'daemon-started', JSON.stringify({ pid: 1, mode: 'paper', venue: 'paper' }));
        for (const instance of INSTANCES) event.run(time, instance, 'started', '{}');
        continue;
      }
      let roll = random();
      let kind: string = kinds[0][0];
      for (const [k, share] of kinds)
        if ((roll -= share) < 0) {
          kind = k;
          break;
        }
      const instance = kind === 'notification-sent' ? null : INSTANCES[i % INSTANCES.length]!;
      event.run(time, instance, kind, JSON.stringify({ reason: 'bench', n: i }));
    }
    event.run(start + 100 * DAY, null, 'kill-switch', JSON.stringify({ on: false }));
  })();
  db.close();
}

interface Figures {
  first: number;
  p50: number;
  p99: number;
  max: number;
}
type Result = { openMs: number } & Record<'/api/v1/status' | '/metrics', Figures>;

function measure(root: string, db: string, label: string, requests: string): Promise<Result> {
  process.stdout.write(`measuring ${label}…\n`);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench/journal-reads-measure.ts'),
      '--root',
      root,
      '--db',
      db,
      '--requests',
      requests,
      '--now',
      String(NOW),
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return new Promise((done, fail) =>
    child.once('exit', (code) =>
      code === 0
        ? done(JSON.parse(out.trim().split('\n').pop()!) as Result)
        : fail(new Error(`${label}: exit ${code}`)),
    ),
  );
}

/** The baseline's source tree (src/, package.json) from git, with this tree's node_modules. */
function unpack(ref: string): string {
  const root = join(dir, 'baseline');
  mkdirSync(root);
  const archive = execFileSync('git', ['-C', ROOT, 'archive', ref, 'src', 'package.json'], { maxBuffer: 1 << 28 });
  execFileSync('tar', ['-x', '-C', root], { input: archive });
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

async function main(): Promise<void> {
  const path = join(dir, 'journal.db');
  process.stdout.write(
    `building a journal: ${EVENTS} events, ${FILLS} fills and orders, ${FILLS} paper orders and fills…\n`,
  );
  let t = performance.now();
  build(path);
  process.stdout.write(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  let baseline: Result | undefined;
  if (values.baseline !== 'none') {
    const copy = join(dir, 'baseline.db');
    copyFileSync(path, copy);
    baseline = await measure(
      unpack(values.baseline),
      copy,
      `the baseline (${values.baseline})`,
      values['baseline-requests'],
    );
  }
  t = performance.now();
  const now = await measure(ROOT, path, 'this tree (upgrading the journal in place first)', values.requests);
  const ms = (x: number | undefined) => (x === undefined ? '-' : x.toFixed(1)).padStart(8);
  console.log(
    `\n${EVENTS} events, ${FILLS} fills: ms per request, every request reading the journal ` +
      `(baseline ${values['baseline-requests']} requests per route, now ${values.requests})`,
  );
  console.log(`${'route'.padEnd(16)}${'figure'.padEnd(8)}${'baseline'.padStart(10)}${'now'.padStart(10)}`);
  for (const route of ['/api/v1/status', '/metrics'] as const)
    for (const figure of ['first', 'p50', 'p99', 'max'] as const)
      console.log(
        `${route.padEnd(16)}${figure.padEnd(8)}  ${ms(baseline?.[route][figure])}  ${ms(now[route][figure])}`,
      );
  console.log(
    `opening the journal: baseline ${ms(baseline?.openMs).trim()} ms, now ${ms(now.openMs).trim()} ms (includes the upgrade to schema 5)`,
  );
  console.log("the issue's figures (before): building the status view 20 ms at 100k events, 694 ms at 100k fills");
  console.log('target: p99 under 20 ms for both routes at 1M events and 100k fills');
  console.log(
    `load average at the end (1, 5, 15 min): ${loadavg()
      .map((l) => l.toFixed(1))
      .join(', ')} on ${cpus().length} cores`,
  );
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => (process.env.KEEP ? console.log(dir) : rmSync(dir, { recursive: true, force: true })));
