/**
 * Probes of the lint's dependency rules (eslint.config.js): forbidden imports fed to ESLint must fail, at any
 * depth, static, re-exported, as a dynamic import() or an import type, and so must SQL outside the store
 * (better-sqlite3 imported, a database's prepare/exec/transaction called); the allowed ones beside them must pass,
 * so a rule that reports everything fails here too. The rules are the ones `npm run lint` runs.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

const { ALLOWED, dependencyRules } = (await import(pathToFileURL(join(ROOT, 'eslint.config.js')).href)) as {
  ALLOWED: Record<string, readonly string[]>;
  dependencyRules: Linter.Config;
};
const eslint = new ESLint({
  cwd: ROOT,
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, dependencyRules],
});

/** The dependency messages ESLint gives `code` as if it were the file at `path` (relative to the project). */
async function problems(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
  return result!.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

/** ESLint finds exactly one problem in `code` at `path`, and it reads as `pattern`. */
async function oneProblem(path: string, code: string, pattern: RegExp): Promise<void> {
  const found = await problems(path, code);
  expect(found).toHaveLength(1);
  expect(found[0]).toMatch(pattern);
}

describe('the dependency rules', () => {
  it.each([
    ['a nested folder', 'src/engine/deep/probe.ts', "import { ExchangeClient } from '../../exchange/client.js';"],
    ['a dynamic import()', 'src/engine/probe.ts', "export const c = () => import('../exchange/client.js');"],
    ['a re-export', 'src/engine/probe.ts', "export { ExchangeClient } from '../exchange/client.js';"],
    ['an import type', 'src/engine/probe.ts', "export type C = import('../exchange/client.js').ExchangeClient;"],
    ['config importing the engine', 'src/config/probe.ts', "import { Engine } from '../engine/engine.js';"],
    ['config importing notify', 'src/config/probe.ts', "import { NOTICE_KINDS } from '../notify/event-kinds.js';"],
    ['config importing the HTTP adapter', 'src/config/probe.ts', "import type { X } from '../exchange/client.js';"],
    ['ops importing the store', 'src/ops/probe.ts', "import { Store } from '../store/store.js';"],
    ['market importing anything', 'src/market/deep/probe.ts', "import { BotError } from '../../errors.js';"],
    ['the error base importing the store', 'src/errors.ts', "import { Store } from './store/store.js';"],
    ['the API importing the daemon', 'src/api/probe.ts', "import { Daemon } from '../app/daemon.js';"],
    ['the API reading the store', 'src/api/probe.ts', "import type { Store } from '../store/store.js';"],
    ['the API reading the status model', 'src/api/deep/probe.ts', "import '../../status/status-view.js';"],
    ['the API calling the engine', 'src/api/probe.ts', "const e = import('../engine/engine.js');"],
    ['the wire protocol importing the HTTP venue', 'src/wire/probe.ts', "import '../exchange/client.js';"],
    ['the simulated exchange importing the HTTP venue', 'src/sim/probe.ts', "import '../exchange/errors.js';"],
    ['the recordings importing the simulated exchange', 'src/record/probe.ts', "import '../sim/pair-market.js';"],
    ['the clocks importing config', 'src/clocks/probe.ts', "import '../config/env.js';"],
    ['the backtester importing the daemon', 'src/backtest/probe.ts', "import '../app/daemon-scheduling.js';"],
    ['the API importing the backtester', 'src/api/probe.ts', "import '../backtest/report-html.js';"],
    ['the daemon importing the CLI', 'src/app/probe.ts', "import '../cli/run.js';"],
    ['an adapter importing the operator layer', 'src/store/probe.ts', "import '../operator/operator.js';"],
    ['a strategy importing the engine', 'strategies/nested/probe.ts', "import '../../src/engine/engine.js';"],
    ['a strategy importing the loader', 'strategies/probe.ts', "const m = import('../src/strategy/loader.js');"],
  ])('fails on %s', (_what, path, code) =>
    oneProblem(path, code, /^house\/dependency-direction: .*(may not import|imports only)/),
  );

  it.each([
    [
      'a query on a store’s database',
      'src/backtest/probe.ts',
      "export const n = (s: any) => s.db.prepare('SELECT 1');",
    ],
    [
      'SQL run on a database it holds',
      'src/operator/deep/probe.ts',
      "export const f = (db: any) => db.exec('DELETE');",
    ],
    ['a transaction', 'src/app/probe.ts', 'export const t = (s: any) => s.db.transaction(() => 1);'],
    ['better-sqlite3 imported', 'src/api/probe.ts', "import Database from 'better-sqlite3';"],
    ['better-sqlite3 imported dynamically', 'src/cli/probe.ts', "export const m = () => import('better-sqlite3');"],
  ])('fails on SQL outside the store: %s', (_what, path, code) =>
    oneProblem(path, code, /^house\/sql-in-store: \w+\/: .*; SQL lives in store\/ only/),
  );

  it('names the rule a new folder lacks', async () => {
    expect(await problems('src/newfolder/probe.ts', "import '../market/decimal.js';")).toEqual([
      "house/dependency-direction: newfolder/ has no dependency rule: add its line to ALLOWED in eslint.config.js (design.md's rings)",
    ]);
  });

  it.each([
    ['the engine importing the ports, deep', 'src/engine/deep/probe.ts', "import '../../ports/venue.js';"],
    ['a dynamic import inside its folder', 'src/engine/probe.ts', "const m = import('./engine.js');"],
    ['config importing the strategy loader', 'src/config/probe.ts', "import '../strategy/loader.js';"],
    ['the app importing an adapter', 'src/app/probe.ts', "import '../exchange/client.js';"],
    ['the CLI importing the app', 'src/cli.ts', "import './app/daemon.js';"],
    ['a strategy importing the API', 'strategies/probe.ts', "import { z } from '../src/strategy/api.js';"],
    ['a strategy importing the package export', 'strategies/probe.ts', "import { z } from 'spot-bot/strategy';"],
    ['a computed import() (not resolvable)', 'src/strategy/probe.ts', 'export const load = (u: string) => import(u);'],
    [
      'the store itself',
      'src/store/probe.ts',
      "import Database from 'better-sqlite3'; export const d = new Database(':memory:').prepare('SELECT 1');",
    ],
    ['whether a store is open', 'src/venues/probe.ts', 'export const open = (s: any) => s.db.open;'],
    ['a regular expression’s exec', 'src/cli/probe.ts', "export const m = /a/.exec('a');"],
  ])('passes %s', async (_what, path, code) => {
    expect(await problems(path, code)).toEqual([]);
  });

  it('allows no circle: each folder sits below every folder that may import it', () => {
    // Peel off, round by round, the folders whose allowed imports are all peeled already; what is left is a circle.
    const placed = new Set<string>();
    let left = Object.keys(ALLOWED);
    for (;;) {
      const next = left.filter((area) => ALLOWED[area]!.every((to) => placed.has(to)));
      if (next.length === 0) break;
      for (const area of next) placed.add(area);
      left = left.filter((area) => !placed.has(area));
    }
    expect(left, 'folders allowed to import each other, directly or round a circle').toEqual([]);
  });

  it('names only folders that have a line of their own', () => {
    const unknown = Object.values(ALLOWED)
      .flat()
      .filter((to) => !(to in ALLOWED));
    expect(unknown).toEqual([]);
  });
});
