/**
 * One channel's queue against a local webhook receiver, on virtual time: bursts grouped into one message,
 * the rate limit between messages, retries with backoff and the receiver's Retry-After, drops after the
 * bound (logged once per outage, recorded each), a full queue dropping its oldest, and a bounded stop.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChannelOptions, ChannelQueue, type Outcome } from '../../src/notify/channel-queue.js';
import type { Notice } from '../../src/notify/event-kinds.js';
import type { OutgoingMessage } from '../../src/notify/message.js';
import type { Timers } from '../../src/ports/clock.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import type { Transport } from '../../src/notify/transport.js';
import { WebhookTransport } from '../../src/notify/webhook.js';
import { captureLogger, Receiver, VirtualTimers } from './stand-ins.js';

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
  maxAttempts: 4,
  backoff: { baseMs: 1000, maxMs: 60_000 },
  rate: { requestsPerSecond: 1, burst: 1 },
  ...over,
});

let nextId = 1;
const fill = (qty: string): Notice => ({
  source: 'fill',
  id: nextId++,
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
    const { outcomes, queue, log } = setUp({ maxAttempts: 3, groupMs: 0, maxPerMessage: 1 });
    receiver.status = () => 503;
    for (let i = 0; i < 4; i++) queue.push(fill(String(i)));
    await settled(outcomes, 4);
    expect(outcomes.every((o) => !o.sent && o.attempts === 3 && o.reason === 'webhook: HTTP 503')).toBe(true);
    expect(receiver.answers).toHaveLength(12);
    expect(log.messages(/dropping notifications/)).toHaveLength(1);
    receiver.status = () => 204;
    queue.push(fill('9'));
    await settled(outcomes, 5);
    expect(outcomes[4]).toMatchObject({ sent: true });
    expect(log.messages(/delivering notifications again \(4 dropped meanwhile\)/)).toHaveLength(1);
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
    const paused: Notice = { source: 'event', id: 1, kind: 'paused', instance: 'a', time: 0, data: { reason: 'x' } };
    expect(queue.accepts(paused)).toBe(true);
    expect(queue.accepts({ ...paused, kind: 'engine-error' })).toBe(false);
    return queue.stop(10);
  });

  it('at stop sends what is queued without the group wait, and drops what the deadline leaves', async () => {
    // Real time here: the deadline is the wall clock's.
    const { outcomes, queue } = setUp({ groupMs: 3_600_000 }, wallClock);
    queue.push(fill('1'));
    await queue.stop(10_000);
    expect(outcomes).toMatchObject([{ sent: true }]);

    const second = setUp({ groupMs: 3_600_000, backoff: { baseMs: 3_600_000, maxMs: 3_600_000 } }, wallClock);
    receiver.status = () => 503;
    second.queue.push(fill('2'));
    await second.queue.stop(200);
    expect(second.outcomes).toHaveLength(1);
    expect(second.outcomes[0]?.sent).toBe(false);
  });
});
