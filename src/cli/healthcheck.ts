/**
 * `bot healthcheck`: asks the daemon running next to it whether it is ready (GET /readyz of its control API on
 * API_HOST:API_PORT, a wildcard host probed on loopback). Exit 0 when ready, 1 otherwise, with one line
 * saying why. It is the image's HEALTHCHECK, so it is quick and bounded, and needs no token.
 */
import { loadEnv } from '../config/env.js';
import { ConfigError } from '../errors.js';
import { parseCommandFlags } from './flags.js';

const HELP = `usage: bot healthcheck [--timeout MS]

Probes http://API_HOST:API_PORT/readyz (default 127.0.0.1:8080; a wildcard host such as 0.0.0.0 is probed on
127.0.0.1). Exit 0 when the daemon answers ready, 1 otherwise.

  --timeout MS  give up after this long (default 3000)`;

/** The URL the probe asks: wildcard listeners are reached on loopback. */
export function readyzUrl(host: string, port: number): string {
  const probed = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${probed.includes(':') ? `[${probed}]` : probed}:${port}/readyz`;
}

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags('healthcheck', argv, { timeout: { type: 'string' } }, HELP);
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
  if (env.API_PORT === 0) {
    console.error(
      'healthcheck: API_PORT=0 turns the listener off, so there is nothing to probe: the health check needs it on',
    );
    return 1;
  }
  const url = readyzUrl(env.API_HOST, env.API_PORT);
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await response.text()).slice(0, 200).replace(/\s+/g, ' ');
    if (response.ok) {
      console.log(`healthcheck: ready (${url}: ${response.status})`);
      return 0;
    }
    console.error(`healthcheck: not ready (${url}: HTTP ${response.status} ${body})`);
    return 1;
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why =
      err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${timeoutMs} ms`
        : (cause?.code ?? cause?.message ?? String(err));
    console.error(`healthcheck: not ready (${url}: ${why})`);
    return 1;
  }
}
