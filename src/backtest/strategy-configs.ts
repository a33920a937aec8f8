/**
 * Strategy files for backtests: loaded and checked by the same loader the daemon uses, kept with their raw
 * JSON and sha256 (for the summary, and so a sweep can apply overrides and check the result again with the
 * same schemas). A worker thread rebuilds its instances from these sources.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { loadStrategyFiles, strictParams } from '../config/loader.js';
import { issueLines, valueAt } from '../config/problems.js';
import {
  definitionExitProblems,
  expandPairLists,
  fileInstances,
  hasPairListTemplate,
  StrategyFileSchema,
} from '../config/strategy-file.js';
import { recordedSymbols } from '../record/recording-reader.js';
import { BotError, ConfigError } from '../errors.js';
import type { InstanceSpec } from '../engine/instance-runner.js';
import type { ExitRulesDecl } from '../strategy/api.js';
import { loadStrategy, shown, strategySourceFile } from '../strategy/loader.js';
import { warmUpMs, watchedSymbols } from '../strategy/candle-needs.js';

/** A strategy file as a run used it (summary.json's `configs`). */
export interface ConfigInput {
  file: string;
  sha256: string;
  /** The strategy module the file ran, and its sha256. */
  module: { file: string; sha256: string };
  name: string;
  strategy: string;
  /** The pairs it traded (one instance each). */
  symbols: string[];
  /** The strategy file as run (sweep overrides applied). */
  config: unknown;
}

/** A strategy file as read: what crosses to a worker thread (plain JSON). */
export interface ConfigSource {
  file: string;
  sha256: string;
  raw: Record<string, unknown>;
  /** Where its strategy module lives; undefined: the project's strategies/. */
  strategiesDir: string | undefined;
  /** The strategy module file it runs, and that file's sha256 (the code's version, for the records). */
  module: { file: string; sha256: string };
}

/**
 * Reads and validates strategy files (every problem of every file at once, as check-config does), their
 * strategy modules from `strategiesDir` (default: the project's strategies/).
 */
export async function readConfigs(
  files: readonly string[],
  strategiesDir?: string,
): Promise<{ sources: ConfigSource[]; instances: InstanceSpec[] }> {
  const instances = await loadStrategyFiles(files, { strategiesDir });
  const sources: ConfigSource[] = [];
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  for (const instance of instances) {
    if (sources.some((s) => s.file === instance.file)) continue; // a file of several pairs: read once
    const bytes = await readFile(instance.file);
    const module = await strategySourceFile(instance.config.strategy, strategiesDir);
    sources.push({
      file: instance.file,
      sha256: sha256(bytes),
      raw: JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, '')) as Record<string, unknown>,
      strategiesDir,
      module: { file: shown(module), sha256: sha256(await readFile(module)) },
    });
  }
  return { sources, instances };
}

/** The sections of a strategy file a key may name; a key naming none is under params. */
const SECTIONS = ['params', 'risk', 'portfolio', 'exits', 'protections'];

/**
 * Where a sweep key lands in a strategy file: `params.*`, `risk.*`, `portfolio.*`, `exits.*` (a ROI row: `exits.roi.60`) and
 * `protections.*` as written, anything else under params.
 */
export function overridePath(key: string): string[] {
  const parts = key.split('.');
  return SECTIONS.includes(parts[0] as string) ? parts : ['params', ...parts];
}

/** The place a key names, as one string: `levels` and `params.levels` are the same key. */
export function overrideKey(key: string): string {
  return overridePath(key).join('.');
}

/** An override value as the user typed it. */
export function overrideText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Overrides as the user typed them, `key=value` each, of `keys` (default: all of them, in order). */
export function overrideAssignments(
  overrides: Readonly<Record<string, unknown>>,
  keys: readonly string[] = Object.keys(overrides),
): string[] {
  return keys.map((k) => `${k}=${overrideText(overrides[k])}`);
}

/**
 * A sweep value given as text, typed like the value it replaces: text stays text (exact decimals), a number
 * becomes a number, a boolean a boolean; a key the file does not set takes a number or boolean when the text
 * reads as one.
 */
export function overrideValue(raw: Record<string, unknown>, key: string, text: string, flag = '--sweep'): unknown {
  const current = valueAt(raw, overridePath(key));
  if (typeof current === 'string') return text;
  const number = text.trim() === '' ? NaN : Number(text);
  if (typeof current === 'number') {
    if (!Number.isFinite(number)) throw new BotError('E_USAGE', `${flag} ${key}: expected numbers, found '${text}'`);
    return number;
  }
  if (typeof current === 'boolean' || text === 'true' || text === 'false') {
    if (text !== 'true' && text !== 'false')
      throw new BotError('E_USAGE', `${flag} ${key}: expected true or false, found '${text}'`);
    return text === 'true';
  }
  return Number.isFinite(number) ? number : text;
}

