import type { WireTicker } from '../../src/wire/schemas.js';
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordingHeader } from '../../src/record/recording-format.js';
import { readRecording, type ReadOptions } from '../../src/record/recording-reader.js';

/** Every key of spot-api.md's 24-hour ticker entry, plus one the spec does not list. */
export function fullTicker(t: number, p = 63000.12, s = 'BTCUSDT'): WireTicker {
  return {
    a: 0.5,
    b: 'BTC',
    p,
    ld: 1.25,
    h: 64000,
    l: 62000.5,
    hh: 64100,
    lh: 61900,
    vb: 12.5,
    vq: 787500.1,
    s,
    qi: 2,
    bi: 1,
    q: 'USDT',
    u: true,
    lq: 0.1,
    lQ: 0.2,
    t,
    ph: 63500,
    av: 63010.7,
    hy: 70000,
    ly: 20000,
    vc: 3,
    pw: 60000,
    p1m: 50000,
    p3m: 40000,
    py: 30000,
    lbl: 'hot',
    extra: { nested: [1, null] },
  };
}

export const SPEC_TICKER_KEYS = [
  'a',
  'b',
  'p',
  'ld',
  'h',
  'l',
  'hh',
  'lh',
  'vb',
  'vq',
  's',
  'qi',
  'bi',
  'q',
  'u',
  'lq',
  'lQ',
  't',
  'ph',
  'av',
  'hy',
  'ly',
  'vc',
  'pw',
  'p1m',
  'p3m',
  'py',
  'lbl',
];

export function header(symbol = 'BTCUSDT'): RecordingHeader {
  return { format: RECORDING_FORMAT, version: RECORDING_VERSION, symbol, source: 'test' };
}

export async function readAll(file: string, options: ReadOptions = {}): Promise<WireTicker[]> {
  const out: WireTicker[] = [];
  for await (const ticker of readRecording(file, options)) out.push(ticker);
  return out;
}
