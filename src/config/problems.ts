/**
 * Turns zod issues into the one-line problems a user reads: `<json.path>: expected <what>, found <what>`,
 * with the value found looked up in the raw input and a "did you mean" for misspelt keys.
 */
import { z } from 'zod';

type Key = PropertyKey;

/** `params.levels`, `risk`, `list[2]`, `["odd key"]`; `(root)` for the document itself. */
export function formatPath(path: readonly Key[]): string {
  if (path.length === 0) return '(root)';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === '' ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** A short description of a value as found in a JSON document. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return 'an object';
}

/** Optimal-string-alignment distance: a swapped pair of letters (spacingPtc) counts as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The allowed key closest to `key`, when it is close enough to be a plausible typo. */
export function didYouMean(key: string, allowed: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(key.length / 3)) ? best : undefined;
}

/** The value at a JSON path (undefined where the path leaves the data). */
export function valueAt(root: unknown, path: readonly Key[]): unknown {
  let v = root;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<Key, unknown>)[key];
  }
  return v;
}

/** The schema an input value at `path` is checked by, seen through optional/default/pipe wrappers. */
function schemaAt(schema: z.ZodType, path: readonly Key[]): z.ZodType | undefined {
  let s: z.ZodType | undefined = schema;
  for (let i = 0; ; i++) {
    for (;;) {
      const def: Record<string, unknown> = s.def as unknown as Record<string, unknown>;
      if (s instanceof z.ZodPipe) s = s.in as z.ZodType;
      else if (def.innerType instanceof z.ZodType) s = def.innerType;
      else break;
    }
    if (i === path.length) return s;
    const key = path[i];
    if (s instanceof z.ZodObject && typeof key === 'string') s = s.shape[key] as z.ZodType | undefined;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return undefined;
    if (s === undefined) return undefined;
  }
}

function withArticle(type: string): string {
  if (type === 'null' || type === 'undefined') return type;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function bound(issue: { origin: string; inclusive?: boolean }, limit: unknown, more: boolean): string {
  const op = more ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
  const n = typeof limit === 'bigint' || typeof limit === 'number' ? String(limit) : describeValue(limit);
  switch (issue.origin) {
    case 'number':
    case 'int':
    case 'bigint':
      return `a number ${op} ${n}`;
    case 'string':
      return `text of length ${op} ${n}`;
    case 'array':
    case 'set':
      return `a list of length ${op} ${n}`;
    default:
      return `${issue.origin} ${op} ${n}`;
  }
}

/** What was expected, for one issue (without the path and the value found). */
function expectation(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return withArticle(issue.expected);
    case 'invalid_format':
      // A schema's own message (e.g. 'letters, digits, _ . -') says it best; zod's default ones start with "Invalid".
      if (!issue.message.startsWith('Invalid')) return issue.message;
      return issue.format === 'regex' && 'pattern' in issue
        ? `text matching ${String(issue.pattern)}`
        : `a valid ${issue.format}`;
    case 'too_small':
      return bound(issue, issue.minimum, true);
    case 'too_big':
      return bound(issue, issue.maximum, false);
    case 'invalid_value':
      return issue.values.length === 1
        ? describeValue(issue.values[0])
        : `one of ${issue.values.map((v) => describeValue(v)).join(', ')}`;
    case 'invalid_union': {
      const alternatives = issue.errors.map((branch) =>
        branch.length === 1 && branch[0]!.path.length === 0 ? expectation(branch[0]!) : undefined,
      );
      return alternatives.every((a) => a !== undefined) && alternatives.length > 0
        ? alternatives.join(' or ')
        : 'a value of one of the accepted forms';
    }
    case 'not_multiple_of':
      return `a multiple of ${String(issue.divisor)}`;
    default:
      return issue.message;
  }
}

/**
 * One line per problem in `issues` (from `schema.safeParse(input)`), each prefixed by `where` (the file)
 * and by the JSON path, with `at` the path of `input` inside the document.
 */
export function issueLines(
  where: string,
  issues: readonly z.core.$ZodIssue[],
  input: unknown,
  schema: z.ZodType,
  at: readonly Key[] = [],
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    const path = [...at, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const target = schemaAt(schema, issue.path);
      const allowed = target instanceof z.ZodObject ? Object.keys(target.shape) : [];
      for (const key of issue.keys) {
        const guess = didYouMean(key, allowed);
        const hint = guess ? `did you mean ${guess}?` : `allowed: ${allowed.join(', ') || 'none'}`;
        lines.push(`${where}: ${formatPath([...path, key])}: unknown key (${hint})`);
      }
      continue;
    }
    // Custom checks (refinements, the decimal parser) already say "expected …, found …".
    const text =
      issue.code === 'custom' && issue.message.startsWith('expected')
        ? issue.message
        : `expected ${expectation(issue)}, found ${describeValue(valueAt(input, issue.path))}`;
    lines.push(`${where}: ${formatPath(path)}: ${text}`);
  }
  return lines;
}
