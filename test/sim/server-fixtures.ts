/** Helpers for the simulated exchange's server tests: tiny recordings on disk and raw signed HTTP requests. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { request } from 'undici';
import { sign } from '../../src/wire/signing.js';
import { RECORDING_FORMAT, RECORDING_VERSION } from '../../src/record/recording-format.js';
import type { SimCredentials } from '../../src/sim/sim-server.js';

export interface RawTicker {
  s: string;
  p: number;
  t: number;
  [key: string]: unknown;
}

/** A recording file (header line + one ticker per line, gzipped) named SYMBOL-test.jsonl.gz in dir. */
export function writeRecording(dir: string, symbol: string, tickers: RawTicker[], name = `${symbol}-test`): string {
  const header = { format: RECORDING_FORMAT, version: RECORDING_VERSION, symbol, source: 'test' };
  const lines = [header, ...tickers].map((x) => JSON.stringify(x)).join('\n') + '\n';
  const file = path.join(dir, `${name}.jsonl.gz`);
  writeFileSync(file, gzipSync(lines));
  return file;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: unknown;
  text: string;
}

export async function raw(
  url: string,
  method: 'GET' | 'POST' | 'DELETE',
  pathAndQuery: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  const res = await request(`${url}${pathAndQuery}`, {
    method,
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json, text };
}

/** `query&timestamp=now&signature=…`, signed with the credentials' secret, as a client does. */
export function signed(credentials: SimCredentials, query: string, timestamp = Date.now()): string {
  const text = `${query === '' ? '' : `${query}&`}timestamp=${timestamp}`;
  return `${text}&signature=${sign(credentials.apiSecret, text)}`;
}

/** A signed raw request: the x-api-key header and the signed query. */
export function rawSigned(
  url: string,
  credentials: SimCredentials,
  method: 'GET' | 'POST' | 'DELETE',
  pathName: string,
  query: string,
  body?: string,
): Promise<RawResponse> {
  return raw(url, method, `${pathName}?${signed(credentials, query)}`, {
    headers: { 'x-api-key': credentials.apiKey },
    body,
  });
}
