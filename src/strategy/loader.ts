/**
 * Finds a strategy module by name in strategies/ and checks that its default export is what
 * defineStrategy returns, so that a broken plugin is a config error at start, not a crash on the first tick.
 */
import { readFileSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { register } from 'node:module';
import { basename, dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { BotError } from '../errors.js';
import type { StrategyDefinition } from './api.js';

/** strategies/ at the project root: two levels up from src/strategy/ and from dist/src/strategy/ alike. */
export const defaultStrategiesDir: string = fileURLToPath(new URL('../../strategies/', import.meta.url));

/** Under tsx the sources are .ts; a build in dist/ holds only .js, which plain node can load. */
const COMPILED = !import.meta.url.endsWith('.ts');
const EXTENSIONS = COMPILED ? ['.js', '.ts'] : ['.ts', '.js'];

let typeScriptHooks: Promise<void> | undefined;
let packageHooks: boolean = false;

/** The installation's root: two levels up from src/strategy/ and from a build's src/strategy/ alike. */
const INSTALLATION = new URL('../../', import.meta.url).href;

/**
 * Resolves `spot-bot/strategy` (and any `spot-bot/…`) and `zod` (and `zod/…`) imported by a module outside this
 * installation and outside any node_modules as this installation's own: a strategy folder anywhere
 * (STRATEGIES_DIR, a Docker volume), with or without spot-bot installed beside it, gets the very strategy API and
 * zod the bot checks it with, from the sources or a build alike. Strategy modules are ES modules: in a folder
 * without a package.json saying `"type": "module"` a .ts module would be CommonJS, so outside .ts modules load as
 * ES modules. Runs in Node's loader thread (module.register), so it is plain JavaScript.
 */
const PACKAGE_HOOKS = `
let installation, anchor, api;
export function initialize(data) { ({ installation, anchor, api } = data); }
const outside = (url) => url !== undefined && url.startsWith('file:') && !url.startsWith(installation) && !url.includes('/node_modules/');
export async function resolve(specifier, context, next) {
  if (outside(context.parentURL)) {
    if (specifier === 'spot-bot/strategy') return { url: api, shortCircuit: true };
    if (/^(spot-bot|zod)(\\/|$)/.test(specifier)) return next(specifier, { ...context, parentURL: anchor });
  }
  const resolved = await next(specifier, context);
  if (outside(resolved.url) && /\\.ts$/.test(resolved.url) && resolved.format !== 'module') return { ...resolved, format: 'module' };
  return resolved;
}`;

/** Registers PACKAGE_HOOKS once in this process, before the first strategy module from outside the installation. */
function packageResolutionFor(file: string): void {
  if (packageHooks || pathToFileURL(file).href.startsWith(INSTALLATION)) return;
  packageHooks = true;
  register(`data:text/javascript,${encodeURIComponent(PACKAGE_HOOKS)}`, {
    data: {
      installation: INSTALLATION,
      anchor: import.meta.url,
      api: new URL(`./api${COMPILED ? '.js' : '.ts'}`, import.meta.url).href,
    },
  });
}

/**
 * Lets a compiled build (plain node, no loader) import a TypeScript strategy module: tsx's hooks are
 * registered once, on the first .ts module, in this process. Under tsx or vitest there is nothing to do.
 */
function readyFor(file: string): Promise<void> {
  if (!COMPILED || !file.endsWith('.ts')) return Promise.resolve();
  typeScriptHooks ??= import('tsx/esm/api').then(({ register }) => {
    register();
  });
  return typeScriptHooks;
}

const ORDER_TYPES = ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'];
const HOOKS = ['onStart', 'onFill', 'onStop'] as const;

/** A strategy module that cannot be used; `problems` holds one line per thing wrong with it. */
export class StrategyLoadError extends BotError {
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[], cause?: unknown) {
    super('E_STRATEGY_MODULE', problems.map((p) => `${file}: ${p}`).join('\n'), { cause, context: { file } });
    this.problems = problems.map((p) => `${file}: ${p}`);
  }
}

/** A path as messages show it: relative to the working directory when inside it. */
export function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

/** What is wrong with a module's default export, measured against defineStrategy's result; empty when fine. */
export function strategyShapeProblems(value: unknown): string[] {
  if (value === undefined) return ['has no default export (expected `export default defineStrategy({...})`)'];
  if (value === null || typeof value !== 'object') {
    return [`default export: expected the object defineStrategy returns, found ${typeof value}`];
  }
  const def = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof def.name !== 'string' || def.name === '')
    problems.push('default export: name: expected a non-empty string');
  if (!(def.params instanceof z.ZodType)) problems.push('default export: params: expected a zod schema');
  if (typeof def.onTick !== 'function') problems.push('default export: onTick: expected a function');
  for (const hook of HOOKS) {
    if (def[hook] !== undefined && typeof def[hook] !== 'function') {
      problems.push(`default export: ${hook}: expected a function when present`);
    }
  }
  if (def.description !== undefined && typeof def.description !== 'string') {
    problems.push('default export: description: expected a string when present');
  }
  for (const flag of ['requiresCancel', 'idempotentTick'] as const) {
    if (def[flag] !== undefined && typeof def[flag] !== 'boolean') {
      problems.push(`default export: ${flag}: expected a boolean when present`);
    }
  }
  if (
    def.candles !== undefined &&
    typeof def.candles !== 'function' &&
    (typeof def.candles !== 'object' || def.candles === null)
  ) {
    problems.push(
      "default export: candles: expected an object such as { '5m': 200 } (or a function of the params) when present",
    );
  }
  // Their keys are checked against their schemas with the strategy file (config/strategy-file.ts).
  for (const field of ['exits', 'protections'])
    if (def[field] !== undefined && (def[field] === null || typeof def[field] !== 'object'))
      problems.push(`default export: ${field}: expected an object when present`);
  if (def.indicators !== undefined && typeof def.indicators !== 'function') {
    problems.push('default export: indicators: expected a function of the params when present');
  }
  if (def.orderTypes !== undefined) {
    const types: unknown = def.orderTypes;
    const valid =
      Array.isArray(types) &&
      types.length > 0 &&
      types.every((t) => typeof t === 'string' && ORDER_TYPES.includes(t)) &&
      new Set(types).size === types.length;
    if (!valid) {
      problems.push(
        `default export: orderTypes: expected a non-empty list of distinct ${ORDER_TYPES.join(', ')}, found ${JSON.stringify(types)}`,
      );
    }
  }
  return problems;
}

