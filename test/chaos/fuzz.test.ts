/**
 * Fuzzing with fast-check: exchange responses for every endpoint (the client alone, and the whole engine over
 * answers mutated from a real simulated exchange's), strategy files, environment values and CLI flags. Every
 * case must end in a clear error (a BotError with a code, naming what was wrong) or a correct result: never
 * a crash, an error of another kind, or a database that fails its integrity check. FUZZ_RUNS scales the counts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { envShape, parseEnv } from '../../src/app/env.js';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { Engine } from '../../src/engine/engine.js';
import { BotError, ConfigError } from '../../src/errors.js';
import { ExchangeClient } from '../../src/exchange/client.js';
import { silentLogger } from '../../src/ops/logger.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { DEMO_CREDENTIALS, type SimServer, startSimServer } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { ROOT } from '../e2e/daemon-process.js';
import { CHAOS_STRATEGIES } from './run-files.js';
import { tempDir } from '../support/temp-dir.js';

const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const dir = tempDir('chaos-fuzz');
const cases = new Map<string, number>();
const counted = (what: string) => cases.set(what, (cases.get(what) ?? 0) + 1);

afterAll(() => {
  console.log(
    `fuzz cases: ${[...cases].map(([what, n]) => `${what} ${n}`).join(', ')}; ` +
      `${[...cases.values()].reduce((a, b) => a + b, 0)} in all`,
  );
});

/** A clear error: one of the bot's errors, with a code and a message. */
function expectClear(err: unknown): void {
  expect(err, String(err)).toBeInstanceOf(BotError);
  const e = err as BotError;
  expect(e.code).toMatch(/^E_[A-Z_]+$/);
  expect(e.message.length).toBeGreaterThan(0);
}

// ---------------------------------------------------------------------------------------------------------
// A server whose next answer the test sets, and one that mutates a real simulated exchange's answers.

interface Answer {
  status: number;
  body: string;
  contentType: string;
}

let answer: Answer = { status: 200, body: '{}', contentType: 'application/json' };
/** Mutations for the engine fuzz: applied one per answer, in turn, to the real exchange's JSON. */
let mutations: Mutation[] = [];
let mutationIndex = 0;
let fixed: Server;
let mutating: Server;
let sim: SimServer;

interface Mutation {
  kind: 'none' | 'drop' | 'replace' | 'body' | 'status';
  at: number;
  value: unknown;
  status: number;
}

/** Every path into a JSON value (objects' keys and arrays' indexes). */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      const p = [...prefix, Array.isArray(value) ? Number(k) : k];
      out.push(p);
      paths(v, p, out);
    }
  }
  return out;
}

function mutate(text: string, m: Mutation): Answer {
  const json = (body: unknown, status = 200): Answer => ({
    status,
    body: JSON.stringify(body) ?? 'null',
    contentType: 'application/json',
  });
  if (m.kind === 'status') return json({ statusCode: m.status, message: 'fuzzed' }, m.status);
  if (m.kind === 'body') return json(m.value);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { status: 200, body: text, contentType: 'application/json' };
  }
  const all = paths(value);
  if (m.kind === 'none' || all.length === 0) return json(value);
  const path = all[m.at % all.length]!;
  let parent = value as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (m.kind === 'drop') {
    if (Array.isArray(parent)) parent.splice(Number(last), 1);
    else delete parent[last];
  } else parent[last] = m.value;
  return json(value);
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let fixedUrl: string;
let mutatingUrl: string;

beforeAll(async () => {
  fixed = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': answer.contentType });
      res.end(answer.body);
    });
  });
  fixedUrl = await listen(fixed);
  sim = await startSimServer({ engine: new MatchingEngine({ clock: wallClock }) });
  sim.engine.onPrice('BTCUSDT', 20_000, Date.now());
  mutating = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void fetch(`${sim.url}${req.url}`, {
        method: req.method,
        headers: req.headers as Record<string, string>,
        body: req.method === 'GET' ? undefined : Buffer.concat(chunks),
      })
        .then(async (upstream) => {
          const text = await upstream.text();
          const m = mutations.length === 0 ? undefined : mutations[mutationIndex++ % mutations.length];
          const out = m ? mutate(text, m) : { status: upstream.status, body: text, contentType: 'application/json' };
          res.writeHead(out.status, { 'content-type': out.contentType });
          res.end(out.body);
        })
        .catch(() => res.destroy());
    });
  });
  mutatingUrl = await listen(mutating);
});

afterAll(async () => {
  await new Promise((r) => fixed.close(r));
  await new Promise((r) => mutating.close(r));
  await sim.close();
});

// ---------------------------------------------------------------------------------------------------------

