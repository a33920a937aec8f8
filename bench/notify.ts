/**
 * The notifier, measured. Prints its figures; not part of the test run.
 *
 * 1. What one poll costs the event loop (the only work the notifier does on the daemon's thread besides
 *    sending): reading a full page (100 events and 100 fills) from a file database that already holds
 *    100,000 events and 20,000 fills, turning them into notices and queueing them on three channels.
 *    And the one-off fold of earlier fills into positions at start (before the daemon trades).
 * 2. Event to receiver: from an event recorded to its webhook message arriving at a local receiver
 *    (group window 0, the daemon's poll of once a second), p50/p99 over 200 events 37 ms apart.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from '../src/app/env.js';
import { Notifier } from '../src/notify/notifier.js';
import { notificationsFromEnv } from '../src/notify/setup.js';
import { wallClock } from '../src/clocks/wall-clock.js';
import type { Transport } from '../src/notify/transport.js';
import { silentLogger } from '../src/ops/logger.js';
import { newOrderRow } from '../src/store/order-journal.js';
import { openStore } from '../src/store/store.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-notify-'));
const now = () => Date.now();
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

function fill(store: ReturnType<typeof openStore>, i: number) {
  const localId = `o-${i}`;
  store.orders.insert(
    newOrderRow({
      localId,
      instance: `i${i % 10}`,
      seq: i,
      symbol: 'BTCUSDT',
      side: i % 2 === 0 ? 'BUY' : 'SELL',
      type: 'LIMIT',
      price: '20000',
      quantity: '0.001',
      status: 'FILLED',
      createdAt: i,
      sentAt: i,
    }),
  );
  store.fills.insert({
    fillKey: `t-${i}`,
    orderLocalId: localId,
    instance: `i${i % 10}`,
    symbol: 'BTCUSDT',
    side: i % 2 === 0 ? 'BUY' : 'SELL',
    price: String(20000 + (i % 50)),
    qty: '0.001',
    fee: '0.02',
    feeAsset: 'USDT',
    feeIn: 'quote',
    time: now(),
    source: 'trade',
    delivered: true,
    recordedAt: now(),
  });
}

function pollCost(): void {
  const store = openStore({ path: join(dir, 'poll.db'), clock: { now } });
  store.transaction(() => {
    for (let i = 0; i < 100_000; i++) store.events.record(now(), `i${i % 10}`, 'refused', { reason: `r${i % 7}` });
    for (let i = 0; i < 20_000; i++) fill(store, i);
  });
  const never: Transport = { name: 'x', maxLength: 4000, send: () => new Promise(() => undefined) };
  const channels = ['a', 'b', 'c'].map((name) => ({
    transport: { ...never, name },
    options: {
      kinds: 'all' as const,
      minLevel: 'info' as const,
      groupMs: 3_600_000,
      capacity: 100_000,
      maxPerMessage: 50,
      retryForMs: 0,
      backoff: { baseMs: 1, maxMs: 1 },
      rate: { requestsPerSecond: 1, burst: 1 },
    },
  }));
  const notifier = new Notifier({
    store,
    logger: silentLogger,
    mode: 'paper',
    timers: wallClock,
    channels,
    redact: (t) => t,
    pollMs: 1000,
    dailySummaryAt: undefined,
    killSwitchFile: join(dir, 'KILL'),
  });
  const inside = notifier as unknown as {
    read: { event: number; fill: number };
    cursors: Map<unknown, unknown>;
    foldPositions(): void;
  };
  for (const c of notifier.channels) inside.cursors.set(c, { event: 0, fill: 0 });
  inside.read = { event: 0, fill: 10_000 };
  const f0 = performance.now();
  inside.foldPositions();
  const fold = performance.now() - f0;
  const samples: number[] = [];
  for (let round = 0; round < 50; round++) {
    // Each round reads the next full page of both tables.
    inside.read = { event: round * 100, fill: 10_000 + round * 100 };
    const t0 = performance.now();
    notifier.pollOnce();
    samples.push(performance.now() - t0);
  }
  // What trading usually leaves between two polls: a few rows.
  const few: number[] = [];
  for (let round = 0; round < 200; round++) {
    inside.read = { event: 100_000 - 3, fill: 20_000 - 2 };
    const t0 = performance.now();
    notifier.pollOnce();
    few.push(performance.now() - t0);
  }
  few.sort((a, b) => a - b);
  store.close();
  samples.sort((a, b) => a - b);
  console.log(
    `poll of a full page (100 events + 100 fills, 3 channels) on a 100k-event database: ` +
      `p50 ${pct(samples, 50).toFixed(2)} ms, max ${pct(samples, 100).toFixed(2)} ms; positions folded once at ` +
      `start from 10,000 earlier fills of 10 instances: ${fold.toFixed(0)} ms`,
  );
  console.log(
    `poll of 3 new events + 2 new fills: p50 ${pct(few, 50).toFixed(3)} ms, p99 ${pct(few, 99).toFixed(3)} ms`,
  );
}

async function eventToReceiver() {
  const arrived = new Map<string, number>();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const t = performance.now();
      for (const n of (JSON.parse(body) as { notifications: { data: { seq?: string } }[] }).notifications)
        if (n.data.seq !== undefined) arrived.set(n.data.seq, t);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const store = openStore({ path: join(dir, 'latency.db'), clock: { now } });
  store.events.record(now(), undefined, 'daemon-started', { mode: 'paper', venue: 'bench', pid: process.pid });
  const env = parseEnv({
    NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    NOTIFY_WEBHOOK_SECRET: 'bench',
    NOTIFY_GROUP_MS: '0',
    NOTIFY_DAILY_SUMMARY: 'off',
  });
  const n = notificationsFromEnv(env, { store, logger: silentLogger, mode: 'paper' });
  const sentAt = new Map<string, number>();
  for (let i = 0; i < 200; i++) {
    const seq = String(i);
    sentAt.set(seq, performance.now());
    store.events.record(now(), 'bench', 'paused', { reason: 'bench', seq });
    await new Promise((r) => setTimeout(r, 37));
  }
  await new Promise((r) => setTimeout(r, 1500));
  await n?.stop(5000);
  server.close();
  store.close();
  const lat = [...sentAt].filter(([s]) => arrived.has(s)).map(([s, t]) => (arrived.get(s) as number) - t);
  lat.sort((a, b) => a - b);
  console.log(
    `event recorded -> webhook message received (the daemon's settings: a poll a second, webhook 5 messages/s): ${lat.length}/200 delivered, ` +
      `p50 ${pct(lat, 50).toFixed(0)} ms, p99 ${pct(lat, 99).toFixed(0)} ms`,
  );
}

try {
  pollCost();
  await eventToReceiver();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