function withValue(raw: Record<string, unknown>, path: readonly string[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(raw);
  let node: Record<string, unknown> = copy;
  for (const p of path.slice(0, -1)) {
    const next = node[p];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
  return copy;
}

/**
 * A strategy file's JSON with overrides applied. A ROI row set on a file that declares no `roi` table starts
 * from the strategy's own table (`roi`): a file's table replaces the strategy's whole, and the other rows of
 * the table the instance runs with must stay.
 */
function applied(
  raw: Record<string, unknown>,
  overrides: Readonly<Record<string, unknown>>,
  roi: ExitRulesDecl['roi'],
): Record<string, unknown> {
  let out = raw;
  for (const [key, value] of Object.entries(overrides)) {
    const path = overridePath(key);
    if (path[0] === 'exits' && path[1] === 'roi' && path.length === 3 && roi !== undefined)
      if (valueAt(out, ['exits', 'roi']) === undefined) out = withValue(out, ['exits', 'roi'], { ...roi });
    out = withValue(out, path, value);
  }
  return out;
}

/**
 * The instances of a strategy file (one per pair) with overrides applied, checked by the loader's own schemas. A
 * pair list's file has one on each pair of `universe` (the data's symbols) it may choose; without one, its template.
 */
export async function instancesOf(
  source: ConfigSource,
  overrides: Readonly<Record<string, unknown>> = {},
  universe?: readonly string[],
): Promise<InstanceSpec[]> {
  // The file as read passed the loader (readConfigs), and no override names its strategy.
  const definition = await loadStrategy(String(source.raw.strategy), source.strategiesDir);
  const raw = applied(source.raw, overrides, definition.exits?.roi);
  const where =
    Object.keys(overrides).length === 0
      ? source.file
      : `${source.file} (with ${overrideAssignments(overrides).join(' ')})`;
  const parsed = StrategyFileSchema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(issueLines(where, parsed.error.issues, raw, StrategyFileSchema));
  const declared = definitionExitProblems(`${where}: strategy ${definition.name}`, definition);
  if (declared.length > 0) throw new ConfigError(declared);
  const schema = strictParams(definition.params);
  const params = schema.safeParse(raw.params ?? {});
  if (!params.success) throw new ConfigError(issueLines(where, params.error.issues, raw.params, schema, ['params']));
  return fileInstances(parsed.data, universe).map((config) => ({ config, definition, params: params.data }));
}

/**
 * The instances of a run over `--data` entries, each pair list's on every pair of the data it may choose (the list
 * is worked out on the data's own market watch as the run goes), and the symbols whose recordings it reads.
 */
export async function runInstances(
  instances: readonly InstanceSpec[],
  dataEntries: readonly string[],
): Promise<{ instances: InstanceSpec[]; symbols: string[] }> {
  let out = [...instances];
  if (hasPairListTemplate(out)) {
    out = expandPairLists(out, await recordedSymbols(dataEntries));
    const empty = instances.filter(
      (i) => i.config.pairlist !== undefined && !out.some((o) => o.config.group === i.config.group),
    );
    if (empty.length > 0)
      throw new BotError(
        'E_BACKTEST_DATA',
        `${empty.map((i) => i.config.group).join(', ')}: no recording in ${dataEntries.join(', ')} of a pair its pairlist may choose (quote ${empty.map((i) => i.config.pairlist?.quote).join(', ')})`,
      );
  }
  return { instances: out, symbols: watchedSymbols(out) };
}

/** A strategy file as a run used it: `instances` are the file's own (instancesOf). */
export function configInput(
  source: ConfigSource,
  instances: readonly InstanceSpec[],
  overrides: Readonly<Record<string, unknown>>,
): ConfigInput {
  const first = instances[0] as InstanceSpec;
  return {
    file: source.file,
    sha256: source.sha256,
    module: source.module,
    name: first.config.group ?? first.config.name,
    strategy: first.config.strategy,
    symbols: instances.map((i) => i.config.symbol),
    config: applied(source.raw, overrides, first.definition.exits?.roi),
  };
}

/**
 * Checks every combination of overrides against the strategy files' and strategies' schemas before any runs,
 * so that a value that does not fit (levels=0) fails at once, every such problem of every file listed, rather
 * than in a worker once the combinations before it have run. Returns the longest warm-up (warmUpMs) of the
 * instances they make: the data a run of all of them needs before its start.
 */
export async function checkCombinations(
  sources: readonly ConfigSource[],
  combos: readonly Readonly<Record<string, unknown>>[],
): Promise<number> {
  const problems = new Set<string>();
  let longest = 0;
  for (const combo of combos) {
    for (const source of sources) {
      try {
        longest = Math.max(longest, warmUpMs(await instancesOf(source, combo)));
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const problem of err.problems) problems.add(problem);
      }
    }
  }
  if (problems.size > 0) throw new ConfigError([...problems]);
  return longest;
}
