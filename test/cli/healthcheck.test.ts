/**
 * `bot healthcheck` against a local HTTP server standing for the daemon's listener: alive on a 200, not alive or
 * not ready (with the answer's status and body) otherwise, the reason when nothing answers or the port is closed;
 * and the probe asks on a connection closed after the answer (no keep-alive socket holding the image's HEALTHCHECK).
 */
import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/healthcheck.js';
import { capture } from '../support/command-output.js';

const servers: Server[] = [];
let saved: NodeJS.ProcessEnv;

beforeEach(() => {
  saved = { ...process.env };
});

afterEach(() => {
  process.env = saved;
  for (const server of servers.splice(0)) server.close();
});

/** A listener on a free port, probed through METRICS_HOST and METRICS_PORT. */
async function listener(handler: RequestListener) {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  process.env.METRICS_HOST = '127.0.0.1';
  process.env.METRICS_PORT = String(port);
  return { server, url: `http://127.0.0.1:${port}` };
}

describe('bot healthcheck', () => {
  it('is alive on a 200 from /healthz, on a connection it does not keep open', async () => {
    const asked: (string | undefined)[] = [];
    const { url } = await listener((req, res) => {
      asked.push(`${req.url} ${req.headers.connection}`);
      res.end('{"status":"ok"}');
    });
    expect(await capture(run, [])).toEqual({ code: 0, out: [`healthcheck: alive (${url}/healthz: 200)`], err: [] });
    expect(asked).toEqual(['/healthz close']);
  });

  it('is not ready on a 503 from /readyz, with the answer', async () => {
    const { url } = await listener((_req, res) => {
      res.statusCode = 503;
      res.end('{"ready":false,\n "checks":[]}');
    });
    expect(await capture(run, ['--ready'])).toEqual({
      code: 1,
      out: [],
      err: [`healthcheck: not ready (${url}/readyz: HTTP 503 {"ready":false, "checks":[]})`],
    });
  });

  it('says why when nothing answers in time or the port is closed', async () => {
    const { server, url } = await listener(() => {
      // Never answers.
    });
    expect(await capture(run, ['--timeout', '200'])).toEqual({
      code: 1,
      out: [],
      err: [`healthcheck: not alive (${url}/healthz: no answer within 200 ms)`],
    });
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
    expect(await capture(run, [])).toEqual({
      code: 1,
      out: [],
      err: [`healthcheck: not alive (${url}/healthz: ECONNREFUSED)`],
    });
  });
});
