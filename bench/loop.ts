/**
 * The daemon's loop, measured. Prints its figures; not part of the test run.
 *
 * 1. Tick-to-wire: from a ticker handed to the engine (engine.observe) to the order request arriving at the
 *    simulated exchange's HTTP server on 127.0.0.1 (Node's `http.server.request.start` diagnostics channel,
 *    i.e. once the request's headers are read), through everything live does: strategy hook, pair rules,
 *    risk and balance checks, the journal row committed to SQLite (FULL sync: an fsync) before the send, signing
 *    and the undici request. p50/p99 over many samples, with the journal on a file and in memory. Beside it, in
 *    the same run and alternating sample by sample, its baseline: the same client's createOrder alone (signing,
 *    undici, to the same server), so the engine's own part is the difference; and the CPU per order (the
 *    process's, the in-process server's share included). Every order rests on the book, so by the end the
 *    instance holds thousands of open orders: a path whose cost grows with them shows in the p99.
 * 2. The fill cycle: a resting order filled on the in-process matching engine, then the orders poll that finds
 *    the fill, journals it, updates the position and calls onFill (pollOrders until onFill ran): p50/p99.
 * 3. Memory: RSS after 100k recorded ticks through 10 instances of the shipped strategies (the shipped
 *    configs' params) against the in-process matching engine, on a virtual clock, with the store on a file.
 *    BENCH_DB=:memory: or BENCH_SYNC=NORMAL show what the journal's commits cost there.
 * `npm run bench:loop [-- --wire]` (--wire: 1 and 2 only). The machine is shared: compare figures of one run.
 */
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Engine } from '../src/engine/engine.js';
import { ExchangeClient } from '../src/exchange/client.js';
import type { Ticker } from '../src/ports/venue-records.js';
import { tickerFromWire, TickerSchema } from '../src/wire/schemas.js';
import { silentLogger } from '../src/ops/logger.js';
import { VirtualClock } from '../src/clocks/virtual-clock.js';
import { wallClock } from '../src/clocks/wall-clock.js';
import { readRecordingBatches } from '../src/record/recording-reader.js';
import { InProcessVenue } from '../src/venues/in-process-venue.js';
import { MatchingEngine } from '../src/sim/matching-engine.js';
import { DEMO_CREDENTIALS, startSimServer } from '../src/sim/sim-server.js';
import { defineStrategy } from '../src/strategy/api.js';
import { openStore } from '../src/store/store.js';
import { onePairInstance } from '../src/config/strategy-file.js';
import { shippedInstances } from './shipped-instances.js';

const SAMPLE = new URL('../data/samples/BTCUSDT-2023-03-01_21.jsonl.gz', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'bench-loop-'));

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const ms = (x: number) => `${x.toFixed(3)} ms`;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** The last price that marks a ticker to fire on (any other price places nothing). */
const FIRE_PRICE = 20_001;

/** A strategy that places a resting LIMIT BUY on each ticker at FIRE_PRICE and does nothing otherwise. */
const fireOnMark = defineStrategy({
  name: 'fire-on-mark',
  params: z.object({}),
  onTick(ctx) {
    if (ctx.ticker?.last === FIRE_PRICE) ctx.limit('BUY', '1000', '0.001');
  },
});

