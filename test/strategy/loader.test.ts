import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  defaultStrategiesDir,
  loadStrategy,
  StrategyLoadError,
  strategyShapeProblems,
} from '../../src/strategy/loader.js';
import { GOOD_STRATEGY, REPO, tempProject, type TempProject } from '../config/temp-project.js';

let project: TempProject;
beforeAll(() => {
  project = tempProject();
  project.strategy('good.ts', GOOD_STRATEGY);
  // What a build in dist/ holds: compiled .js only.
  project.strategy('built.js', GOOD_STRATEGY.replace("name: 'good'", "name: 'built'"));
  project.strategy('nameless.ts', `export default { params: 1 };\n`);
});
afterAll(() => project.remove());

async function loadError(name: string): Promise<StrategyLoadError> {
  const err: unknown = await loadStrategy(name, project.strategiesDir).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StrategyLoadError);
  return err as StrategyLoadError;
}

describe('loadStrategy', () => {
  it("finds the project's strategies/ by default and loads the grid", async () => {
    expect(defaultStrategiesDir.replace(/\/$/, '')).toBe(join(REPO, 'strategies'));
    const grid = await loadStrategy('grid');
    expect(grid.name).toBe('grid');
    expect(grid.params).toBeInstanceOf(z.ZodType);
    expect(typeof grid.onTick).toBe('function');
  });

  it('loads a .ts module, and a .js module when that is all there is (a build in dist/)', async () => {
    expect((await loadStrategy('good', project.strategiesDir)).name).toBe('good');
    expect((await loadStrategy('built', project.strategiesDir)).name).toBe('built');
  });

  it('names the module file and everything missing from the default export', async () => {
    const err = await loadError('nameless');
    const file = join(project.strategiesDir, 'nameless.ts');
    expect(err.code).toBe('E_STRATEGY_MODULE');
    expect(err.problems).toEqual([
      `${file}: default export: name: expected a non-empty string`,
      `${file}: default export: params: expected a zod schema`,
      `${file}: default export: onTick: expected a function`,
    ]);
  });

  it('says where it looked when there is no such module', async () => {
    const err = await loadError('absent');
    expect(err.message).toBe(
      `${project.strategiesDir}/: expected a strategy module absent.ts or absent.js, found none`,
    );
  });
});

describe('strategyShapeProblems', () => {
  const ok = { name: 'x', params: z.object({}), onTick: () => undefined };

  it('accepts what defineStrategy returns, with or without optional members', () => {
    expect(strategyShapeProblems(ok)).toEqual([]);
    expect(
      strategyShapeProblems({ ...ok, orderTypes: ['LIMIT', 'OCO'], requiresCancel: true, onFill: () => undefined }),
    ).toEqual([]);
  });

  it('rejects implausible orderTypes and mistyped optional members', () => {
    expect(strategyShapeProblems({ ...ok, orderTypes: [] })).toHaveLength(1);
    expect(strategyShapeProblems({ ...ok, orderTypes: ['LIMIT', 'LIMIT'] })).toHaveLength(1);
    expect(strategyShapeProblems({ ...ok, requiresCancel: 'yes', description: 3 })).toEqual([
      'default export: description: expected a string when present',
      'default export: requiresCancel: expected a boolean when present',
    ]);
    expect(strategyShapeProblems(() => undefined)).toEqual([
      'default export: expected the object defineStrategy returns, found function',
    ]);
  });
});
