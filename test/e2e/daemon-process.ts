/**
 * The daemon as a real process (`node --import tsx src/cli.ts run`) for end-to-end tests, a read-only view of
 * its SQLite file, a synthetic recording with a steady swing, and a wait for what it does.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { RecordingWriter } from '../../src/record/recording-writer.js';
import { RECORDING_FORMAT, RECORDING_VERSION } from '../../src/record/recording-format.js';
import { afterAll, beforeAll } from 'vitest';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import type { PairConfig } from '../../src/ports/venue-records.js';
import { DEMO_CREDENTIALS, type SimServer, startSimServer } from '../../src/sim/sim-server.js';
import { trackChild } from '../support/child-processes.js';
import { until } from '../support/until.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const TEST_STRATEGIES = join(ROOT, 'test/e2e/strategies');

/**
 * `npm start` in the checkout (or another, `cwd`) as users run it, in its own process group (so that the clean-up
 * reaches whatever a failure leaves), with its output gathered line by line.
 */
export function npmStart(env: NodeJS.ProcessEnv, cwd: string = ROOT): { npm: ChildProcess; lines: string[] } {
  const npm = trackChild(spawn('npm', ['start'], { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env }), {
    group: true,
  });
  const lines: string[] = [];
  npm.stdout?.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  npm.stderr?.on('data', (c: Buffer) => lines.push(...c.toString('utf8').split('\n')));
  return { npm, lines };
}

/**
 * Waits for `what` (support/until.ts), giving up as soon as `daemon`, when given, has exited, or when `giveUp`
 * says why the event can no longer come.
 */
export function waitFor<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: { daemon?: DaemonProcess; giveUp?: () => string | undefined } = {},
): Promise<T> {
  const { daemon } = options;
  return until(what, check, {
    every: 100,
    giveUp: () => (daemon?.exit ? `the daemon exited (${JSON.stringify(daemon.exit)})` : options.giveUp?.()),
    tail: () => daemon?.lines.slice(-15).join('\n') ?? '',
  });
}

/** The environment of a daemon under test: this process's, minus anything that would change its mode or notify someone. */
export function daemonEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (
      !/^(EXCHANGE_|NOTIFY_|TELEGRAM_|DISCORD_|MODE$|DB_PATH$|CONFIG_DIR$|STRATEGIES_DIR$|PAPER_|KILL_SWITCH_FILE$|ORDERS_POLL$|REFRESH$|LOG_LEVEL$|LOG_FORMAT$|API_|METRICS_)/.test(
        k,
      )
    )
      env[k] = v;
  // The HTTP listener is off unless a test asks for it (tests run in parallel: no fixed port).
  return { ...env, LOG_LEVEL: 'info', ORDERS_POLL: '* * * * * *', API_PORT: '0', ...vars };
}

/**
 * A live daemon's environment against the simulated exchange at `simUrl` with its demo keys: the strategy
 * files in dir/config, the test strategies, the kill switch at dir/KILL; `vars` adds the rest (DB_PATH…).
 */
export function liveEnv(simUrl: string, dir: string, vars: Record<string, string>): NodeJS.ProcessEnv {
  return daemonEnv({
    MODE: 'live',
    EXCHANGE_BASE_URL: simUrl,
    EXCHANGE_API_KEY: DEMO_CREDENTIALS.apiKey,
    EXCHANGE_API_SECRET: DEMO_CREDENTIALS.apiSecret,
    CONFIG_DIR: join(dir, 'config'),
    STRATEGIES_DIR: TEST_STRATEGIES,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    ...vars,
  });
}

