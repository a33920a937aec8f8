/**
 * `bot sim` as a real process, with credentials of the test's own (a random secret, so the secrets scan can
 * look for it), and the signed client that reads its side of the books for the audit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ExchangeClient } from '../../src/exchange/client.js';
import { ROOT, waitFor } from '../e2e/daemon-process.js';
import { trackChild } from '../support/child-processes.js';

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

/** A fresh key pair for one run: the secret is random, so finding it anywhere is a leak, not a coincidence. */
export function freshCredentials(): Credentials {
  return { apiKey: `chaos-${randomBytes(6).toString('hex')}`, apiSecret: `sec-${randomBytes(24).toString('hex')}` };
}

export class SimProcess {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  url: string | undefined;

  private constructor(args: string[], credentials: Credentials) {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('EXCHANGE_')) env[k] = v;
    this.child = trackChild(
      spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sim', ...args], {
        cwd: ROOT,
        env: { ...env, EXCHANGE_API_KEY: credentials.apiKey, EXCHANGE_API_SECRET: credentials.apiSecret },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        this.lines.push(line);
        const found = /simulated exchange at (http:\/\/\S+)/.exec(line);
        if (found) this.url = found[1];
      }
    };
    this.child.stdout?.on('data', onData);
    this.child.stderr?.on('data', onData);
  }

  static async start(args: string[], credentials: Credentials): Promise<SimProcess> {
    const sim = new SimProcess(args, credentials);
    await waitFor('the simulated exchange to print its URL', () => sim.url);
    return sim;
  }

  /** A signed client straight to the simulated exchange (not through the proxy). */
  client(credentials: Credentials): ExchangeClient {
    return new ExchangeClient({ baseUrl: this.url!, ...credentials, rateLimit: false });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
