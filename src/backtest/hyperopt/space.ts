/**
 * A hyperopt's search space: one dimension per `--space` key, and the constraints between keys.
 *
 * - `KEY=LO..HI` a float, `KEY=LO..HI:int` an integer, `KEY=LO..HI:log` a float drawn on a log scale (LO > 0),
 *   `KEY=a,b,c` a choice (typed as --sweep types its values). Any key a sweep takes: params.*, risk.*, exits.*
 *   (each ROI row: exits.roi.60), protections.*.
 * - `A<B` (also <=, >, >=, !=; either side a key or a number) is a constraint: a trial whose values break one is
 *   never run; the sampler draws another. A key of a constraint that no dimension varies takes its --set value,
 *   else the strategy file's.
 * - A float is rounded to about a thousandth of its range (a power of ten: 0.1..0.9 to 0.001, 1..50 to 0.1), a
 *   log-scaled one to four significant digits: finer would only fit noise (and read as overfitted). A key whose
 *   file value is text (exact decimals such as spacingPct "0.4") gets text, else a number.
 *
 * The samplers see each trial as a point: a float or an integer as u in [0, 1] (an integer's cell of width
 * 1 / (HI - LO + 1) around its value), a choice as the index of its value.
 */
import { BotError } from '../../errors.js';
import { D, type Dec } from '../../market/decimal.js';
import { valueAt } from '../../config/problems.js';
import { type ConfigSource, overrideKey, overridePath, overrideText, overrideValue } from '../strategy-configs.js';
import { parseSweep } from '../sweep.js';

export type Dimension =
  | { key: string; kind: 'float' | 'log'; lo: number; hi: number; text: boolean }
  | { key: string; kind: 'int'; lo: number; hi: number; text: boolean }
  | { key: string; kind: 'choice'; values: unknown[] };

type Operator = '<=' | '>=' | '!=' | '<' | '>';

export interface Constraint {
  text: string;
  left: string | number;
  op: Operator;
  right: string | number;
}

export interface Space {
  dimensions: Dimension[];
  constraints: Constraint[];
}

function usage(message: string): BotError {
  return new BotError('E_USAGE', message);
}

const TERM = String.raw`([A-Za-z_][A-Za-z0-9_.]*|-?\d+(?:\.\d+)?)`;
const CONSTRAINT = new RegExp(String.raw`^\s*${TERM}\s*(<=|>=|!=|<|>)\s*${TERM}\s*$`);

function term(text: string): string | number {
  return /^-?\d/.test(text) ? Number(text) : text;
}

/** Whether a --space argument is a constraint (`fast<slow`) rather than a dimension. */
export function isConstraint(spec: string): boolean {
  return CONSTRAINT.test(spec);
}

function parseConstraint(spec: string): Constraint {
  const m = CONSTRAINT.exec(spec);
  if (!m) throw usage(`--space ${spec}: expected a constraint such as fast<slow`);
  return { text: spec.replace(/\s+/g, ''), left: term(m[1]!), op: m[2] as Operator, right: term(m[3]!) };
}

/** One `--space` dimension, typed against the strategy files (as --sweep types its values). */
export function parseDimension(spec: string, sources: readonly ConfigSource[]): Dimension {
  const eq = spec.indexOf('=');
  const key = eq > 0 ? spec.slice(0, eq).trim() : '';
  const body = eq > 0 ? spec.slice(eq + 1).trim() : '';
  const range = /^(-?\d+(?:\.\d+)?)\.\.(-?\d+(?:\.\d+)?)(?::(int|log))?$/.exec(body);
  if (key === '' || body === '')
    throw usage(
      `--space: expected KEY=LO..HI, KEY=LO..HI:int, KEY=LO..HI:log, KEY=a,b,c or a constraint A<B, found '${spec}'`,
    );
  if (!range) {
    if (body.includes('..'))
      throw usage(`--space ${key}: expected LO..HI with plain numbers, then :int or :log or nothing, found '${body}'`);
    const { values } = parseSweep(`${key}=${body}`, sources, '--space');
    if (new Set(values.map((v) => JSON.stringify(v))).size !== values.length)
      throw usage(`--space ${key}: a choice lists each value once, found '${body}'`);
    return { key, kind: 'choice', values };
  }
  const lo = Number(range[1]);
  const hi = Number(range[2]);
  const kind = (range[3] ?? 'float') as 'float' | 'int' | 'log';
  if (!(lo < hi)) throw usage(`--space ${key}: LO must be under HI, found '${body}'`);
  if (kind === 'int' && !(Number.isInteger(lo) && Number.isInteger(hi)))
    throw usage(`--space ${key}: an :int range takes whole numbers, found '${body}'`);
  if (kind === 'log' && !(lo > 0)) throw usage(`--space ${key}: a :log range must be above zero, found '${body}'`);
  // Typed by the file: a text value (exact decimals) is drawn as text, anything else as a number.
  const text = typeof overrideValue(sources[0]?.raw ?? {}, key, range[1]!, '--space') === 'string';
  return { key, kind, lo, hi, text };
}

/**
 * The --space arguments (dimensions and constraints). `fixed` (the --set values) and the strategy files give
 * the keys of a constraint that no dimension varies. Every key must be new (not also a --set or given twice).
 */