const jsonish = fc.oneof(
  fc.jsonValue(),
  fc.constant({ status: 'ok', data: [] }),
  fc.record({ status: fc.constantFrom('ok', 'BROKER_ERROR', 'weird'), data: fc.jsonValue(), code: fc.jsonValue() }),
  fc.record({ statusCode: fc.integer(), message: fc.jsonValue(), error: fc.jsonValue() }),
);
const body = fc.oneof(
  jsonish.map((v) => JSON.stringify(v) ?? 'null'),
  fc.string(),
  fc.constant('<html><body>502 Bad Gateway</body></html>'),
  fc.constant('{"status":"ok","data":[{'),
);
const answers = fc.record({
  status: fc.constantFrom(200, 201, 204, 400, 401, 403, 404, 408, 418, 429, 500, 502, 503, 504),
  body,
  contentType: fc.constantFrom('application/json', 'text/html', 'text/plain'),
});

const ENDPOINTS: Record<string, (c: ExchangeClient) => Promise<unknown>> = {
  'market watch': (c) => c.marketWatch('BTCUSDT'),
  'pair config': (c) => c.pairConfig(),
  balance: (c) => c.balance(),
  'open orders': (c) => c.openOrders('BTCUSDT'),
  'order history': (c) => c.orderHistory({ symbol: 'BTCUSDT' }),
  'trade history': (c) => c.tradeHistory({ symbol: 'BTCUSDT' }),
  create: (c) => c.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.001', price: '20000' }),
  cancel: (c) => c.cancelOrder!('BTCUSDT', '12345'),
};

