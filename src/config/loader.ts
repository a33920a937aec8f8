/**
 * Loads the strategy files (one bot instance per pair each) and checks everything that can be checked without the
 * network: the file's own schema, the cron schedule, the strategy module and its params, unique names.
 * Every problem of every file is collected, so one run of check-config shows all there is to fix.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { cronProblem } from '../clocks/cron-schedule.js';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import type { StrategyDefinition } from '../strategy/api.js';
import { candleNeedsProblems } from '../strategy/candle-needs.js';
import { loadStrategy, StrategyLoadError } from '../strategy/loader.js';
import { findJsonSyntaxError } from './json-syntax.js';
import { describeValue, issueLines } from './problems.js';
import { definitionExitProblems, fileInstances, type InstanceConfig, StrategyFileSchema } from './strategy-file.js';

/** One validated bot instance: its file, its settings (the file's, on one pair), the strategy module and the parsed params. */
export interface StrategyInstance {
  file: string;
  config: InstanceConfig;
  definition: StrategyDefinition;
  params: unknown;
}

export interface LoadOptions {
  /** Where strategy modules live (default: the project's strategies/). */
  strategiesDir?: string;
}

type Loaded = { definition: StrategyDefinition } | { problems: readonly string[] };

/**
 * A strategy's params are checked strictly even when the module declared a plain z.object: a misspelt key
 * must be an error, not a silent fall-back to the default.
 */
export function strictParams(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) return schema.strict();
  if (schema instanceof z.ZodPipe && schema.in instanceof z.ZodObject) {
    return z.pipe(schema.in.strict(), schema.out as z.ZodType<unknown, Record<string, unknown>>);
  }
  return schema;
}

async function configFiles(sources: readonly string[], problems: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const source of sources) {
    let isDir: boolean;
    try {
      isDir = (await stat(source)).isDirectory();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      problems.push(`${source}: expected a strategy file or a directory of them, found none (${code})`);
      continue;
    }
    if (!isDir) {
      files.push(source);
      continue;
    }
    const names = (await readdir(source)).filter((n) => n.endsWith('.json')).sort();
    if (names.length === 0) problems.push(`${source}: expected at least one *.json strategy file, found none`);
    files.push(...names.map((n) => join(source, n)));
  }
  return files;
}

function parseJson(file: string, text: string, problems: string[]): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const where = findJsonSyntaxError(text);
    problems.push(
      where
        ? `${file}: line ${where.line}, column ${where.column}: expected ${where.expected}, found ${where.found}`
        : `${file}: expected valid JSON, found ${(err as Error).message}`,
    );
    return undefined;
  }
}

function scheduleProblems(file: string, schedule: unknown, field = 'schedule'): string[] {
  if (typeof schedule !== 'string' || schedule.trim() === '') return []; // the file schema reports it
  const why = cronProblem(schedule);
  if (why === undefined) return [];
  return [
    `${file}: ${field}: expected a cron expression ([second] minute hour day month weekday), found ${describeValue(schedule)} (${why})`,
  ];
}

/**
 * Validate one file; `problems` receives every line. Returns the instance name as written (for the
 * uniqueness check, even when other fields are wrong) and the instance when the file has no problem.
 */
async function checkFile(
  file: string,
  strategy: (name: string) => Promise<Loaded>,
  problems: string[],
): Promise<{ name?: string; instances?: StrategyInstance[] }> {
  const before = problems.length;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    problems.push(`${file}: expected a readable file, found ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    return {};
  }
  const raw = parseJson(file, text.replace(/^\uFEFF/, ''), problems);
  if (raw === undefined) return {};

  const parsed = StrategyFileSchema.safeParse(raw);
  if (!parsed.success) problems.push(...issueLines(file, parsed.error.issues, raw, StrategyFileSchema));
  const fields = (raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
  problems.push(...scheduleProblems(file, fields.schedule));
  const pairlist = fields.pairlist as Record<string, unknown> | undefined;
  if (pairlist !== null && typeof pairlist === 'object')
    problems.push(...scheduleProblems(file, pairlist.refresh, 'pairlist.refresh'));

  // The module and its params are checked even when other fields are wrong: all problems at once.
  let definition: StrategyDefinition | undefined;
  let params: unknown;
  if (StrategyFileSchema.shape.strategy.safeParse(fields.strategy).success) {
    const loaded = await strategy(fields.strategy as string);
    if ('problems' in loaded) {
      problems.push(...loaded.problems.map((p) => `${file}: strategy: ${p}`));
    } else {
      definition = loaded.definition;
      problems.push(...definitionExitProblems(`${file}: strategy ${definition.name}`, definition));
      const input = fields.params ?? {};
      if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
        const schema = strictParams(definition.params);
        const result = schema.safeParse(input);
        if (result.success) {
          params = result.data;
          const needs = candleNeedsProblems(definition, params);
          problems.push(...needs.map((p) => `${file}: strategy ${definition!.name}: ${p}`));
        } else problems.push(...issueLines(file, result.error.issues, input, schema, ['params']));
      }
    }
  }
  const name = typeof fields.name === 'string' ? fields.name : undefined;
  if (problems.length > before || !parsed.success || definition === undefined) return { name };
  return { name, instances: fileInstances(parsed.data).map((config) => ({ file, config, definition, params })) };
}

/**
 * Load and validate strategy files: `source` is a file, a directory (its *.json files) or a list of either;
 * default config/. Throws ConfigError listing every problem, one line each.
 */
export async function loadStrategyFiles(
  source: string | readonly string[] = 'config',
  options: LoadOptions = {},
): Promise<StrategyInstance[]> {
  const problems: string[] = [];
  const files = await configFiles(typeof source === 'string' ? [source] : source, problems);

  const modules = new Map<string, Promise<Loaded>>();
  const strategy = (name: string): Promise<Loaded> => {
    let loaded = modules.get(name);
    if (!loaded) {
      loaded = loadStrategy(name, options.strategiesDir).then(
        (definition): Loaded => ({ definition }),
        (err: unknown): Loaded => {
          if (err instanceof StrategyLoadError) return { problems: err.problems };
          throw err;
        },
      );
      modules.set(name, loaded);
    }
    return loaded;
  };

  const instances: StrategyInstance[] = [];
  const owners = new Map<string, string>();
  for (const file of files) {
    const { name, instances: made } = await checkFile(file, strategy, problems);
    if (name === undefined) continue;
    const owner = owners.get(name);
    if (owner !== undefined) {
      problems.push(
        `${file}: name: expected an instance name unique across strategy files, found ${describeValue(name)} (also in ${owner})`,
      );
      continue;
    }
    owners.set(name, file);
    if (made) instances.push(...made);
  }
  if (problems.length > 0) throw new ConfigError(problems, { context: { files } });
  return instances;
}
