/**
 * Recordings by content, for the queue: the coordinator serves the files of its sweep at
 * /recordings/SHA256 (`--serve-data`), and a worker keeps a copy of each recording it ran on in its cache
 * folder under the recording's sha256, fetched from the shared path the job names or from the coordinator's
 * URL, and taken only when its bytes hash to the sha256 the job names. (The columns parsed from it are cached
 * by the same hash where the column cache is on.)
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BotError } from '../../errors.js';
import type { RecordingRef } from './queue-jobs.js';

/** Where a worker keeps what it fetched unless --cache says otherwise (relative to its working directory). */
export const DEFAULT_WORKER_CACHE = 'data/cache/worker';

/** The cached copy of a recording: a folder per sha256 holding the file under its own name. */
export function cachedRecording(cacheDir: string, ref: RecordingRef): string {
  return path.join(cacheDir, 'recordings', ref.file.sha256, path.basename(ref.file.path));
}

const exists = (file: string) =>
  stat(file).then(
    (s) => s.isFile(),
    () => false,
  );

/** Copies `source` to `target` through a temporary name, renamed into place only when the bytes hash right. */
async function storeVerified(source: Readable, target: string, sha256: string, from: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
  const hash = createHash('sha256');
  const hashing = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(source, hashing, createWriteStream(temp));
    const got = hash.digest('hex');
    if (got !== sha256)
      throw new BotError('E_RECORDING', `${from}: its bytes hash to ${got}, the job names ${sha256}; not used`);
    await rename(temp, target);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * The local path of the recording `ref` names, verified by its sha256: the cached copy when there is one,
 * else a copy of the shared path (when this machine sees it), else of the coordinator's URL.
 */
export async function recordingByContent(ref: RecordingRef, cacheDir: string): Promise<string> {
  const target = cachedRecording(cacheDir, ref);
  if (await exists(target)) return target;
  const { sha256 } = ref.file;
  if (await exists(ref.at)) {
    await storeVerified(createReadStream(ref.at), target, sha256, ref.at);
    return target;
  }
  if (ref.url === undefined)
    throw new BotError(
      'E_RECORDING',
      `recording ${sha256}: ${ref.at} is not on this machine and the coordinator serves no URL ` +
        `(mount the data at the same path, or run the sweep with --serve-data HOST:PORT)`,
    );
  let response: Response;
  try {
    response = await fetch(ref.url);
  } catch (err) {
    throw new BotError('E_RECORDING', `recording ${sha256}: GET ${ref.url}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (!response.ok || response.body === null)
    throw new BotError('E_RECORDING', `recording ${sha256}: GET ${ref.url} answered ${response.status}`);
  await storeVerified(Readable.fromWeb(response.body as never), target, sha256, ref.url);
  return target;
}

/** Drops a cached copy that turned out not to hash right (read again next time). */
export async function dropCached(cacheDir: string, ref: RecordingRef): Promise<void> {
  await rm(path.dirname(cachedRecording(cacheDir, ref)), { recursive: true, force: true });
}

export interface RecordingServer {
  /** The URL a worker fetches a recording of this sweep from. */
  urlOf(sha256: string): string;
  /** Adds a sweep's files (a walk-forward's parts are sweeps of the same files). */
  add(files: readonly { sha256: string; path: string }[]): void;
  close(): Promise<void>;
}

/**
 * Serves the given recordings, read-only, by sha256 only (GET /recordings/SHA256): nothing else of the
 * machine can be named. `host` 0.0.0.0 or :: listens everywhere and names this machine by its host name.
 */
export async function serveRecordings(host: string, port: number): Promise<RecordingServer> {
  const files = new Map<string, string>();
  const server: Server = createServer((req, res) => {
    const match = /^\/recordings\/([0-9a-f]{64})$/.exec(req.url ?? '');
    const file = match && files.get(match[1] as string);
    if (req.method !== 'GET' || !file) {
      res.writeHead(req.method === 'GET' ? 404 : 405).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    createReadStream(file)
      .on('error', () => res.destroy())
      .pipe(res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(new BotError('E_USAGE', `--serve-data ${host}:${port}: cannot listen (${err.message})`)),
    );
    server.listen(port, host, resolve);
  });
  const bound = (server.address() as AddressInfo).port;
  const name = host === '0.0.0.0' || host === '::' ? hostname() : host.includes(':') ? `[${host}]` : host;
  return {
    urlOf: (sha256) => `http://${name}:${bound}/recordings/${sha256}`,
    add: (list) => {
      for (const f of list) files.set(f.sha256, path.resolve(f.path));
    },
    close: () =>
      // Idempotent: a server already closed would wait for a second 'close' event that never comes.
      server.listening
        ? new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          })
        : Promise.resolve(),
  };
}
