/**
 * One channel's queue against a local webhook receiver, on virtual time: bursts grouped into one message,
 * the rate limit between messages, retries with backoff and the receiver's Retry-After, a receiver down for
 * ten minutes that still gets every message in order, drops after the retry window (logged once per outage,
 * recorded each), a full queue dropping its oldest, and a bounded stop that leaves what is unsent unrecorded.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChannelOptions, ChannelQueue, type Outcome } from '../../src/notify/channel-queue.js';
import type { Notice } from '../../src/notify/event-kinds.js';
import type { OutgoingMessage } from '../../src/notify/message.js';
import type { Timers } from '../../src/ports/clock.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import type { Transport } from '../../src/notify/transport.js';
import { WebhookTransport } from '../../src/notify/webhook.js';
import { ManualTimers, Receiver, VirtualTimers } from './stand-ins.js';
import { captureLogger } from '../support/capture-logger.js';

let receiver: Receiver;
beforeEach(async () => {
  receiver = await Receiver.start();
});
afterEach(() => receiver.close());

const options = (over: Partial<ChannelOptions> = {}): ChannelOptions => ({
  kinds: 'all',
  minLevel: 'info',
  groupMs: 3000,
  capacity: 100,
  maxPerMessage: 50,
  retryForMs: 10_000,
  backoff: { baseMs: 1000, maxMs: 60_000 },
  rate: { requestsPerSecond: 1, burst: 1 },
  ...over,
});

let nextId = 1;
const fill = (qty: string): Notice => ({
  source: 'fill',
  id: nextId,
  key: `test-f${nextId++}`,
  kind: 'fill',
  instance: 'grid',
  time: 0,
  data: { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', qty, price: '20000' },
});

function setUp(over: Partial<ChannelOptions> = {}, timers: Timers = new VirtualTimers()) {
  const log = captureLogger();
  const outcomes: Outcome[] = [];
  const sentAt: number[] = [];
  const webhook = new WebhookTransport({ url: receiver.url, secret: 's3cret-key', timeoutMs: 5000, redact: (t) => t });
  const transport: Transport = {
    name: webhook.name,
    maxLength: webhook.maxLength,
    send: (m: OutgoingMessage, signal: AbortSignal) => {
      sentAt.push(timers.now());
      return webhook.send(m, signal);
    },
  };
  const queue = new ChannelQueue(transport, options(over), {
    mode: 'paper',
    timers,
    logger: log.logger,
    redact: (t) => t,
    record: (o) => outcomes.push(o),
  });
  queue.start();
  return { timers, log, outcomes, sentAt, queue };
}

const settled = async (outcomes: Outcome[], n: number) => {
  const deadline = Date.now() + 10_000;
  while (outcomes.length < n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} outcomes, got ${outcomes.length}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

const texts = () => receiver.received.map((r) => (r.json as { text: string }).text);

describe('a channel queue', () => {
  it('groups a burst into one message, and what comes after into the next', async () => {
    const { outcomes, queue } = setUp();
    for (let i = 1; i <= 20; i++) queue.push(fill(`0.00${i}`));
    await settled(outcomes, 1);
    queue.push(fill('1'));
    await settled(outcomes, 2);
    await queue.stop(1000);
    expect(outcomes.map((o) => (o.sent ? o.message.notices.length : -1))).toEqual([20, 1]);
    expect(texts()[0]).toMatch(/^PAPER · 20 fills\ngrid BTCUSDT BUY LIMIT 0\.001 @ 20000\n/);
    expect(texts()[0]).toContain('… and 5 more');
    expect(texts()[1]).toBe('PAPER · grid BTCUSDT BUY LIMIT 1 @ 20000');
  });

  it('sends no faster than its rate limit', async () => {
    const { outcomes, queue, sentAt } = setUp({ maxPerMessage: 1, groupMs: 0 });
    for (let i = 0; i < 6; i++) queue.push(fill(String(i + 1)));
    await settled(outcomes, 6);
    await queue.stop(1000);
    expect(outcomes.every((o) => o.sent)).toBe(true);
    const gaps = sentAt.slice(1).map((t, i) => t - (sentAt[i] as number));
    expect(gaps).toHaveLength(5);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(1000);
    // In order.
    expect(texts().map((t) => /LIMIT (\d+) @/.exec(t)?.[1])).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('retries a failing receiver with backoff (a 429 without Retry-After too) and delivers once it answers', async () => {
    const timers = new VirtualTimers();
    const { outcomes, queue } = setUp({}, timers);
    receiver.status = (n) => [503, 503, 429][n] ?? 204;
    const before = timers.slept.length;
    queue.push(fill('1'));
    await settled(outcomes, 1);
    await queue.stop(1000);
    expect(receiver.answers).toEqual([503, 503, 429, 204]);
    expect(outcomes[0]).toMatchObject({ sent: true, attempts: 4 });
    // The group wait, then backoff 1 s and 2 s; the 429 had no Retry-After: backoff 4 s.
    expect(timers.slept.slice(before)).toEqual(expect.arrayContaining([1000, 2000, 4000]));
  });

  it('drops a message after the bound, logs the outage once and records every drop', async () => {
    // Tries at 0, 1 s and 3 s; the next would be at 7 s, past the window.
    const { outcomes, queue, log } = setUp({ retryForMs: 3000, groupMs: 0, maxPerMessage: 1 });
    receiver.status = () => 503;
    for (let i = 0; i < 4; i++) queue.push(fill(String(i)));
    await settled(outcomes, 4);
    expect(outcomes.every((o) => !o.sent && o.attempts === 3 && o.reason === 'webhook: HTTP 503')).toBe(true);
    expect(receiver.answers).toHaveLength(12);
    expect(log.messages(/dropping notifications/)).toHaveLength(1);
    expect(log.messages(/delivery failing/)).toHaveLength(1);
    receiver.status = () => 204;
    queue.push(fill('9'));
    await settled(outcomes, 5);
    expect(outcomes[4]).toMatchObject({ sent: true });
    expect(log.messages(/delivering notifications again after \d+ s \(4 dropped meanwhile\)/)).toHaveLength(1);
    await queue.stop(1000);
  });

  it('gives up at once on a 4xx that a retry cannot heal', async () => {
    const { outcomes, queue } = setUp();
    receiver.status = () => 404;
    queue.push(fill('1'));
    await settled(outcomes, 1);
    await queue.stop(1000);
    expect(outcomes[0]).toMatchObject({ sent: false, attempts: 1, reason: 'webhook: HTTP 404' });
  });

  it('keeps at most its capacity, dropping the oldest', async () => {
    const { outcomes, queue } = setUp({ capacity: 3 });
    for (let i = 1; i <= 5; i++) queue.push(fill(String(i)));
    expect(queue.waiting).toBe(3);
    await settled(outcomes, 3);
    await queue.stop(1000);
    const qty = (o: Outcome | undefined) => (o?.sent ? o.message.notices : (o?.notices ?? [])).map((n) => n.data.qty);
    expect(outcomes.map((o) => o.sent)).toEqual([false, false, true]);
    expect(outcomes[0]).toMatchObject({ reason: 'queue full (3 notifications waiting)' });
    expect(outcomes.map(qty)).toEqual([['1'], ['2'], ['3', '4', '5']]);
  });

  it('filters by kind and minimum level', () => {
    const { queue } = setUp({ kinds: new Set(['fill', 'paused']), minLevel: 'warn' });
    expect(queue.accepts(fill('1'))).toBe(false);
    const paused: Notice = {
      source: 'event',
      id: 1,
      key: 'test-e1',
      kind: 'paused',
      instance: 'a',
      time: 0,
      data: { reason: 'x' },
    };
    expect(queue.accepts(paused)).toBe(true);
    expect(queue.accepts({ ...paused, kind: 'engine-error' })).toBe(false);
    return queue.stop(10);
  });

  it('keeps retrying a receiver that is down for ten minutes, then delivers every message in order', async () => {
    const timers = new VirtualTimers();
    const back = timers.now() + 10 * 60_000;
    const { outcomes, queue, log, sentAt } = setUp(
      { retryForMs: 3_600_000, groupMs: 0, maxPerMessage: 1, backoff: { baseMs: 1000, maxMs: 30_000 } },
      timers,
    );
    receiver.status = () => (timers.now() < back ? 503 : 204);
    for (let i = 1; i <= 5; i++) queue.push(fill(String(i)));
    await settled(outcomes, 5);
    await queue.stop(1000);
    expect(outcomes.every((o) => o.sent)).toBe(true);
    expect(texts().map((t) => /LIMIT (\d+) @/.exec(t)?.[1])).toEqual(['1', '2', '3', '4', '5']);
    expect(receiver.received.map((r) => r.headers['idempotency-key'])).toEqual(
      outcomes.map((o) => (o.sent ? o.message.notices[0]?.key : undefined)),
    );
    // A growing backoff, never more than its cap apart: the first message arrives within 30 s of the return.
    const firstDelivered = sentAt[receiver.answers.indexOf(204)] as number;
    expect(firstDelivered).toBeGreaterThanOrEqual(back);
    expect(firstDelivered - back).toBeLessThanOrEqual(30_000);
    expect(Math.max(...timers.slept)).toBe(30_000);
    expect(log.messages(/delivery failing/)).toHaveLength(1);
    expect(log.messages(/dropping/)).toEqual([]);
    expect(log.messages(/delivering notifications again after \d+ s \(0 dropped meanwhile\)/)).toHaveLength(1);
  });

  it('stops at its deadline while a message waits for the rate limit, without sleeping again and again', async () => {
    // A frozen clock: only the test moves it. Before, the limiter took the sleep the deadline cut short for time
    // passed and slept again at once, in a loop of microtasks that never ended (here cut at 1000 sleeps).
    const manual = new ManualTimers();
    let sleeps = 0;
    let limiterWaits!: () => void;
    const waiting = new Promise<void>((resolve) => (limiterWaits = resolve));
    const timers: Timers = {
      now: () => manual.now(),
      sleep: (ms, signal) => {
        if (++sleeps > 1000) return Promise.reject(new Error('still sleeping after 1000 sleeps'));
        if (ms === 1000) limiterWaits();
        return manual.sleep(ms, signal);
      },
    };
    const { outcomes, queue, log } = setUp({ groupMs: 0, maxPerMessage: 1 }, timers);
    queue.push(fill('1'));
    await settled(outcomes, 1);
    queue.push(fill('2'));
    await waiting; // the second message waits a second for the next token
    const stopped = queue.stop(10);
    manual.advance(10);
    await stopped;
    expect(sleeps).toBeLessThan(5);
    expect(outcomes).toHaveLength(1);
    expect(log.messages(/notification queue failed/)).toEqual([]);
    expect(log.messages(/1 notification\(s\) not sent before the stop; the next start sends them/)).toHaveLength(1);
  });

  it('at stop sends what is queued without the group wait, and leaves unrecorded what the deadline cuts off', async () => {
    // Real time here: the deadline is the wall clock's.
    const { outcomes, queue } = setUp({ groupMs: 3_600_000 }, wallClock);
    queue.push(fill('1'));
    await queue.stop(10_000);
    expect(outcomes).toMatchObject([{ sent: true }]);

    const second = setUp(
      { groupMs: 3_600_000, retryForMs: 7_200_000, backoff: { baseMs: 3_600_000, maxMs: 3_600_000 } },
      wallClock,
    );
    receiver.status = () => 503;
    second.queue.push(fill('2'));
    await second.queue.stop(200);
    // Not sent and not recorded as dropped: the next start reads it again and sends it.
    expect(second.outcomes).toEqual([]);
    expect(second.log.messages(/1 notification\(s\) not sent before the stop; the next start sends them/)).toHaveLength(
      1,
    );
  });
});
