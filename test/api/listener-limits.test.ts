/**
 * The listener's bounds against slowloris (issue 36: 2 x 10,500 slow connections filled the daemon's file
 * descriptors), over real sockets: at most maxConnections held, the rest closed at once and told as one line;
 * headers that drip in are cut at the headers timeout, however they drip, and the listener answers again.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { LISTENER_LIMITS, startListener } from '../../src/api/probes.js';
import { captureLogger } from '../support/capture-logger.js';

/** One GET, on a connection of its own. */
function get(url: string, path: string): Promise<{ status: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the listener under slow connections', () => {
  it('holds a bounded number of slow connections, cuts their headers short and says once that it sheds load', async () => {
    // Node's own defaults: unbounded connections, 60 s for headers; the daemon's bounds are tighter.
    expect(LISTENER_LIMITS.maxConnections).toBeLessThanOrEqual(1024);
    expect(LISTENER_LIMITS.headersTimeoutMs).toBeLessThan(60_000);
    const log = captureLogger();
    const app = new Hono().get('/healthz', (c) => c.text('ok'));
    const slow = await startListener('127.0.0.1', 0, app, log.logger, {
      maxConnections: 20,
      headersTimeoutMs: 1_500,
      requestTimeoutMs: 3_000,
    });
    const { port } = new URL(slow.url);
    const sockets: Socket[] = [];
    try {
      // Slowloris: headers that never end, a byte at a time.
      const closed: Promise<void>[] = [];
      for (let i = 0; i < 20; i++) {
        const s = connect(Number(port), '127.0.0.1');
        sockets.push(s);
        s.on('error', () => undefined);
        closed.push(new Promise((resolve) => s.once('close', () => resolve())));
        await new Promise<void>((resolve) => s.once('connect', () => resolve()));
        s.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      }
      const drip = setInterval(() => {
        for (const s of sockets) if (!s.destroyed) s.write('a');
      }, 200);
      // Full: the next ones are closed at once, and said once.
      for (let i = 0; i < 30; i++) await expect(get(slow.url, '/healthz')).rejects.toThrow();
      const told = log.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level >= 40);
      expect(told.map((l) => l.msg)).toEqual([
        `listener 127.0.0.1:${port} (at most 20 connections) failing: shedding load: new connections closed at once`,
      ]);
      // The slow ones are cut when their headers are late, however they drip; then the listener answers again.
      await Promise.all(closed);
      clearInterval(drip);
      expect((await get(slow.url, '/healthz')).status).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
      await slow.close();
    }
  });
});
