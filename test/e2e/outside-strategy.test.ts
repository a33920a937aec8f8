/**
 * A strategy of one's own, outside the checkout, as a trader makes it: a clean clone (the files git would hand
 * out, beside the repository's node_modules as `npm ci` would install them), a folder elsewhere with its own
 * package.json that installs the clone as a dependency, `bot new-strategy` in it, its tests (`npm test`), then
 * check-config and a backtest loading it through STRATEGIES_DIR's flag. And the same module in a bare folder
 * (no package.json, no node_modules: a Docker volume), importing `zod` itself: the bot resolves
 * `spot-bot/strategy` and zod to its own. The container test does the same inside the image.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanClone } from '../support/clean-clone.js';
import { daemonEnv, ROOT } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const work = tempDir('e2e-outside');

const clone = join(work, 'spot-bot');
const mine = join(work, 'my-strategies');
const bare = join(work, 'volume');

function run(cwd: string, command: string, args: string[]) {
  const result = spawnSync(command, args, { cwd, env: daemonEnv({}), encoding: 'utf8' });
  return { status: result.status, out: `${result.stdout}${result.stderr}` };
}

describe('a strategy outside the checkout', () => {
  it(
    'is scaffolded, type-checked, tested, checked and backtested from its own folder in a clean clone',
    { timeout: 300_000 },
    () => {
      cleanClone(ROOT, clone);
      mkdirSync(mine);
      // As docs/strategies.md says: npm's own package.json (its test script a failing placeholder), an ES module.
      for (const step of [
        ['init', '-y'],
        ['pkg', 'set', 'type=module'],
      ]) {
        const npm = run(mine, 'npm', step);
        expect(npm.status, npm.out).toBe(0);
      }
      const install = run(mine, 'npm', ['install', '--save-dev', '--offline', '--no-audit', '--no-fund', clone]);
      expect(install.status, install.out).toBe(0);

      const made = run(mine, 'npx', ['--no-install', 'bot', 'new-strategy', 'my-trend']);
      expect(made.status, made.out).toBe(0);
      for (const file of ['my-trend.ts', 'my-trend.test.ts', 'config/my-trend-btcusdt.json', 'tsconfig.json'])
        expect(existsSync(join(mine, file)), file).toBe(true);
      expect(readFileSync(join(mine, 'my-trend.ts'), 'utf8')).toContain("from 'spot-bot/strategy'");
      const pkg = JSON.parse(readFileSync(join(mine, 'package.json'), 'utf8')) as { scripts: { test: string } };
      expect(pkg.scripts.test).toBe('node --import spot-bot/register --test *.test.ts');
      const again = run(mine, 'npx', ['--no-install', 'bot', 'new-strategy', 'my-trend']);
      expect(again.status).toBe(1);
      expect(again.out).toContain('not overwriting');

      // The folder type-checks as written (tsconfig.json from the scaffold; @types/node comes with spot-bot).
      const types = run(mine, process.execPath, [
        join(clone, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '-p',
        '.',
      ]);
      expect(types.out).toBe('');
      expect(types.status).toBe(0);

      const tests = run(mine, 'npm', ['test']);
      expect(tests.status, tests.out).toBe(0);
      expect(tests.out).toMatch(/# pass 3\n# fail 0/);

      const checked = run(mine, 'npx', ['--no-install', 'bot', 'check-config', '--strategies', '.', 'config']);
      expect(checked.out).toBe('ok: config/my-trend-btcusdt.json (my-trend-btcusdt → my-trend on BTCUSDT)\n');
      expect(checked.status).toBe(0);

      const out = join(work, 'backtest');
      const sample = join(clone, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
      const flags = ['--strategies', '.', '--config', 'config/my-trend-btcusdt.json', '--data', sample];
      const window = ['--from', '2023-03-08', '--to', '2023-03-11', '--out', out];
      const backtest = run(mine, 'npx', ['--no-install', 'bot', 'backtest', ...flags, ...window]);
      expect(backtest.status, backtest.out).toBe(0);
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
        instances: { name: string; status: string; counters: { fills: number } }[];
      };
      expect(summary.instances.map((i) => i.name)).toEqual(['my-trend-btcusdt']);
      expect(summary.instances[0]!.status).toBe('stopped');
      expect(summary.instances[0]!.counters.fills).toBeGreaterThan(0);
    },
  );

  it(
    'loads from a bare folder (no package.json, no node_modules), its own zod import included',
    { timeout: 120_000 },
    () => {
      mkdirSync(bare);
      const source = readFileSync(join(mine, 'my-trend.ts'), 'utf8');
      const own = source.replace(/ z, type StrategyContext \}/, ' type StrategyContext }');
      expect(own).not.toBe(source);
      writeFileSync(join(bare, 'my-trend.ts'), `import { z } from 'zod';\n${own}`);
      const bot = join(clone, 'bin', 'bot.js');
      const checked = run(work, process.execPath, [bot, 'check-config', '--strategies', bare, join(mine, 'config')]);
      expect(checked.out).toMatch(/^ok: .*my-trend-btcusdt\.json \(my-trend-btcusdt → my-trend on BTCUSDT\)\n$/);
      expect(checked.status).toBe(0);
      // A param the strategy's own schema refuses is reported: the bot validated it with that schema.
      const wrong = join(work, 'wrong.json');
      const file = JSON.parse(readFileSync(join(mine, 'config/my-trend-btcusdt.json'), 'utf8')) as {
        params: Record<string, unknown>;
      };
      writeFileSync(wrong, JSON.stringify({ ...file, params: { ...file.params, fast: 40 } }));
      const refused = run(work, process.execPath, [bot, 'check-config', '--strategies', bare, wrong]);
      expect(refused.status).toBe(1);
      expect(refused.out).toContain('params.fast: expected below slow');
    },
  );
});