async function tickToWire(dbPath: string, samples: number): Promise<void> {
  const sim = await startSimServer({
    engine: new MatchingEngine({ clock: wallClock }),
    balances: { USDT: '100000000', BTC: '10' },
  });
  sim.engine.onPrice('BTCUSDT', 20_000, Date.now());
  const client = new ExchangeClient({
    baseUrl: sim.url,
    apiKey: DEMO_CREDENTIALS.apiKey,
    apiSecret: DEMO_CREDENTIALS.apiSecret,
    rateLimit: false,
  });
  const store = openStore({ path: dbPath, clock: wallClock });
  const config = onePairInstance({ name: 'fire', strategy: 'fire-on-mark', symbol: 'BTCUSDT' });
  const engine = new Engine({
    venue: client,
    clock: wallClock,
    store,
    logger: silentLogger,
    instances: [{ config, definition: fireOnMark, params: {} }],
  });
  await engine.start();

  let arrived = 0;
  const onRequest = (message: unknown) => {
    const { request } = message as { request: IncomingMessage };
    if (request.method === 'POST' && request.url?.startsWith('/api/v4/spot/order')) arrived = performance.now();
  };
  subscribe('http.server.request.start', onRequest);

  const ticker = (fire: boolean): Ticker =>
    tickerFromWire(TickerSchema.parse({ s: 'BTCUSDT', p: fire ? FIRE_PRICE : 20_000, t: Date.now() }));
  const quiet = ticker(false);
  const latencies: number[] = [];
  const bare: number[] = [];
  /** The baseline: the same order sent by the client alone (no engine, no journal). */
  const request = { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.001', price: '1000' } as const;
  let cpu = 0;
  for (let i = 0; i < samples + 200; i++) {
    // A tick that places nothing first (the usual case), then the one that does.
    void engine.observe([ticker(false)]);
    const marked = ticker(true);
    arrived = 0;
    const cpu0 = process.cpuUsage();
    const started = performance.now();
    const pending = engine.observe([marked]);
    if (pending) await pending;
    const used = process.cpuUsage(cpu0);
    if (arrived === 0) throw new Error(`sample ${i}: no order reached the server`);
    const wire = arrived - started;
    arrived = 0;
    const bareStarted = performance.now();
    await client.createOrder(request);
    if (arrived === 0) throw new Error(`sample ${i}: the baseline's order did not reach the server`);
    // The first 200 warm up JIT, connections, statements.
    if (i >= 200) {
      latencies.push(wire);
      bare.push(arrived - bareStarted);
      cpu += used.user + used.system;
    }
  }
  latencies.sort((a, b) => a - b);
  bare.sort((a, b) => a - b);
  const where = dbPath === ':memory:' ? 'journal in memory' : 'journal on a file, FULL sync';
  console.log(
    `tick-to-wire (${where}): p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, ` +
      `max ${ms(latencies.at(-1)!)} over ${latencies.length} orders (${engine.instances()[0]!.counters.placed} ` +
      `resting at the end); ${(cpu / 1000 / latencies.length).toFixed(3)} ms CPU per order, to the answer`,
  );
  console.log(
    `  baseline, the client's createOrder alone to the same server: p50 ${ms(percentile(bare, 50))}, ` +
      `p99 ${ms(percentile(bare, 99))}; the engine's part: p50 ` +
      `${ms(percentile(latencies, 50) - percentile(bare, 50))}, p99 ${ms(percentile(latencies, 99) - percentile(bare, 99))}`,
  );

  // The usual tick: nothing to send.
  const quietRuns = 100_000;
  const ticksBefore = engine.instances()[0]!.counters.ticks;
  const quietStart = performance.now();
  for (let i = 0; i < quietRuns; i++) void engine.observe([quiet]);
  const hooked = engine.instances()[0]!.counters.ticks - ticksBefore;
  if (hooked !== quietRuns) throw new Error(`onTick ran ${hooked} times for ${quietRuns} ticks`);
  console.log(
    `tick without an order (1 instance): ${(((performance.now() - quietStart) * 1000) / quietRuns).toFixed(2)} µs`,
  );

  await engine.stop();
  store.close();
  await client.close();
  await sim.close();
}

/** A resting LIMIT BUY under the market on each ticker at FIRE_PRICE; counts its fills. */
let fillsSeen = 0;
const restThenFill = defineStrategy({
  name: 'rest-then-fill',
  params: z.object({}),
  onTick(ctx) {
    if (ctx.ticker?.last === FIRE_PRICE) ctx.limit('BUY', String(FIRE_PRICE - 10), '0.001');
  },
  onFill() {
    fillsSeen++;
  },
});

/**
 * The fill cycle on the in-process matching engine (a virtual clock): an order rests, the price falls through
 * it, and the orders poll finds the fill, journals it, updates the position and calls onFill. Timed: that poll.
 */
async function fillCycle(dbPath: string, cycles: number): Promise<void> {
  const clock = new VirtualClock(Date.parse('2024-01-01T00:00:00Z'));
  const sim = new MatchingEngine({ clock });
  sim.createAccount({ apiKey: 'bench', balances: { USDT: '100000000', BTC: '10' } });
  const venue = new InProcessVenue(sim, 'bench');
  const store = openStore({ path: dbPath, clock });
  const config = onePairInstance({ name: 'fill', strategy: 'rest-then-fill', symbol: 'BTCUSDT' });
  const engine = new Engine({
    venue,
    clock,
    store,
    logger: silentLogger,
    instances: [{ config, definition: restThenFill, params: {} }],
  });
  const tick = async (p: number) => {
    clock.time += 1000;
    const wire = { s: 'BTCUSDT', p, t: clock.time };
    sim.onTicker(wire);
    const pending = engine.observe([tickerFromWire(TickerSchema.parse(wire))]);
    if (pending) await pending;
  };
  await tick(20_000);
  await engine.start();
  const times: number[] = [];
  for (let i = 0; i < cycles + 100; i++) {
    await tick(FIRE_PRICE); // places the order
    const settled = engine.pollOrders(); // its answer settled: it rests
    if (settled) await settled;
    await tick(FIRE_PRICE - 20); // fills it on the matching engine
    const before = fillsSeen;
    const started = performance.now();
    const polled = engine.pollOrders();
    if (polled) await polled;
    const took = performance.now() - started;
    if (fillsSeen !== before + 1) throw new Error(`cycle ${i}: onFill ran ${fillsSeen - before} times, not once`);
    if (i >= 100) times.push(took);
  }
  times.sort((a, b) => a - b);
  const where = dbPath === ':memory:' ? 'journal in memory' : 'journal on a file, FULL sync';
  console.log(
    `fill cycle (${where}): p50 ${ms(percentile(times, 50))}, p99 ${ms(percentile(times, 99))} over ${times.length} fills`,
  );
  await engine.stop();
  store.close();
}

async function memory(ticks: number): Promise<void> {
  const instances = await shippedInstances();
  const clock = new VirtualClock(0);
  const sim = new MatchingEngine({ clock });
  sim.createAccount({ apiKey: 'bench', balances: { USDT: '1000000', BTC: '10' } });
  const venue = new InProcessVenue(sim, 'bench');
  const store = openStore({
    path: process.env.BENCH_DB ?? join(dir, 'memory.db'),
    clock,
    synchronous: process.env.BENCH_SYNC === 'NORMAL' ? 'NORMAL' : 'FULL',
  });
  const engine = new Engine({ venue, clock, store, logger: silentLogger, instances });

  const before = process.memoryUsage();
  let fed = 0;
  let started = 0;
  const t0 = performance.now();
  for await (const batch of readRecordingBatches(SAMPLE)) {
    for (const ticker of batch) {
      clock.time = ticker.t;
      sim.onTicker(ticker);
      if (fed === 0) {
        await engine.start();
        started = performance.now();
      }
      const pending = engine.observe([tickerFromWire(ticker)]);
      if (pending) await pending;
      const polled = engine.pollOrders();
      if (polled) await polled;
      if (++fed >= ticks) break;
    }
    if (fed >= ticks) break;
  }
  const seconds = (performance.now() - started) / 1000;
  global.gc?.();
  const after = process.memoryUsage();
  const counts = engine
    .instances()
    .reduce((sum, i) => ({ placed: sum.placed + i.counters.placed, fills: sum.fills + i.counters.fills }), {
      placed: 0,
      fills: 0,
    });
  console.log(
    `100k ticks × 10 instances (${instances.map((i) => i.config.strategy).join(', ')}): ` +
      `${(fed / seconds).toFixed(0)} ticks/s, ${counts.placed} orders, ${counts.fills} fills, ` +
      `in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  console.log(
    `memory: RSS ${mb(before.rss)} before, ${mb(after.rss)} after ${fed} ticks; heap used ${mb(after.heapUsed)}` +
      `${global.gc ? ' (after a GC)' : ''}`,
  );
  await engine.stop();
  store.close();
}

const wireOnly = process.argv.includes('--wire');
try {
  // Memory first, so that "before" is a fresh process with the modules loaded.
  if (!wireOnly) await memory(100_000);
  await tickToWire(join(dir, 'wire.db'), 2_000);
  await tickToWire(':memory:', 2_000);
  await fillCycle(join(dir, 'fills.db'), 1_000);
  await fillCycle(':memory:', 1_000);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
