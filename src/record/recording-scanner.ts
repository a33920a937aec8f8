/**
 * The backtest's cold pass over a recording: a byte scanner that takes the keys a replay needs (s, p, t, h, l,
 * vb, vq) straight from the decompressed bytes into columns, without building a string or an object per line,
 * and hashes the compressed file in the same pass (the file is read once). It reads exactly what readRecordingBatches reads: any line
 * it does not take on its fast path (the header, a pair-configuration line, a symbol's first ticker, escapes,
 * other types, anything malformed) goes through the readers' own lineEntry, which also raises their errors.
 * Numbers are converted as JSON.parse converts them (Clinger's fast path, Number() beyond it), so the columns
 * are bit for bit those of the object reader.
 */
import { createHash } from 'node:crypto';
import type { WireTicker } from '../wire/schemas.js';
import type { PairConfig } from '../ports/venue-records.js';
import type { RecordingHeader } from './recording-format.js';
import { type GzipBreak, gunzipChunks, lineEntry, tailTicker, tornTail } from './recording-reader.js';

/** Where the scanned ticks go. */
export interface TickSink {
  /** The index of a symbol met for the first time in this file, given its first ticker. */
  symbol(first: WireTicker): number;
  push(sym: number, time: number, price: number, high: number, low: number, vb: number, vq: number): void;
}

export interface ScanOptions {
  /** Ticker time at which the read stops (as the reader's `to`). */
  to?: number;
  /**
   * Read on past `to` to the end (the column cache wants the whole file): ticks after it are pushed too, and a
   * break or a malformed line after it ends the scan quietly with `complete` false instead of failing.
   */
  readAll?: boolean;
  /** The file's sha256 when already known (the scan then does not hash). */
  sha256?: string;
}

export interface ScanResult {
  /** The file's sha256 (as given, or hashed in the pass when the whole file was read). */
  sha256: string | undefined;
  header: RecordingHeader | undefined;
  /** Pair-configuration lines, each with the number of ticks pushed before it. */
  pairs: { config: PairConfig; t: number; at: number }[];
  /** Ticks pushed (past `stop` when the scan read on). */
  count: number;
  /** Ticks before the first one at or after `to` (count when none is): the reader's ticks (before `from`). */
  stop: number;
  /** The whole file was read and is sound (a cacheable read). */
  complete: boolean;
  /** The file breaks off before `to`: what the readers report (an error, or a partial read). */
  broken?: { lines: number; byte: number | undefined; reason: string };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** End of the last token read, or -1 when it was not valid JSON. Module state: the scanner is synchronous. */
let at = 0;
/** The last string read held an escape. */
let escaped = false;

function skipWs(b: Buffer, i: number, end: number): number {
  while (i < end) {
    const c = b[i] as number;
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
    else break;
  }
  return i;
}

const isDigit = (c: number | undefined): boolean => c !== undefined && c >= ZERO && c <= NINE;

/** A JSON number at i, converted as JSON.parse converts it; sets `at` to its end, -1 when it is not one. */
function number(b: Buffer, i: number, end: number): number {
  const start = i;
  const neg = b[i] === MINUS;
  if (neg) i++;
  let m = 0;
  let digits = 0;
  let scale = 0;
  let c = b[i];
  if (c === ZERO) i++;
  else if (isDigit(c)) {
    do {
      m = m * 10 + ((c as number) - ZERO);
      digits++;
      c = b[++i];
    } while (i < end && isDigit(c));
  } else {
    at = -1;
    return 0;
  }
  if (i < end && b[i] === DOT) {
    c = b[++i];
    if (i >= end || !isDigit(c)) {
      at = -1;
      return 0;
    }
    do {
      m = m * 10 + ((c as number) - ZERO);
      digits++;
      scale++;
      c = b[++i];
    } while (i < end && isDigit(c));
  }
  c = b[i];
  if (i < end && (c === 0x65 || c === 0x45)) {
    c = b[++i];
    if (c === 0x2b || c === MINUS) c = b[++i];
    if (i >= end || !isDigit(c)) {
      at = -1;
      return 0;
    }
    do c = b[++i];
    while (i < end && isDigit(c));
    at = i;
    return Number(b.toString('latin1', start, i));
  }
  at = i;
  // m and 10^scale are exact doubles: one division is correctly rounded, as JSON.parse's conversion is.
  if (digits <= 15 && scale <= 22) {
    const v = scale === 0 ? m : m / (POW10[scale] as number);
    return neg ? -v : v;
  }
  return Number(b.toString('latin1', start, i));
}

/** A string whose opening quote is at i: sets `at` past its closing quote (-1 if invalid) and `escaped`. */
function string(b: Buffer, i: number, end: number): void {
  escaped = false;
  i++;
  while (i < end) {
    const c = b[i] as number;
    if (c === QUOTE) {
      at = i + 1;
      return;
    }
    if (c < 0x20) break;
    if (c === BACKSLASH) {
      escaped = true;
      const e = b[i + 1];
      if (e === 0x75) {
        for (let k = 2; k < 6; k++) {
          const h = b[i + k] as number;
          if (!((h >= ZERO && h <= NINE) || (h >= 0x41 && h <= 0x46) || (h >= 0x61 && h <= 0x66))) {
            at = -1;
            return;
          }
        }
        i += 6;
        continue;
      }
      if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      )
        break;
      i += 2;
      continue;
    }
    i++;
  }
  at = -1;
}

