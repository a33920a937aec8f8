/**
 * How two backtest output folders compare (bench/identical-outputs.ts): file by file, byte for byte, except for
 * the recorded hashes of source files that differ between the two checkouts. A source is a file an output names
 * with its hash, as `{ "file": ..., "sha256": ... }` (summary.json's strategy file and its strategy module; a data
 * file is recorded by `path`, never taken for one); it counts as changed only when each side's recorded value is
 * the sha256 of that file in its own checkout, hashed here, and the two differ. Only those values are masked, and
 * only where their context says they are a hash: `"sha256": "<all 64 digits>"` in JSON, `sha256 <first 12>…` in
 * the report's and the sweep page's input lines. The output folder's marker (.spot-bot-output.json) holds a hash
 * of all of a run's inputs, sources, data and settings alike: a difference there is put down to the sources only
 * when the markers differ in that hash alone and summary.json, which records every one of those inputs, is
 * identical once the sources' hashes are masked. Anything else that differs is a difference.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { OUTPUT_MARKER } from '../src/backtest/output-folder.js';

/** One side of a comparison: the output folder, and the checkout whose `bot backtest` wrote it. */
export interface Side {
  out: string;
  root: string;
}

/** A source file that differs between the checkouts, with its sha256 on each side (as recorded, and as hashed). */
export interface ChangedSource {
  file: string;
  here: string;
  there: string;
}

export interface Comparison {
  /** The changed sources, whose recorded hashes are masked wherever the outputs give them. */
  sources: ChangedSource[];
  /** The output files that differed only in those hashes (the marker's inputs hash included). */
  masked: string[];
  /** Everything else that differs: one entry a file, with its first differing line once the hashes are masked. */
  differences: string[];
}

/** The files of an output folder, relative to it, sorted. */
export function outputFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const HASH = /^[0-9a-f]{64}$/;

/** The `{ file, sha256 }` pairs the JSON outputs of a folder record, by file. */
function recordedSources(dir: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) {
      const { file, sha256: hash } = value as { file?: unknown; sha256?: unknown };
      if (typeof file === 'string' && typeof hash === 'string' && HASH.test(hash)) found.set(file, hash);
      Object.values(value).forEach(walk);
    }
  };
  for (const name of outputFiles(dir).filter((f) => f.endsWith('.json'))) {
    try {
      walk(JSON.parse(readFileSync(join(dir, name), 'utf8')));
    } catch {
      // Not JSON after all: compared byte for byte like the rest.
    }
  }
  return found;
}

/** The sources both sides record with different hashes, each the sha256 of that file in its own checkout. */
function changedSources(here: Side, there: Side): ChangedSource[] {
  const [a, b] = [recordedSources(here.out), recordedSources(there.out)];
  const hashed = (root: string, file: string) => {
    const path = resolve(root, file);
    return existsSync(path) ? sha256(readFileSync(path)) : undefined;
  };
  return [...a]
    .filter(([file, h]) => b.has(file) && b.get(file) !== h)
    .map(([file, h]) => ({ file, here: h, there: b.get(file)! }))
    .filter((s) => hashed(here.root, s.file) === s.here && hashed(there.root, s.file) === s.there)
    .sort((x, y) => x.file.localeCompare(y.file));
}

/** The text with each changed source's hash, where its context says it is one, replaced by the file's name. */
function mask(text: string, sources: readonly ChangedSource[], side: 'here' | 'there'): string {
  let out = text;
  for (const source of sources) {
    const hash = source[side];
    out = out
      .replace(new RegExp(`("sha256":\\s*")${hash}"`, 'g'), (_, key: string) => `${key}<${source.file}>"`)
      .split(`sha256 ${hash.slice(0, 12)}…`)
      .join(`sha256 <${source.file}>…`);
  }
  return out;
}

/** Whether two markers differ in their inputs hash alone. */
function markersDifferInInputsOnly(a: string, b: string): boolean {
  try {
    const [ma, mb] = [JSON.parse(a) as Record<string, unknown>, JSON.parse(b) as Record<string, unknown>];
    const rest = (m: Record<string, unknown>) => JSON.stringify({ ...m, inputs: undefined });
    return ma.kind === 'run' && typeof ma.inputs === 'string' && typeof mb.inputs === 'string' && rest(ma) === rest(mb);
  } catch {
    return false;
  }
}

/** Compares the output folders of the two sides (see the module doc). */
export function compareOutputs(here: Side, there: Side): Comparison {
  const sources = changedSources(here, there);
  const names = [...new Set([...outputFiles(here.out), ...outputFiles(there.out)])].sort();
  const texts = (name: string): [string, string] => [
    mask(readFileSync(join(here.out, name), 'utf8'), sources, 'here'),
    mask(readFileSync(join(there.out, name), 'utf8'), sources, 'there'),
  ];
  const masked: string[] = [];
  const differences: string[] = [];
  for (const name of names) {
    const [fa, fb] = [join(here.out, name), join(there.out, name)];
    if (!existsSync(fa) || !existsSync(fb)) {
      differences.push(`${name}: only in ${existsSync(fa) ? 'this checkout' : 'the other'}`);
      continue;
    }
    if (readFileSync(fa).equals(readFileSync(fb))) continue;
    const [ta, tb] = texts(name);
    if (sources.length > 0 && ta === tb) {
      masked.push(name);
      continue;
    }
    if (sources.length > 0 && name === OUTPUT_MARKER && markersDifferInInputsOnly(ta, tb)) {
      const summary = 'summary.json';
      if (existsSync(join(here.out, summary)) && existsSync(join(there.out, summary))) {
        const [sa, sb] = texts(summary);
        if (sa === sb) {
          masked.push(name);
          continue;
        }
      }
    }
    const [la, lb] = [ta.split('\n'), tb.split('\n')];
    const i = la.findIndex((line, n) => line !== lb[n]);
    const at = i < 0 ? la.length : i;
    const cut = (s: string | undefined) => (s === undefined ? '(none)' : s.length > 160 ? `${s.slice(0, 160)}...` : s);
    differences.push(`${name}: line ${at + 1}\n      here:  ${cut(la[at])}\n      there: ${cut(lb[at])}`);
  }
  return { sources, masked, differences };
}