describe('fuzzing', () => {
  it('every endpoint: any answer ends in a result or a clear error naming the endpoint', async () => {
    const client = new ExchangeClient({
      baseUrl: fixedUrl,
      ...DEMO_CREDENTIALS,
      rateLimit: false,
      retry: { maxAttempts: 1 },
      timeoutMs: 2_000,
    });
    for (const [name, call] of Object.entries(ENDPOINTS)) {
      await fc.assert(
        fc.asyncProperty(answers, async (a) => {
          answer = a;
          counted('exchange answers');
          try {
            await call(client);
          } catch (err) {
            expectClear(err);
            expect((err as Error).message).toMatch(/\/api\/v[34]\//);
            expect((err as Error).message).not.toContain(DEMO_CREDENTIALS.apiSecret);
          }
        }),
        { numRuns: runs(60), seed: 16 + name.length },
      );
    }
    await client.close();
  });

  it('the engine over mutated exchange answers: clear errors only, and a sound database', async () => {
    const mutation = fc.record({
      kind: fc.constantFrom('none', 'none', 'drop', 'replace', 'replace', 'body', 'status'),
      at: fc.nat(),
      value: fc.oneof(fc.jsonValue(), fc.constantFrom(-1, 0, 1e308, '', 'NaN', null, '1e-7', 'BTCUSDT')),
      status: fc.constantFrom(400, 401, 429, 500, 503),
    }) as fc.Arbitrary<Mutation>;
    const [instance] = await loadStrategyFiles(join(dir, 'engine-config'), { strategiesDir: CHAOS_STRATEGIES }).catch(
      async () => {
        mkdirSync(join(dir, 'engine-config'), { recursive: true });
        writeFileSync(
          join(dir, 'engine-config', 'churn.json'),
          JSON.stringify({ name: 'churn', strategy: 'chatty', symbol: 'BTCUSDT', params: { churn: true } }),
        );
        return loadStrategyFiles(join(dir, 'engine-config'), { strategiesDir: CHAOS_STRATEGIES });
      },
    );
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 12 }), async (list) => {
        mutations = list;
        mutationIndex = 0;
        counted('engine runs');
        const path = join(dir, `engine-${n++}.db`);
        const store = openStore({ path, clock: wallClock });
        const client = new ExchangeClient({
          baseUrl: mutatingUrl,
          ...DEMO_CREDENTIALS,
          rateLimit: false,
          retry: { maxAttempts: 1 },
        });
        const engine = new Engine({
          venue: client,
          clock: wallClock,
          store,
          logger: silentLogger,
          instances: [instance!],
        });
        const step = async (what: () => Promise<void> | undefined) => {
          try {
            await what();
          } catch (err) {
            if (!(err instanceof BotError)) console.log(err);
            expectClear(err);
          }
        };
        await step(() => engine.start());
        for (let i = 0; i < 3; i++) {
          await step(() => engine.marketCycle('*/5 * * * * *'));
          await step(() => engine.pollOrders());
        }
        await step(() => engine.refresh());
        await engine.stop();
        store.close();
        await client.close();
        const db = new Database(path, { readonly: true });
        try {
          expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
          expect(db.pragma('foreign_key_check')).toEqual([]);
        } finally {
          db.close();
        }
        mutations = [];
      }),
      { numRuns: runs(80), seed: 1616 },
    );
  }, 120_000);

  it('strategy files: any JSON is loaded or refused with problems naming the file', async () => {
    const config = join(dir, 'config');
    mkdirSync(config, { recursive: true });
    const file = join(config, 'fuzzed.json');
    const field = fc.oneof(fc.jsonValue(), fc.constantFrom('grid', 'BTCUSDT', '* * * * * *', 'not a cron', -1, 1e9));
    const strategyFile = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v) ?? 'null'),
      fc.string(),
      fc
        .record(
          {
            name: fc.oneof(fc.constant('fuzz'), fc.string()),
            strategy: fc.constantFrom('grid', 'dca', 'breakout', 'mean-reversion', 'nope', ''),
            symbol: fc.oneof(fc.constant('BTCUSDT'), fc.string()),
            schedule: fc.oneof(fc.constant('*/5 * * * * *'), fc.string()),
            enabled: fc.oneof(fc.boolean(), field),
            hookTimeoutMs: field,
            params: fc.dictionary(fc.constantFrom('levels', 'spacingPct', 'quantity', 'bandPct', 'x'), field),
            risk: fc.dictionary(fc.constantFrom('maxOpenOrders', 'maxPosition', 'maxOrderNotional', 'y'), field),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
    );
    await fc.assert(
      fc.asyncProperty(strategyFile, async (text) => {
        writeFileSync(file, text);
        counted('strategy files');
        try {
          const loaded = await loadStrategyFiles(config, { strategiesDir: join(ROOT, 'strategies') });
          expect(loaded).toHaveLength(1);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          for (const problem of (err as ConfigError).problems) expect(problem).toContain('fuzzed.json');
        }
      }),
      { numRuns: runs(300), seed: 2 },
    );
  });

  it('environment values: a valid environment or one problem per bad variable, never echoing a secret', () => {
    const names = Object.keys(envShape);
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom('', '0', '-1', '1e3', 'true', 'live', 'paper', 'http://127.0.0.1:1', '* * * * * *', 'USDT=1'),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value), fc.string({ minLength: 8 }), (env, secret) => {
        counted('environments');
        const source = { ...env, EXCHANGE_API_SECRET: `S3CR3T-${secret}` };
        try {
          parseEnv(source);
        } catch (err) {
          expect(err).toBeInstanceOf(ConfigError);
          for (const problem of (err as ConfigError).problems) {
            expect(names.some((n) => problem.startsWith(`${n}: `))).toBe(true);
            expect(problem).not.toContain(`S3CR3T-${secret}`);
          }
        }
      }),
      { numRuns: runs(1000), seed: 3 },
    );
  });

  it('CLI flags: every command answers any flags with an exit code and a message, never a crash', async () => {
    const errors: string[] = [];
    const spyError = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errors.push(a.join(' ')));
    const spyLog = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const spyWarn = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // The commands that end by themselves (run, sim and record serve until a signal).
    const commands: Record<string, string[]> = {
      backtest: [
        '--config',
        '--data',
        '--from',
        '--to',
        '--balance',
        '--fee',
        '--sweep',
        '--set',
        '--workers',
        '--max-gap',
        '--out',
      ],
      'import-candles': ['--symbol', '--out', '--from', '--to'],
      status: ['--db', '--json'],
      'check-config': ['--config', '--strategies'],
      exchange: ['--pair', '--symbol', '--side', '--type', '--quantity', '--price'],
    };
    const modules = {
      backtest: await import('../../src/cli/backtest.js'),
      'import-candles': await import('../../src/cli/import-candles.js'),
      status: await import('../../src/cli/status.js'),
      'check-config': await import('../../src/cli/check-config.js'),
      exchange: await import('../../src/cli/exchange.js'),
    };
    const missing = join(dir, 'missing');
    try {
      for (const [name, flags] of Object.entries(commands)) {
        const token = fc.oneof(
          fc.constantFrom(...flags),
          fc.constantFrom('--nope', '-x', '--', 'balance', 'open', '--help=1'),
          fc.constantFrom(missing, '-1', '0', 'NaN', '1e999', '2024-13-01', 'A=B', 'x=1,2', ''),
          fc.string(),
        );
        await fc.assert(
          fc.asyncProperty(fc.array(token, { maxLength: 6 }), async (argv) => {
            counted('command lines');
            errors.length = 0;
            let code: number;
            try {
              code = await modules[name as keyof typeof modules].run(argv.filter((a) => a !== '--help'));
            } catch (err) {
              // cli.ts prints a BotError that a command let through as `bot: CODE: message`, exit 1.
              expectClear(err);
              errors.push((err as Error).message);
              code = 1;
            }
            expect([0, 1, 2]).toContain(code);
            if (code !== 0) expect(errors.join('\n').length, `${name} ${argv.join(' ')}`).toBeGreaterThan(0);
          }),
          { numRuns: runs(40), seed: 4 + name.length },
        );
      }
    } finally {
      spyError.mockRestore();
      spyLog.mockRestore();
      spyWarn.mockRestore();
    }
  }, 120_000);
});
