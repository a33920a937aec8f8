/**
 * Webhook delivery after a 10-minute receiver outage, on the daemon's own settings (notificationsFromEnv with
 * the defaults: NOTIFY_RETRY_FOR_MS one hour, backoff 1 s doubling to 30 s, one notification per message,
 * 10 messages a second, NOTIFY_QUEUE_SIZE 200), on an injected clock: during the outage time jumps to the
 * notifier's next wake-up whenever it waits, so ten minutes take a few seconds; from the receiver's return
 * on, the clock runs in real time, so the delivery figures are wall-clock ones. A real webhook receiver on
 * loopback answers 503 for the first ten minutes, then 204. During the outage the store records one event
 * every 5 s (120 in all: within the queue's bound). Prints how many arrived, whether in order and each once,
 * and how long after the receiver's return the first and the last arrived. Not part of the test run.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from '../src/app/env.js';
import { notificationsFromEnv } from '../src/notify/setup.js';
import { wallClock } from '../src/clocks/wall-clock.js';
import type { Timers } from '../src/ports/clock.js';
import { silentLogger } from '../src/ops/logger.js';
import { openStore } from '../src/store/store.js';

const OUTAGE_MS = 10 * 60_000;
const EVENT_EVERY_MS = 5_000;

/**
 * A clock that jumps to the earliest pending wake-up when asked (`step`), up to `realFrom`; from then on it
 * runs in real time (what was still asleep wakes after the rest of its wait, for real).
 */
class SteppedTimers implements Timers {
  private sleepers: { until: number; resolve: () => void }[] = [];
  private real: { virtual: number; wall: number } | undefined;
  constructor(
    private time: number,
    private readonly realFrom: number,
  ) {}
  now(): number {
    return this.real === undefined ? this.time : this.real.virtual + (performance.now() - this.real.wall);
  }
  get isReal(): boolean {
    return this.real !== undefined;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    if (this.real !== undefined) return wallClock.sleep(ms, signal);
    return new Promise((resolve) => {
      const abort = () => {
        this.sleepers = this.sleepers.filter((s) => s !== entry);
        resolve();
      };
      const entry = {
        until: this.time + Math.max(0, ms),
        resolve: () => {
          signal?.removeEventListener('abort', abort);
          resolve();
        },
      };
      this.sleepers.push(entry);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
  /** Wakes the earliest sleepers, moving the clock to their time; at `realFrom`, switches to real time. */
  step(): void {
    if (this.real !== undefined || this.sleepers.length === 0) return;
    const next = Math.min(...this.sleepers.map((s) => s.until));
    this.time = Math.max(this.time, Math.min(next, this.realFrom));
    const due = this.sleepers.filter((s) => s.until <= this.time);
    this.sleepers = this.sleepers.filter((s) => s.until > this.time);
    for (const s of due) s.resolve();
    if (this.time < this.realFrom) return;
    this.real = { virtual: this.time, wall: performance.now() };
    for (const s of this.sleepers.splice(0)) setTimeout(s.resolve, s.until - this.time);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-notify-outage-'));
const t0 = Date.UTC(2024, 0, 1);
const back = t0 + OUTAGE_MS;
const timers = new SteppedTimers(t0, back);
const arrivals: { seq: number; key: string; at: number }[] = [];
let refused = 0;
let inFlight = 0;
const server = createServer((req, res) => {
  inFlight++;
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    inFlight--;
    if (timers.now() < back) {
      refused++;
      res.writeHead(503).end();
      return;
    }
    const json = JSON.parse(body) as { id: string; notifications: { data: { seq?: number } }[] };
    for (const n of json.notifications)
      if (typeof n.data.seq === 'number') arrivals.push({ seq: n.data.seq, key: json.id, at: timers.now() });
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

const store = openStore({ path: join(dir, 'bench.db'), clock: { now: () => timers.now() } });
store.events.record(t0, undefined, 'daemon-started', { mode: 'paper', venue: 'bench', pid: process.pid });
const env = parseEnv({
  NOTIFY_WEBHOOK_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
  NOTIFY_WEBHOOK_SECRET: 'bench',
  NOTIFY_DAILY_SUMMARY: 'off',
});
const notifications = notificationsFromEnv(env, { store, logger: silentLogger, mode: 'paper', timers });
if (notifications === undefined) throw new Error('no webhook channel');

const total = OUTAGE_MS / EVENT_EVERY_MS;
let recorded = 0;
let nextEventAt = t0;
const wall = performance.now();
let lastShown = 0;
while (arrivals.length < total) {
  while (recorded < total && timers.now() >= nextEventAt) {
    store.events.record(timers.now(), 'bench', 'paused', { reason: 'bench', seq: recorded++ });
    nextEventAt += EVENT_EVERY_MS;
  }
  // Let real I/O (the POST and its answer) finish before the clock jumps.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, inFlight > 0 || timers.isReal ? 5 : 1));
  if (inFlight === 0) timers.step();
  const minute = Math.floor((timers.now() - t0) / 60_000);
  if (minute > lastShown) {
    lastShown = minute;
    process.stderr.write(
      `\r  simulated ${minute} min: ${recorded} recorded, ${refused} POSTs refused, ${arrivals.length} delivered`,
    );
  }
  if (timers.now() > back + 60 * 60_000) break;
}
process.stderr.write('\n');
await notifications.stop(1000);
server.close();
store.close();
rmSync(dir, { recursive: true, force: true });

const seqs = arrivals.map((a) => a.seq);
const inOrder = seqs.every((s, i) => i === 0 || s > (seqs[i - 1] as number));
const once = new Set(arrivals.map((a) => a.key)).size === arrivals.length;
const first = arrivals[0];
const last = arrivals.at(-1);
console.log(
  `webhook after a ${OUTAGE_MS / 60_000}-minute receiver outage (one event every ${EVENT_EVERY_MS / 1000} s meanwhile, ` +
    `the daemon's defaults): ${arrivals.length}/${total} delivered, ${inOrder ? 'in order' : 'OUT OF ORDER'}, ` +
    `${once ? 'each once' : 'WITH REPEATS'}; ${refused} POSTs refused during the outage; first delivered ` +
    `${first === undefined ? '-' : ((first.at - back) / 1000).toFixed(1)} s and last ` +
    `${last === undefined ? '-' : ((last.at - back) / 1000).toFixed(1)} s after the receiver came back ` +
    `(injected clock; ${((performance.now() - wall) / 1000).toFixed(1)} s of wall time)`,
);