/**
 * The file of strategy `name` in `dir`: <name>.ts or <name>.js, the one loadStrategy loads. Throws
 * StrategyLoadError when there is none.
 */
export async function strategyModuleFile(name: string, dir: string = defaultStrategiesDir): Promise<string> {
  for (const candidate of EXTENSIONS.map((ext) => join(dir, `${name}${ext}`))) {
    if (await exists(candidate)) return candidate;
  }
  throw new StrategyLoadError(`${shown(dir)}/`, [
    `expected a strategy module ${EXTENSIONS.map((e) => name + e).join(' or ')}, found none`,
  ]);
}

/**
 * The source of strategy `name`'s module in `dir`, for what a run records of it (its path and sha256): a shipped
 * strategy run from the build (bin/build.js's dist/strategies/NAME.js) is its strategies/NAME.ts, as the build's
 * record (dist/sources.json) lists it, so a run from the build and one from the sources name the same file and
 * hash. Any other module (a folder of one's own, the image's compiled strategies) is its own source.
 */
export async function strategySourceFile(name: string, dir: string = defaultStrategiesDir): Promise<string> {
  const file = await strategyModuleFile(name, dir);
  if (!COMPILED || join(dirname(file), '/') !== defaultStrategiesDir) return file;
  const source = `strategies/${basename(file).replace(/\.js$/, '.ts')}`;
  try {
    const record = JSON.parse(readFileSync(new URL('../../sources.json', import.meta.url), 'utf8')) as {
      files?: Record<string, string>;
    };
    if (record.files?.[source] !== undefined) return fileURLToPath(new URL(`../../../${source}`, import.meta.url));
  } catch {
    // No record: not bin/build.js's build (the image's), whose modules are their own sources.
  }
  return file;
}

/**
 * Load strategies/<name>.ts (or .js) from `dir` and return its validated default export.
 * Throws StrategyLoadError naming the module file and what is missing.
 */
export async function loadStrategy(name: string, dir: string = defaultStrategiesDir): Promise<StrategyDefinition> {
  const file = await strategyModuleFile(name, dir);
  let module: Record<string, unknown>;
  try {
    await readyFor(file);
    packageResolutionFor(file);
    module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new StrategyLoadError(shown(file), [`cannot be loaded: ${reason}`], err);
  }
  const problems = strategyShapeProblems(module.default);
  if (problems.length > 0) throw new StrategyLoadError(shown(file), problems);
  return module.default as StrategyDefinition;
}
