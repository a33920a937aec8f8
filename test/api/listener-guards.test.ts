/**
 * The listener's guards, over a real socket: /metrics and /readyz refuse a rebound Host with or without API_TOKEN,
 * asset names that are Object.prototype members are plain 404s, the operator's right token is served even
 * from an address locked out for guessing, and a flood of requests nobody authenticated (from 200 loopback
 * addresses, so per-address limits alone would not bound it) writes a bounded number of log lines.
 */
import { request } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_STREAMS } from '../../src/api/live-stream.js';
import { createMetrics } from '../../src/api/daemon-metrics.js';
import { ProbeState, startMetricsListener } from '../../src/api/probes.js';
import type { OperatorActions } from '../../src/operator/actions.js';
import { storeQueries } from '../support/store-queries.js';
import { type ApiServer, startApiServer } from '../../src/api/api-server.js';
import { openStore, type Store } from '../../src/store/store.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { captureLogger } from '../support/capture-logger.js';
import { tempDir } from '../support/temp-dir.js';

interface Answer {
  status: number;
  body: string;
}

/** One GET with exactly these headers, from `from` (any 127.x.y.z address is this machine's). */
function get(url: string, path: string, headers: Record<string, string> = {}, from = '127.0.0.1'): Promise<Answer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, headers, localAddress: from, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let dir: string;
let store: Store;
let server: ApiServer | undefined;

async function listener(token: string | undefined, options: { failingMetrics?: boolean } = {}) {
  dir = tempDir('listener-guards');
  store = openStore({ path: join(dir, 'bot.db'), clock: { now: () => Date.now() } });
  const log = captureLogger();
  const metrics = createMetrics();
  if (options.failingMetrics === true)
    metrics.render = () => Promise.reject(new Error('the metrics registry failed (injected)'));
  server = await startApiServer({
    host: '127.0.0.1',
    port: 0,
    operator: {
      read: storeQueries(store, dir),
      // Nothing here acts: the guards are under test, not the actions.
      act: {} as OperatorActions,
      build: { version: '0.0.0', revision: undefined },
    },
    now: () => Date.now(),
    wall: wallClock,
    logger: log.logger,
    token,
    metrics,
    metricsBalances: true,
  });
  return { url: server.url, log };
}

afterEach(async () => {
  await server?.close();
  server = undefined;
  store.close();
});

const TOKEN = 'listener-guards-token-8c1f';

