/**
 * podman on a machine without a Docker engine (docs: ../shared/ops/container-build-here.md): a private
 * configuration (runc, cgroupfs, file events, ulimits this host can grant) and storage kept in a cache folder
 * outside the repository, so the stand-in base image and the build's layers survive from one run to the next.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** SPOT_BOT_CONTAINER_CACHE, else $XDG_CACHE_HOME/spot-bot-container, else ~/.cache/spot-bot-container. */
export function cacheDir(): string {
  const explicit = process.env.SPOT_BOT_CONTAINER_CACHE;
  if (explicit !== undefined && explicit !== '') return explicit;
  return join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'spot-bot-container');
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

export class Podman {
  readonly env: NodeJS.ProcessEnv;

  constructor(readonly cache: string) {
    for (const dir of ['storage', 'run', 'tmp']) mkdirSync(join(cache, dir), { recursive: true });
    const containersConf = join(cache, 'containers.conf');
    const storageConf = join(cache, 'storage.conf');
    // crun fails on this host's hybrid cgroups; podman's default nofile of 1,048,576 cannot be granted here.
    writeFileSync(
      containersConf,
      [
        '[containers]',
        'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]',
        '[engine]',
        'runtime = "runc"',
        'cgroup_manager = "cgroupfs"',
        'events_logger = "file"',
        `events_logfile_path = "${join(cache, 'events.log')}"`,
        '',
      ].join('\n'),
    );
    writeFileSync(
      storageConf,
      [
        '[storage]',
        'driver = "overlay"',
        `graphroot = "${join(cache, 'storage')}"`,
        `runroot = "${join(cache, 'run')}"`,
        '',
      ].join('\n'),
    );
    this.env = {
      ...process.env,
      CONTAINERS_CONF: containersConf,
      CONTAINERS_STORAGE_CONF: storageConf,
      TMPDIR: join(cache, 'tmp'),
    };
  }

  /** Runs podman to completion, capturing its output; throws naming the command unless `allowFail`. */
  run(args: string[], options: { allowFail?: boolean; input?: string } = {}): Result {
    const r = spawnSync('podman', args, { env: this.env, encoding: 'utf8', input: options.input, maxBuffer: 1 << 26 });
    if (r.error) throw r.error;
    const result = { code: r.status ?? 128, stdout: r.stdout, stderr: r.stderr };
    if (result.code !== 0 && options.allowFail !== true)
      throw new Error(`podman ${args.join(' ')} exited ${result.code}:\n${result.stderr}${result.stdout}`);
    return result;
  }

  /**
   * `podman run --rm [-v MOUNT …] --entrypoint ENTRYPOINT IMAGE ARGS…`: one command in a throwaway container of the
   * image (a node or sh of its own, not the bot's entrypoint), as run() runs podman.
   */
  runIn(
    image: string,
    entrypoint: string,
    args: string[],
    options: { mounts?: string[]; allowFail?: boolean } = {},
  ): Result {
    const mounts = (options.mounts ?? []).flatMap((m) => ['-v', m]);
    return this.run(['run', '--rm', ...mounts, '--entrypoint', entrypoint, image, ...args], {
      allowFail: options.allowFail,
    });
  }

  /** Runs podman with its output shown as it comes (long builds), each line prefixed. */
  async stream(args: string[], prefix: string): Promise<void> {
    const child = spawn('podman', args, { env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const show = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim() === '') continue;
        process.stdout.write(`${prefix}${line}\n`);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', show);
    child.stderr.on('data', show);
    const code = await new Promise<number>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c) => resolve(c ?? 128));
    });
    if (code !== 0) throw new Error(`podman ${args.join(' ')} exited ${code}`);
  }
}

/** Whether a command is on PATH (podman, debootstrap, runc). */
export function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}
