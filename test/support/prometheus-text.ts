/**
 * The Prometheus text exposition format as tests read it: each metric family's type (from `# TYPE`) and its
 * samples with their labels parsed exactly (escapes included), so a check on `bot_instance="a"` never matches
 * another label that merely ends the same way.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name to type (counter, gauge, histogram, summary, untyped). */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) {
      const [name = '', type = ''] = line.slice(7).split(' ');
      types.set(name, type);
      continue;
    }
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[2] ?? '';
    let at = 0;
    LABEL.lastIndex = 0;
    for (let l = LABEL.exec(body); l !== null; l = LABEL.exec(body)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      at = LABEL.lastIndex;
    }
    if (at < body.length) throw new Error(`bad labels: ${line}`);
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { types, samples };
}

/** The family a sample belongs to (a histogram's `_bucket`, `_sum` and `_count` are its family's). */
export function familyOf(exposition: Exposition, name: string): string | undefined {
  if (exposition.types.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return exposition.types.has(base) ? base : undefined;
}

/** The sum of the samples of `name` whose labels include every one given (exactly). */
export function sampleSum(text: string | Exposition, name: string, labels: Record<string, string> = {}): number {
  const exposition = typeof text === 'string' ? parseExposition(text) : text;
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
