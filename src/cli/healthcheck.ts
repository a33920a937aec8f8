/**
 * `bot healthcheck`: asks the daemon running next to it whether it is alive (GET /healthz: the process and its
 * loops answer, whatever the exchange does) or, with --ready, ready (GET /readyz). It probes the metrics
 * listener (METRICS_HOST:METRICS_PORT) when there is one, else the control API's (API_HOST:API_PORT); a
 * wildcard host is probed on loopback. Exit 0 when the answer is 200, 1 otherwise, with one line saying why.
 * It is the image's HEALTHCHECK, so it is quick and bounded, and needs no token.
 */
import { get } from 'node:http';
import { loadEnv } from '../app/env.js';
import { ConfigError } from '../errors.js';
import { commandSpec, parseCommandFlags } from './flags.js';

export const SPEC = commandSpec({
  name: 'healthcheck',
  usage: 'healthcheck [--ready] [--timeout MS]',
  about: `Probes the running daemon's liveness, http://HOST:PORT/healthz: the metrics listener (METRICS_HOST,
METRICS_PORT) when METRICS_PORT is set, else the control API's (API_HOST, API_PORT; default 127.0.0.1:8080).
A wildcard host such as 0.0.0.0 is probed on 127.0.0.1. Exit 0 when it answers 200, 1 otherwise.`,
  flags: {
    ready: { type: 'boolean', doc: 'probe /readyz instead: the daemon does its job, the exchange included' },
    timeout: { type: 'string', arg: 'MS', doc: 'give up after this long (default 3000)' },
  },
});

/** A listener's address as a client on this machine reaches it: a wildcard host on loopback. */
export function listenerUrl(host: string, port: number): string {
  const reached = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}

/**
 * GET `url` with node:http, its status and the start of its body. Not fetch: the first fetch of a process loads
 * Node's own undici and HTTP/2 (a probe took 0.34 CPU s and 95 MiB with it, 0.19 and 61 without; every 30 s in
 * the image). No keep-alive (`Connection: close`), so the socket never holds the process after the answer.
 */
function probe(url: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, signal: AbortSignal.timeout(timeoutMs) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (body.length < 200) body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

/** The URL the probe asks. */
export function probeUrl(host: string, port: number, path: '/healthz' | '/readyz'): string {
  return `${listenerUrl(host, port)}${path}`;
}

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const timeoutMs = Number(flags.values.timeout ?? '3000');
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    console.error(`healthcheck: --timeout must be a positive integer (ms), got '${flags.values.timeout}'`);
    return 2;
  }
  let env;
  try {
    env = loadEnv();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    console.error(`healthcheck: not healthy: the environment is invalid (${err.problems.join('; ')})`);
    return 1;
  }
  if (env.API_PORT === 0 && env.METRICS_PORT === 0) {
    console.error(
      'healthcheck: API_PORT=0 and no METRICS_PORT: no listener is on, so there is nothing to probe (set either)',
    );
    return 1;
  }
  const ready = flags.values.ready === true;
  const [host, port] = env.METRICS_PORT !== 0 ? [env.METRICS_HOST, env.METRICS_PORT] : [env.API_HOST, env.API_PORT];
  const url = probeUrl(host, port, ready ? '/readyz' : '/healthz');
  const [good, bad] = ready ? ['ready', 'not ready'] : ['alive', 'not alive'];
  try {
    const response = await probe(url, timeoutMs);
    if (response.status >= 200 && response.status < 300) {
      console.log(`healthcheck: ${good} (${url}: ${response.status})`);
      return 0;
    }
    const body = response.body.slice(0, 200).replace(/\s+/g, ' ');
    console.error(`healthcheck: ${bad} (${url}: HTTP ${response.status} ${body})`);
    return 1;
  } catch (err) {
    const failure = err as { name?: string; code?: string; message?: string };
    const why =
      failure.name === 'AbortError'
        ? `no answer within ${timeoutMs} ms`
        : (failure.code ?? failure.message ?? String(err));
    console.error(`healthcheck: ${bad} (${url}: ${why})`);
    return 1;
  }
}