function literal(b: Buffer, i: number, end: number, word: string): void {
  if (i + word.length > end) {
    at = -1;
    return;
  }
  for (let k = 0; k < word.length; k++)
    if (b[i + k] !== word.charCodeAt(k)) {
      at = -1;
      return;
    }
  at = i + word.length;
}

/** Any JSON value at i, checked and skipped: sets `at`. */
function skipValue(b: Buffer, i: number, end: number, depth: number): void {
  const c = b[i];
  if (c === QUOTE) return string(b, i, end);
  if (c === MINUS || isDigit(c)) {
    number(b, i, end);
    return;
  }
  if (c === 0x74) return literal(b, i, end, 'true');
  if (c === 0x66) return literal(b, i, end, 'false');
  if (c === 0x6e) return literal(b, i, end, 'null');
  if ((c !== 0x7b && c !== 0x5b) || depth > 64) {
    at = -1;
    return;
  }
  const object = c === 0x7b;
  const close = object ? 0x7d : 0x5d;
  i = skipWs(b, i + 1, end);
  if (b[i] === close && i < end) {
    at = i + 1;
    return;
  }
  for (;;) {
    if (object) {
      if (b[i] !== QUOTE) break;
      string(b, i, end);
      if (at < 0) return;
      i = skipWs(b, at, end);
      if (b[i] !== COLON) break;
      i = skipWs(b, i + 1, end);
    }
    skipValue(b, i, end, depth + 1);
    if (at < 0) return;
    i = skipWs(b, at, end);
    if (i >= end) break;
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1, end);
      continue;
    }
    if (b[i] === close) {
      at = i + 1;
      return;
    }
    break;
  }
  at = -1;
}

/** The fast path's values of the last line: time, price, high, low, vb, vq; and where its symbol is. */
const values = new Float64Array(6);
let symStart = 0;
let symEnd = 0;

/** A number, or null (NaN), at i for an optional numeric key; false when it is anything else. */
function optionalNumber(b: Buffer, i: number, end: number, slot: number): boolean {
  const c = b[i];
  if (c === 0x6e) {
    literal(b, i, end, 'null');
    values[slot] = NaN;
    return at >= 0;
  }
  if (c !== MINUS && !isDigit(c)) return false;
  values[slot] = number(b, i, end);
  return at >= 0;
}

