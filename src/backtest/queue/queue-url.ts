/**
 * The Redis a sweep's queue lives on, from `--queue` or SWEEP_QUEUE: `redis://[[user]:password@]host:port[/db]`,
 * or `rediss://…` for TLS. The password stays in the connection options only: what logs and errors show is
 * `shown`, with the credentials replaced.
 */
import type { RedisOptions } from 'bullmq';
import type { DirectVariable } from '../../config/env.js';
import { readSecretFiles } from '../../config/secret-files.js';
import { BotError } from '../../errors.js';

/** The environment variable that stands for `--queue` (keeps the password off the command line). */
export const QUEUE_ENV = 'SWEEP_QUEUE';
export const QUEUE_VARIABLE: DirectVariable = {
  name: QUEUE_ENV,
  secret: true,
  description:
    'bot backtest --sweep and bot worker: the Redis of the sweep queue, redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://… (as --queue, which wins)',
};

export interface QueueUrl {
  /** ioredis options (host, port, credentials, db, TLS). */
  connection: RedisOptions;
  /** The address for messages: scheme, host, port and db, credentials masked. */
  shown: string;
}

/** `where` names the flag or variable in errors (`--queue`, `SWEEP_QUEUE`); the URL itself is never repeated. */
export function parseQueueUrl(text: string, where: string): QueueUrl {
  const bad = (why: string) =>
    new BotError('E_USAGE', `${where}: ${why} (expected redis://[:PASSWORD@]HOST:PORT[/DB] or rediss://… for TLS)`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad('not a URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw bad(`unsupported scheme '${url.protocol}'`);
  if (url.hostname === '') throw bad('no host');
  if (url.search !== '' || url.hash !== '') throw bad('no query or fragment is taken');
  const port = url.port === '' ? 6379 : Number(url.port);
  const dbText = url.pathname.replace(/^\//, '');
  if (dbText !== '' && !/^\d+$/.test(dbText)) throw bad(`the path must be a database number, found '/${dbText}'`);
  const db = dbText === '' ? 0 : Number(dbText);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const tls = url.protocol === 'rediss:';
  const credentials = username !== '' || password !== '' ? '***@' : '';
  return {
    connection: {
      host,
      port,
      db,
      ...(username === '' ? {} : { username }),
      ...(password === '' ? {} : { password }),
      ...(tls ? { tls: { servername: host } } : {}),
    },
    shown: `${url.protocol}//${credentials}${url.host}${db === 0 ? '' : `/${db}`}`,
  };
}

/**
 * `--queue` when given, else SWEEP_QUEUE, or SWEEP_QUEUE_FILE (a file holding the URL: a Docker or Kubernetes
 * secret, since the URL carries the password); undefined when none is.
 */
export function queueUrlFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): QueueUrl | undefined {
  if (flag !== undefined) return parseQueueUrl(flag, '--queue');
  const file = readSecretFiles(env, [QUEUE_ENV]);
  if (file.problems.length > 0) throw new BotError('E_USAGE', file.problems.join('; '));
  const fromFile = file.values[QUEUE_ENV];
  if (fromFile !== undefined) return parseQueueUrl(fromFile, `${QUEUE_ENV}_FILE`);
  const value = env[QUEUE_ENV];
  return value === undefined || value === '' ? undefined : parseQueueUrl(value, QUEUE_ENV);
}