export function parseSpace(
  specs: readonly string[],
  sources: readonly ConfigSource[],
  fixed: Readonly<Record<string, unknown>>,
): Space {
  const dimensions: Dimension[] = [];
  const constraints: Constraint[] = [];
  for (const spec of specs) {
    if (isConstraint(spec)) constraints.push(parseConstraint(spec));
    else dimensions.push(parseDimension(spec, sources));
  }
  if (dimensions.length === 0) throw usage('--space: give at least one KEY=LO..HI (or KEY=a,b,c) to search');
  const seen = new Map<string, string>();
  for (const key of [...Object.keys(fixed), ...dimensions.map((d) => d.key)]) {
    const place = overrideKey(key);
    if (seen.has(place)) throw usage(`${key} is given twice (--space and --set, or two --space)`);
    seen.set(place, key);
  }
  const named = (key: string) =>
    seen.has(overrideKey(key)) ||
    ['number', 'string'].includes(typeof valueAt(sources[0]?.raw ?? {}, overridePath(key)));
  for (const c of constraints)
    for (const side of [c.left, c.right])
      if (typeof side === 'string' && !named(side))
        throw usage(
          `--space ${c.text}: ${side} is not a --space key, a --set key or a value of the strategy file (space keys: ${dimensions.map((d) => d.key).join(', ')})`,
        );
  return { dimensions, constraints };
}

/** The number of places a float of this range is rounded to: a thousandth of the range, as a power of ten. */
export function placesOf(lo: number, hi: number): number {
  return Math.max(0, -Math.ceil(Math.log10((hi - lo) / 1000)));
}

function typed(d: { text: boolean }, value: Dec): unknown {
  return d.text ? value.toFixed() : value.toNumber();
}

/** A point's value on a dimension (see the module doc for the scales and the rounding). */
export function decodeValue(d: Dimension, u: number): unknown {
  if (d.kind === 'choice') return d.values[Math.min(d.values.length - 1, Math.max(0, Math.round(u)))];
  const clamp = (x: Dec) => D.max(d.lo, D.min(d.hi, x));
  const w = Math.min(1, Math.max(0, u));
  if (d.kind === 'int') return typed(d, clamp(new D(Math.floor(d.lo + w * (d.hi - d.lo + 1)))));
  if (d.kind === 'float') return typed(d, clamp(new D(d.lo + w * (d.hi - d.lo)).toDecimalPlaces(placesOf(d.lo, d.hi))));
  const x = Math.exp(Math.log(d.lo) + w * (Math.log(d.hi) - Math.log(d.lo)));
  return typed(d, clamp(new D(x).toSignificantDigits(4)));
}

/** Where a value lies on a dimension (the inverse of decodeValue, to the centre of an integer's cell). */
export function encodeValue(d: Dimension, value: unknown): number {
  if (d.kind === 'choice') return d.values.findIndex((v) => JSON.stringify(v) === JSON.stringify(value));
  const x = Number(value);
  if (d.kind === 'int') return (x - d.lo + 0.5) / (d.hi - d.lo + 1);
  if (d.kind === 'float') return (x - d.lo) / (d.hi - d.lo);
  return (Math.log(x) - Math.log(d.lo)) / (Math.log(d.hi) - Math.log(d.lo));
}

/** A point as overrides by key. */
export function decodePoint(space: Space, point: readonly number[]): Record<string, unknown> {
  return Object.fromEntries(space.dimensions.map((d, i) => [d.key, decodeValue(d, point[i] as number)]));
}

/**
 * Every combination of each range's two ends and each choice's values, over `fixed`: where a lookback the space
 * sets is longest, for a lookback that grows (or shrinks) with each key, as a period does. Null when there are
 * more than `limit` of them.
 */
export function spaceCorners(
  space: Space,
  fixed: Readonly<Record<string, unknown>>,
  limit = 4096,
): Record<string, unknown>[] | null {
  let corners: Record<string, unknown>[] = [{ ...fixed }];
  for (const d of space.dimensions) {
    const values = d.kind === 'choice' ? d.values : [decodeValue(d, 0), decodeValue(d, 1)];
    if (corners.length * values.length > limit) return null;
    corners = corners.flatMap((c) => values.map((v) => ({ ...c, [d.key]: v })));
  }
  return corners;
}

/** Whether a trial's values keep every constraint (the other keys from `fixed`, then the strategy file). */
export function feasible(
  space: Space,
  values: Readonly<Record<string, unknown>>,
  fixed: Readonly<Record<string, unknown>>,
  raw: Record<string, unknown>,
): boolean {
  const side = (t: string | number): number => {
    if (typeof t === 'number') return t;
    const key = [...Object.keys(values), ...Object.keys(fixed)].find((k) => overrideKey(k) === overrideKey(t));
    const value = key === undefined ? valueAt(raw, overridePath(t)) : key in values ? values[key] : fixed[key];
    return Number(value);
  };
  return space.constraints.every((c) => {
    const [a, b] = [side(c.left), side(c.right)];
    switch (c.op) {
      case '<':
        return a < b;
      case '<=':
        return a <= b;
      case '>':
        return a > b;
      case '>=':
        return a >= b;
      case '!=':
        return a !== b;
    }
    return false;
  });
}

/** A dimension as the user wrote it, for the outputs. */
export function dimensionText(d: Dimension): string {
  if (d.kind === 'choice') return `${d.key}=${d.values.map(overrideText).join(',')}`;
  return `${d.key}=${d.lo}..${d.hi}${d.kind === 'float' ? '' : `:${d.kind}`}`;
}
