/**
 * Data by content for the queue's workers: the coordinator's HTTP server serves a sweep's recordings by sha256
 * and nothing else; a worker that does not see the coordinator's path fetches the URL, keeps the copy under the
 * sha256 and refuses bytes that hash otherwise. And the Redis URL: the password never shows.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { RecordingRef } from '../../src/backtest/queue/queue-jobs.js';
import { parseQueueUrl, queueUrlFrom } from '../../src/backtest/queue/queue-url.js';
import { recordingByContent, serveRecordings } from '../../src/backtest/queue/recording-store.js';
import { SAMPLE } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('queue-data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bytes = readFileSync(SAMPLE);
const sha256 = createHash('sha256').update(bytes).digest('hex');
const ref = (at: string, url?: string): RecordingRef => ({
  file: { path: SAMPLE, name: 'BTCUSDT-2023-03-01_21', size: bytes.length, sha256 },
  at,
  ...(url === undefined ? {} : { url }),
});

it('serves recordings by sha256 only; a worker fetches, verifies and keeps them', async () => {
  const server = await serveRecordings('127.0.0.1', 0);
  try {
    server.add([{ sha256, path: SAMPLE }]);
    const url = server.urlOf(sha256);
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/recordings/${sha256}$`));
    const base = url.slice(0, url.indexOf('/recordings/'));
    expect((await fetch(`${base}/recordings/${'0'.repeat(64)}`)).status).toBe(404);
    expect((await fetch(`${base}/recordings/../package.json`)).status).toBe(404);
    expect((await fetch(`${base}/package.json`)).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(405);

    // Not at the coordinator's path on this "machine": fetched from the URL, kept under its sha256.
    const cache = join(dir, 'cache');
    const local = await recordingByContent(ref(join(dir, 'elsewhere', 'x.jsonl.gz'), url), cache);
    expect(local).toBe(join(cache, 'recordings', sha256, 'BTCUSDT-2023-03-01_21.jsonl.gz'));
    expect(createHash('sha256').update(readFileSync(local)).digest('hex')).toBe(sha256);
    // Kept: found again without the server.
    await server.close();
    expect(await recordingByContent(ref(join(dir, 'elsewhere', 'x.jsonl.gz'), url), cache)).toBe(local);
  } finally {
    await server.close();
  }

  // Bytes that hash otherwise are never kept, from a shared path or from a URL.
  const tampered = join(dir, 'tampered.jsonl.gz');
  writeFileSync(tampered, Buffer.concat([bytes, Buffer.from('x')]));
  const fresh = join(dir, 'fresh-cache');
  await expect(recordingByContent(ref(tampered), fresh)).rejects.toThrow(
    new RegExp(`tampered\\.jsonl\\.gz: its bytes hash to [0-9a-f]{64}, the job names ${sha256}; not used`),
  );
  const liar = await serveRecordings('127.0.0.1', 0);
  try {
    liar.add([{ sha256, path: tampered }]);
    await expect(recordingByContent(ref('/nowhere/x.jsonl.gz', liar.urlOf(sha256)), fresh)).rejects.toThrow(
      /its bytes hash to .* not used/,
    );
  } finally {
    await liar.close();
  }
  // Nothing kept, not even a temporary file.
  expect(readdirSync(join(fresh, 'recordings', sha256))).toEqual([]);
  // Neither a path nor a URL: the error says what to do.
  await expect(recordingByContent(ref('/nowhere/x.jsonl.gz'), fresh)).rejects.toThrow(
    /is not on this machine and the coordinator serves no URL .*--serve-data HOST:PORT/,
  );
}, 120_000);

it('reads the Redis URL from --queue or SWEEP_QUEUE and never shows its password', () => {
  const q = parseQueueUrl('redis://:s3cret%2Fpw@10.0.0.5:6390/2', '--queue');
  expect(q.connection).toMatchObject({ host: '10.0.0.5', port: 6390, db: 2, password: 's3cret/pw' });
  expect(q.connection.tls).toBeUndefined();
  expect(q.shown).toBe('redis://***@10.0.0.5:6390/2');
  const tls = parseQueueUrl('rediss://user:pw@redis.example:6380', 'SWEEP_QUEUE');
  expect(tls.connection).toMatchObject({ username: 'user', password: 'pw', tls: { servername: 'redis.example' } });
  expect(tls.shown).toBe('rediss://***@redis.example:6380');
  expect(parseQueueUrl('redis://localhost', '--queue').connection).toMatchObject({ port: 6379, db: 0 });

  for (const [text, why] of [
    ['http://:pw@host:6379', /--queue: unsupported scheme 'http:'/],
    ['redis://:pw@host:6379/x', /--queue: the path must be a database number/],
    ['not a url :pw', /--queue: not a URL/],
  ] as const) {
    expect(() => parseQueueUrl(text, '--queue')).toThrow(why);
    try {
      parseQueueUrl(text, '--queue');
    } catch (err) {
      expect((err as Error).message).not.toContain('pw');
    }
  }
  expect(queueUrlFrom(undefined, {})).toBeUndefined();
  expect(queueUrlFrom(undefined, { SWEEP_QUEUE: 'redis://h:1' })!.shown).toBe('redis://h:1');
  expect(() => queueUrlFrom(undefined, { SWEEP_QUEUE: 'redis//h' })).toThrow(/^SWEEP_QUEUE: /);
  expect(queueUrlFrom('redis://a:2', { SWEEP_QUEUE: 'redis://h:1' })!.shown).toBe('redis://a:2');
});

it('takes SWEEP_QUEUE_FILE, a file holding the URL (a Docker or Kubernetes secret), and never shows the password', () => {
  const file = join(dir, 'sweep_queue');
  writeFileSync(file, 'redis://:file-pw@redis:6379\n');
  const q = queueUrlFrom(undefined, { SWEEP_QUEUE_FILE: file })!;
  expect(q.connection).toMatchObject({ host: 'redis', port: 6379, password: 'file-pw' });
  expect(q.shown).toBe('redis://***@redis:6379');
  expect(() => queueUrlFrom(undefined, { SWEEP_QUEUE_FILE: file, SWEEP_QUEUE: 'redis://h:1' })).toThrow(
    'SWEEP_QUEUE_FILE: set either SWEEP_QUEUE or SWEEP_QUEUE_FILE, not both',
  );
  expect(() => queueUrlFrom(undefined, { SWEEP_QUEUE_FILE: join(dir, 'none') })).toThrow(
    /^SWEEP_QUEUE_FILE: cannot read .*none \(ENOENT\)$/,
  );
  writeFileSync(file, 'redis//:file-pw@redis\n');
  expect(() => queueUrlFrom(undefined, { SWEEP_QUEUE_FILE: file })).toThrow(/^SWEEP_QUEUE_FILE: not a URL/);
  try {
    queueUrlFrom(undefined, { SWEEP_QUEUE_FILE: file });
  } catch (err) {
    expect((err as Error).message).not.toContain('file-pw');
  }
});