export class DaemonProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(env: NodeJS.ProcessEnv, args: string[] = ['run']) {
    this.child = trackChild(
      spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
        cwd: ROOT,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let rest = '';
    const onData = (chunk: Buffer) => {
      const text = rest + chunk.toString('utf8');
      const parts = text.split('\n');
      rest = parts.pop() ?? '';
      this.lines.push(...parts);
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
  }

  /** Log lines whose msg matches. */
  messages(re: RegExp): string[] {
    return this.lines.filter((l) => re.test(l));
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM', ms = 20_000) {
    this.child.kill(signal);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill('SIGKILL');
        reject(new Error(`daemon did not exit within ${ms} ms after ${signal}:\n${this.lines.slice(-20).join('\n')}`));
      }, ms);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Runs `query` on the database file, opened read-only for this one call (the daemon may be writing). */
export function readDb<T>(path: string, query: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

/** The last price of `symbol` the daemon wrote (what it saw last; status's last prices). */
export const lastPrice = (path: string, symbol = 'BTCUSDT'): string | undefined =>
  readDb(path, (db) => db.prepare('SELECT price FROM last_prices WHERE symbol = ?').pluck().get(symbol)) as
    string | undefined;

/** The stop the engine holds for a declared stopLossPct, as the paper exchange in the database at `path` holds it. */
export function heldStopOnPaper(path: string): { status: string; stop_price: string } | undefined {
  return readDb(path, (d) => {
    const id = d.prepare("SELECT exchange_id FROM orders WHERE tag = 'exit:stop-loss'").pluck().get() as
      string | null | undefined;
    if (!id) return undefined;
    return d.prepare('SELECT status, stop_price FROM paper_orders WHERE id = ?').get(Number(id)) as
      { status: string; stop_price: string } | undefined;
  });
}

/** An order on the paper exchange's own ledger, as the tests read it. */
export interface PaperOrder {
  type: string;
  status: string;
  price: string;
  stop_price: string;
}

/** The `side` orders on the paper exchange's own ledger in the database at `path`, oldest first. */
export function paperOrders(path: string, side: 'BUY' | 'SELL'): PaperOrder[] {
  return readDb(path, (d) =>
    d.prepare('SELECT type, status, price, stop_price FROM paper_orders WHERE side = ? ORDER BY id').all(side),
  ) as PaperOrder[];
}

export interface JournalRow {
  local_id: string;
  instance: string;
  side: 'BUY' | 'SELL';
  type: string;
  price: string | null;
  quantity: string | null;
  tag: string | null;
  status: string;
  exchange_id: string | null;
  filled_qty: string;
}

export const journal = (path: string): JournalRow[] =>
  readDb(path, (db) => db.prepare('SELECT * FROM orders ORDER BY created_at, local_id').all() as JournalRow[]);

/** How many fills the journal at `path` holds. */
export const fillCount = (path: string): number =>
  readDb(path, (db) => db.prepare('SELECT COUNT(*) FROM fills').pluck().get() as number);

export const fillKeys = (path: string): string[] =>
  readDb(path, (db) => db.prepare('SELECT fill_key FROM fills ORDER BY fill_key').pluck().all() as string[]);

/**
 * Everything a journal holds, to compare before and after: its schema and version, and every table's rows
 * (sqlite_sequence's counters included), each table's in a fixed order.
 */
export function journalContents(path: string): Record<string, unknown> {
  return readDb(path, (db) => {
    const schema = db
      .prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name")
      .all() as { type: string; name: string }[];
    const contents: Record<string, unknown> = { schema, version: db.pragma('user_version', { simple: true }) };
    for (const { name } of schema.filter((s) => s.type === 'table'))
      contents[name] = db
        .prepare(`SELECT * FROM "${name}"`)
        .all()
        .map((row) => JSON.stringify(row))
        .sort();
    return contents;
  });
}

/**
 * A recording of `symbol`: `count` tickers one second apart from `start`, swinging ±`amplitudePct` around
 * `mid` with a period of `period` tickers (17 by default: prime, so a daemon sampling every few tickers still sees every phase), so resting limits, stops and brackets all get their turn.
 */
export async function writeSwingRecording(
  file: string,
  options: {
    symbol?: string;
    mid?: number;
    amplitudePct?: number;
    period?: number;
    count?: number;
    start?: number;
  } = {},
): Promise<void> {
  const { symbol = 'BTCUSDT', mid = 20_000, amplitudePct = 1.5, period = 17, count = 170 } = options;
  const start = options.start ?? Date.UTC(2024, 0, 1);
  const writer = await RecordingWriter.open(file, {
    header: {
      format: RECORDING_FORMAT,
      version: RECORDING_VERSION,
      symbol,
      source: 'market-watch',
      provenance: 'synthetic (test)',
    },
  });
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = Math.round(mid * (1 + (amplitudePct / 100) * Math.sin((2 * Math.PI * i) / period)) * 100) / 100;
    lines.push(JSON.stringify({ s: symbol, p, t: start + i * 1000 }));
  }
  await writer.writeLines(lines);
  await writer.close();
}

/** A strategy file for the every-order test strategy. */
export function everyOrderFile(name: string, params: Record<string, unknown> = {}): string {
  return JSON.stringify({ name, strategy: 'every-order', symbol: 'BTCUSDT', schedule: '* * * * * *', params });
}

/** A strategy file (instance `rest`, BTCUSDT, every second) for the `resting` test strategy: `count` LIMIT BUYs far below. */
export function restingFile(count: number): string {
  return JSON.stringify({
    name: 'rest',
    strategy: 'resting',
    symbol: 'BTCUSDT',
    schedule: '* * * * * *',
    params: { count },
  });
}

/**
 * A strategy file (instance `x`, BTCUSDT, every second) for the `reenter` test strategy (buys 0.001 when flat, at
 * most `entries` times; never sells) with the exits and protections the engine enforces for it.
 */
export function reenterFile(decl: { entries: number; exits?: object; protections?: object }): string {
  return JSON.stringify({
    name: 'x',
    strategy: 'reenter',
    symbol: 'BTCUSDT',
    schedule: '* * * * * *',
    params: { entries: decl.entries },
    ...(decl.exits === undefined ? {} : { exits: decl.exits }),
    ...(decl.protections === undefined ? {} : { protections: decl.protections }),
  });
}

/**
 * A paper daemon's environment in `dir`, replaying a swing recording in lockstep: the strategy files (name to
 * content) in dir/config, the recording in dir/swing.jsonl.gz, the journal in dir/bot.db and the kill switch
 * at dir/KILL; `extra` adds variables.
 */
export async function lockstepPaperEnv(
  dir: string,
  strategyFiles: Record<string, string>,
  swing: Parameters<typeof writeSwingRecording>[1],
  extra: Record<string, string> = {},
): Promise<NodeJS.ProcessEnv> {
  const config = join(dir, 'config');
  mkdirSync(config);
  for (const [name, content] of Object.entries(strategyFiles)) writeFileSync(join(config, name), content);
  const recording = join(dir, 'swing.jsonl.gz');
  await writeSwingRecording(recording, swing);
  return daemonEnv({
    DB_PATH: join(dir, 'bot.db'),
    CONFIG_DIR: config,
    STRATEGIES_DIR: TEST_STRATEGIES,
    PAPER_DATA: recording,
    PAPER_LOCKSTEP: 'true',
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    ...extra,
  });
}

/** A call to the daemon's HTTP listener: the status and the JSON body (null when there is none). */
export async function http(
  url: string,
  options: { token?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * Paper on live prices for a suite: an upstream simulated exchange (wall clock) started before it at BTCUSDT
 * `start`, and a temp folder with the paper daemon's database path; both gone after the suite. `price` moves
 * the upstream's BTCUSDT price now; `env` is a paper daemon's environment on it. `pairs`: the upstream's pair
 * configurations (the paper exchange copies them), the built-in ones by default.
 */
export function paperLiveUpstream(prefix: string, start: number, pairs?: readonly PairConfig[]) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  let server: SimServer | undefined;
  const suite = {
    dir,
    db: join(dir, 'paper.db'),
    get upstream(): SimServer {
      if (server === undefined) throw new Error('the upstream starts before the suite');
      return server;
    },
    price: (p: number) => suite.upstream.engine.onPrice('BTCUSDT', p, Date.now()),
    /** A paper daemon's environment on the upstream: the strategy files (name to content) in dir/config. */
    env(strategyFiles: Record<string, string>): NodeJS.ProcessEnv {
      const config = join(dir, 'config');
      mkdirSync(config, { recursive: true });
      for (const [name, content] of Object.entries(strategyFiles)) writeFileSync(join(config, name), content);
      return daemonEnv({
        EXCHANGE_BASE_URL: suite.upstream.url,
        DB_PATH: suite.db,
        CONFIG_DIR: config,
        STRATEGIES_DIR: TEST_STRATEGIES,
        KILL_SWITCH_FILE: join(dir, 'KILL'),
      });
    },
  };
  beforeAll(async () => {
    server = await startSimServer({ engine: new MatchingEngine({ clock: wallClock, ...(pairs && { pairs }) }) });
    suite.price(start);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return suite;
}