describe('the listener', () => {
  it('without API_TOKEN answers /metrics and /readyz for a loopback Host only (DNS rebinding)', async () => {
    const { url } = await listener(undefined);
    const port = new URL(url).port;
    for (const path of ['/metrics', '/readyz']) {
      const rebound = await get(url, path, { host: `attacker.example:${port}` });
      expect(rebound.status, path).toBe(403);
      expect(rebound.body).toContain('E_FORBIDDEN');
      expect(rebound.body).not.toContain('spot_bot');
      const crossOrigin = await get(url, path, { host: `127.0.0.1:${port}`, origin: 'http://attacker.example' });
      expect(crossOrigin.status, path).toBe(403);
      expect((await get(url, path, { host: `localhost:${port}` })).status, path).not.toBe(403);
    }
    expect((await get(url, '/metrics', { host: `127.0.0.1:${port}` })).body).toContain('process_cpu_seconds_total');
    // The health probe says nothing about the account: still open.
    expect((await get(url, '/healthz', { host: 'attacker.example' })).status).toBe(200);
  });

  it('on a loopback METRICS_HOST answers /metrics and /readyz for a loopback Host only', async () => {
    const { log } = await listener(TOKEN);
    const metricsListener = await startMetricsListener(
      '127.0.0.1',
      0,
      new ProbeState(Date.now),
      createMetrics(),
      log.logger,
    );
    try {
      const port = new URL(metricsListener.url).port;
      for (const path of ['/metrics', '/readyz']) {
        const rebound = await get(metricsListener.url, path, { host: `attacker.example:${port}` });
        expect(rebound.status, path).toBe(403);
        expect(rebound.body).toContain('E_FORBIDDEN');
        expect((await get(metricsListener.url, path, { host: `127.0.0.1:${port}` })).status, path).not.toBe(403);
      }
      expect((await get(metricsListener.url, '/healthz', { host: 'attacker.example' })).status).toBe(200);
    } finally {
      await metricsListener.close();
    }
  });

  it('with API_TOKEN answers /metrics and /readyz for a Host by address or with the token, not a rebound name', async () => {
    const { url } = await listener(TOKEN);
    const port = new URL(url).port;
    for (const path of ['/metrics', '/readyz']) {
      // A page on a DNS name rebound to the bot's address (what answered any Host before).
      const rebound = await get(url, path, { host: `attacker.example:${port}` });
      expect(rebound.status, path).toBe(403);
      expect(rebound.body).toContain('E_FORBIDDEN');
      expect(rebound.body).not.toContain('spot_bot');
      const crossOrigin = await get(url, path, { host: `10.1.2.3:${port}`, origin: 'http://attacker.example' });
      expect(crossOrigin.status, path).toBe(403);
      expect((await get(url, path, { host: `bot.lan:${port}`, authorization: 'Bearer wrong' })).status, path).toBe(403);
      // A scraper or kubelet by address, a local client, or anyone with the token.
      for (const host of [`10.1.2.3:${port}`, `[fd00::5]:${port}`, `localhost:${port}`])
        expect((await get(url, path, { host })).status, `${path} ${host}`).not.toBe(403);
      const named = await get(url, path, { host: `bot.lan:${port}`, authorization: `Bearer ${TOKEN}` });
      expect(named.status, path).not.toBe(403);
    }
    expect((await get(url, '/metrics', { host: `10.1.2.3:${port}` })).body).toContain('process_cpu_seconds_total');
    expect((await get(url, '/healthz', { host: 'attacker.example' })).status).toBe(200);
  });

  it('answers asset names that are Object.prototype members with a 404, logging nothing', async () => {
    const { url, log } = await listener(TOKEN);
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      const answer = await get(url, `/assets/${name}`);
      expect(answer.status, name).toBe(404);
      expect(answer.body).toContain('E_NOT_FOUND');
      expect(answer.body).not.toMatch(/at .*\.ts:\d+/);
    }
    expect((await get(url, '/assets/dashboard.css')).status).toBe(200);
    expect(log.lines.filter((l) => /"level":(40|50)/.test(l))).toEqual([]);
  });

  it('locks out guessing from an address after ten failures, never the right token from it', async () => {
    const { url, log } = await listener(TOKEN);
    const wrong = { authorization: 'Bearer not-the-token' };
    const right = { authorization: `Bearer ${TOKEN}` };
    for (let i = 0; i < 10; i++) expect((await get(url, '/api/v1/status', wrong)).status).toBe(401);
    const locked = await get(url, '/api/v1/status', wrong);
    expect(locked.status).toBe(429);
    expect(locked.body).toContain('E_TOO_MANY_FAILURES');
    expect((await get(url, '/api/v1/status')).status).toBe(429);
    // The operator, from the same address, in the same minute.
    expect((await get(url, '/api/v1/status', right)).status).toBe(200);
    expect((await get(url, '/api/v1/daemon', right)).status).toBe(200);
    expect((await get(url, '/api/v1/status', wrong)).status).toBe(429);
    expect(log.messages(/authentication failed from 127\.0\.0\.1/)).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain(TOKEN);
  });

  it('without API_TOKEN a locked-out address still gets its local requests served', async () => {
    const { url } = await listener(undefined);
    const port = new URL(url).port;
    for (let i = 0; i < 12; i++) await get(url, '/api/v1/status', { host: `rebound.example:${port}` });
    expect((await get(url, '/api/v1/status', { host: `rebound.example:${port}` })).status).toBe(429);
    expect((await get(url, '/api/v1/status', { host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('writes a bounded number of log lines for a flood of requests nobody authenticated', async () => {
    const { url, log } = await listener(TOKEN, { failingMetrics: true });
    const paths = ['/api/v1/status', '/metrics', '/assets/constructor', '/assets/__proto__', '/nowhere', '/readyz'];
    let sent = 0;
    // 200 source addresses × 6 kinds of request, 6 rounds: 7,200 requests in well under a minute.
    for (let round = 0; round < 6; round++)
      for (let a = 0; a < 200; a += 20) {
        await Promise.all(
          Array.from({ length: 20 }, (_, k) =>
            Promise.all(
              paths.map((p) =>
                get(url, p, { authorization: 'Bearer guess' }, `127.0.${round + 1}.${a + k + 1}`).then(() => sent++),
              ),
            ),
          ),
        );
      }
    expect(sent).toBe(7200);
    const warnOrWorse = log.lines.filter((l) => /"level":(40|50|60)/.test(l));
    // The budget: 20 lines a minute (plus the count of what was left out, once the minute is over).
    expect(warnOrWorse.length).toBeGreaterThan(0);
    expect(warnOrWorse.length).toBeLessThanOrEqual(21);
    expect(log.lines.length).toBeLessThanOrEqual(25);
  });
});

describe('the live stream (/api/v1/stream)', () => {
  /** Opens a stream: its first event, what follows until it ends, and a way to close it. */
  async function openStream(url: string, token: string | undefined) {
    const stop = new AbortController();
    const res = await fetch(`${url}/api/v1/stream`, {
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      signal: stop.signal,
    });
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    const decoder = new TextDecoder();
    let text = '';
    /** Reads until `until` holds of what was read, or the stream ends. */
    const readUntil = async (until: () => boolean) => {
      reader ??= (res.body as ReadableStream<Uint8Array>).getReader();
      while (!until()) {
        const { value, done } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    };
    const first = async () => {
      await readUntil(() => text.includes('\n\n'));
      const end = text.indexOf('\n\n');
      const event = text.slice(0, end);
      text = text.slice(end + 2);
      return event;
    };
    const rest = async () => {
      await readUntil(() => false);
      return text;
    };
    return { res, first, rest, close: () => stop.abort() };
  }

  it('needs the token, starts with the status /status serves, and holds at most MAX_STREAMS at once', async () => {
    const { url } = await listener(TOKEN);
    const refused = await openStream(url, 'not-the-token');
    expect(refused.res.status).toBe(401);
    const streams = [];
    try {
      for (let i = 0; i < MAX_STREAMS; i++) {
        const s = await openStream(url, TOKEN);
        streams.push(s);
        expect(s.res.status).toBe(200);
        expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      }
      const event = await (streams[0] as { first: () => Promise<string> }).first();
      const status = await get(url, '/api/v1/status', { authorization: `Bearer ${TOKEN}` });
      expect(event.startsWith('event: status\ndata: ')).toBe(true);
      // The same read model, its times aside: the status is read again after a second (STATUS_CACHE_MS), and a
      // loaded machine can take that long between the stream's first event and this GET.
      const timeless = (json: string) => {
        const view = JSON.parse(json) as { clock: { venueClock: unknown } };
        return { ...view, time: null, clock: { venueClock: view.clock.venueClock } };
      };
      expect(timeless(event.slice('event: status\ndata: '.length))).toEqual(timeless(status.body));
      const extra = await openStream(url, TOKEN);
      expect(extra.res.status).toBe(503);
      expect(await extra.res.text()).toContain('E_TOO_MANY_STREAMS');
      // A stream whose client went frees its place.
      (streams.pop() as { close: () => void }).close();
      await expect
        .poll(async () => {
          const again = await openStream(url, TOKEN);
          if (again.res.status === 200) streams.push(again);
          return again.res.status;
        })
        .toBe(200);
    } finally {
      for (const s of streams) s.close();
    }
    // The listener closes with streams open (closed by it), as the daemon stops.
    await server?.close();
    server = undefined;
  });

  it('ends a stream whose reads fail, saying why in the log', async () => {
    const { url, log } = await listener(TOKEN);
    const stream = await openStream(url, TOKEN);
    expect(await stream.first()).toMatch(/^event: status\n/);
    // The journal gone under it: the next look fails, and the stream ends (the page then polls).
    store.close();
    const rest = await stream.rest();
    expect(rest).not.toContain('event: status');
    expect(log.lines.some((l) => l.includes('a live stream failed and was closed'))).toBe(true);
  });
});