/**
 * One line on the fast path: true when it is a plain ticker object whose s is an escape-free string, p a
 * number, t an integer and h, l, vb, vq numbers, null or absent (their values in `values`, the symbol's bytes
 * at symStart..symEnd). False sends the line to lineEntry.
 */
function fastLine(b: Buffer, i: number, end: number): boolean {
  i = skipWs(b, i, end);
  if (b[i] !== 0x7b || i >= end) return false;
  i = skipWs(b, i + 1, end);
  let seen = 0;
  values[2] = values[3] = values[4] = values[5] = NaN;
  for (;;) {
    if (b[i] !== QUOTE || i >= end) return false;
    const k = i + 1;
    string(b, i, end);
    if (at < 0 || escaped) return false;
    const len = at - 1 - k;
    i = skipWs(b, at, end);
    if (b[i] !== COLON) return false;
    i = skipWs(b, i + 1, end);
    const k0 = b[k] as number;
    if (len === 1 && k0 === 0x73) {
      // s
      if (b[i] !== QUOTE) return false;
      string(b, i, end);
      if (at < 0 || escaped) return false;
      symStart = i + 1;
      symEnd = at - 1;
      seen |= 1;
    } else if (len === 1 && (k0 === 0x70 || k0 === 0x74)) {
      // p, t
      const c = b[i];
      if (c !== MINUS && !isDigit(c)) return false;
      const v = number(b, i, end);
      if (at < 0) return false;
      if (k0 === 0x70) {
        values[1] = v;
        seen |= 2;
      } else {
        values[0] = v;
        seen |= 4;
      }
    } else if (len === 1 && (k0 === 0x68 || k0 === 0x6c)) {
      if (!optionalNumber(b, i, end, k0 === 0x68 ? 2 : 3)) return false;
    } else if (len === 2 && k0 === 0x76 && (b[k + 1] === 0x62 || b[k + 1] === 0x71)) {
      if (!optionalNumber(b, i, end, b[k + 1] === 0x62 ? 4 : 5)) return false;
    } else if (len === 10 && k0 === 0x70 && b[k + 1] === 0x61 && b[k + 4] === 0x43) {
      return false; // pairConfig (a configuration line)
    } else {
      skipValue(b, i, end, 0);
      if (at < 0) return false;
    }
    i = skipWs(b, at, end);
    if (i >= end) return false;
    if (b[i] === COMMA) {
      i = skipWs(b, i + 1, end);
      continue;
    }
    if (b[i] !== 0x7d) return false;
    i = skipWs(b, i + 1, end);
    return i === end && seen === 7 && Number.isInteger(values[0]);
  }
}

/** Thrown inside the scan to end it quietly when reading past `to` meets something wrong. */
class PastStop extends Error {}

