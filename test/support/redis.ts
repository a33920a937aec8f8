/**
 * A real Redis (Debian's redis-server, which .ci/run installs) on a free loopback port, and `bot worker`
 * processes taking jobs from it: the queue tests' collaborators. Every process is tracked, so a failing test
 * leaves none behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT, waitFor } from '../e2e/daemon-process.js';
import { freePort } from './free-port.js';
import { trackChild } from './child-processes.js';

export interface RedisProcess {
  url: string;
  port: number;
  child: ChildProcess;
  /** Stops it (SIGKILL) and waits for the exit. */
  stop(): Promise<void>;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((resolve) => child.once('exit', () => resolve()));

/** redis-server on 127.0.0.1:port (a free one unless given), no persistence unless `dir` is given (AOF there). */
export async function startRedis(
  options: { port?: number; password?: string; dir?: string } = {},
): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', ''];
  args.push(...(options.dir ? ['--dir', options.dir, '--appendonly', 'yes'] : ['--appendonly', 'no']));
  if (options.password !== undefined) args.push('--requirepass', options.password);
  const child = trackChild(spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  await waitFor(`redis-server on port ${port}`, () => {
    if (child.exitCode !== null) throw new Error(`redis-server exited: ${out}`);
    return out.includes('Ready to accept connections');
  });
  const auth = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  return {
    url: `redis://${auth}127.0.0.1:${port}`,
    port,
    child,
    stop: async () => {
      child.kill('SIGKILL');
      await exited(child);
    },
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** Its stderr lines so far. */
  lines: string[];
  /** Combinations it finished so far. */
  done(): number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** `bot worker --queue URL --cache DIR` as a real process, started once it takes jobs. */
export async function startWorker(queue: string, cacheDir: string, more: string[] = []): Promise<WorkerProcess> {
  const child = trackChild(
    spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker', '--cache', cacheDir, ...more], {
      cwd: ROOT,
      env: { ...process.env, SWEEP_QUEUE: queue },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const lines: string[] = [];
  let rest = '';
  child.stderr.on('data', (chunk: Buffer) => {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop() ?? '';
    lines.push(...parts);
  });
  await waitFor('a bot worker taking jobs', () => {
    if (child.exitCode !== null) throw new Error(`bot worker exited: ${lines.join('\n')}`);
    return lines.some((l) => l.includes('taking jobs'));
  });
  return {
    child,
    lines,
    done: () => lines.filter((l) => / done in \d+ ms$/.test(l)).length,
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      await exited(child);
    },
  };
}