/** Scans one recording into `sink`. Errors (before `to`) are the readers' errors, naming the file and line. */
export async function scanRecording(file: string, sink: TickSink, options: ScanOptions = {}): Promise<ScanResult> {
  const to = options.to ?? Infinity;
  const readAll = options.readAll === true;
  const hash = options.sha256 === undefined ? createHash('sha256') : undefined;
  const result: ScanResult = {
    sha256: options.sha256,
    header: undefined,
    pairs: [],
    count: 0,
    stop: -1,
    complete: false,
  };
  /** This file's symbols by name; the last one's bytes, to match a line's symbol without decoding it. */
  const symbols = new Map<string, number>();
  let lastSym: Buffer = Buffer.alloc(0);
  let lastIndex = -1;
  let lineNo = 0;
  const stopped = () => result.stop >= 0;
  const ticker = (w: WireTicker): void => {
    let s = symbols.get(w.s);
    if (s === undefined) {
      s = sink.symbol(w);
      symbols.set(w.s, s);
    }
    if (w.t >= to && !stopped()) result.stop = result.count;
    sink.push(s, w.t, Number(w.p), Number(w.h ?? NaN), Number(w.l ?? NaN), Number(w.vb ?? NaN), Number(w.vq ?? NaN));
    result.count++;
  };
  const slowLine = (b: Buffer, start: number, end: number): void => {
    const entry = lineEntry(b.toString('utf8', start, end), file, lineNo);
    if (entry.kind === 'header') result.header = entry.header;
    else if (entry.kind === 'pair') result.pairs.push({ config: entry.config, t: entry.t, at: result.count });
    else ticker(entry.ticker);
  };
  const line = (b: Buffer, start: number, end: number): void => {
    lineNo++;
    if (start === end) return;
    if (lineNo > 1 && fastLine(b, start, end)) {
      const n = symEnd - symStart;
      let same = n === lastSym.length;
      for (let k = 0; same && k < n; k++) same = b[symStart + k] === lastSym[k];
      if (!same) {
        const s = symbols.get(b.toString('utf8', symStart, symEnd));
        if (s === undefined) return slowLine(b, start, end); // the symbol's first ticker: its assets too
        lastSym = Buffer.from(b.subarray(symStart, symEnd));
        lastIndex = s;
      }
      const t = values[0] as number;
      if (t >= to && !stopped()) result.stop = result.count;
      sink.push(lastIndex, t, values[1]!, values[2]!, values[3]!, values[4]!, values[5]!);
      result.count++;
      return;
    }
    slowLine(b, start, end);
  };

  /** Scans the line of b ending at newline nl; true when the scan is to end there. */
  const lineTo = (b: Buffer, start: number, nl: number): boolean => {
    try {
      line(b, start, nl);
    } catch (err) {
      if (stopped()) throw new PastStop();
      throw err;
    }
    return stopped() && !readAll;
  };
  // The part of a line a chunk ends in, joined to the next chunk's first line alone (the chunk is scanned where
  // it is, not copied behind it: that doubled what the scan allocates).
  let rest: Buffer | undefined;
  let gzipBreak: GzipBreak | undefined;
  try {
    for await (const chunk of gunzipChunks(file, false, hash && ((c) => hash.update(c)))) {
      if (!Buffer.isBuffer(chunk)) {
        gzipBreak = chunk;
        break;
      }
      let start = 0;
      if (rest !== undefined) {
        const nl = chunk.indexOf(0x0a);
        if (nl === -1) {
          rest = Buffer.concat([rest, chunk]);
          continue;
        }
        const joined = Buffer.concat([rest, chunk.subarray(0, nl)]);
        if (lineTo(joined, 0, joined.length)) return result;
        start = nl + 1;
      }
      for (let nl = chunk.indexOf(0x0a, start); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
        if (lineTo(chunk, start, nl)) return result;
        start = nl + 1;
      }
      rest = start === chunk.length ? undefined : chunk.subarray(start);
    }
    if (rest !== undefined && gzipBreak === undefined) {
      // A last line without its newline: a complete entry that only lost it is kept (within the window), a
      // torn one is a break.
      const tail = rest.toString('utf8');
      let parsed: WireTicker | undefined;
      try {
        parsed = tailTicker(tail, file, lineNo + 1);
      } catch (err) {
        if (stopped()) throw new PastStop();
        throw err;
      }
      if (parsed === undefined) {
        if (stopped()) throw new PastStop();
        result.broken = tornTail(tail, lineNo);
      } else ticker(parsed);
    }
  } catch (err) {
    if (err instanceof PastStop) return result;
    throw err;
  }
  if (gzipBreak) {
    if (stopped()) return result; // the reader stopped before the break
    result.broken = { lines: lineNo, byte: gzipBreak.byte, reason: gzipBreak.reason };
  }
  if (!stopped()) result.stop = result.count;
  result.complete = result.broken === undefined;
  if (result.complete && hash) result.sha256 = hash.digest('hex');
  return result;
}
