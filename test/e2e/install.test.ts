/**
 * The package's `bot` command as the README installs it (`npm install -g` of the checkout: no build step), and
 * the compiled build the image runs, each loading a TypeScript strategy module from another folder on this
 * Node (20.19+ here; the container test does the same on Node 22).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonEnv, everyOrderFile, ROOT, TEST_STRATEGIES } from './daemon-process.js';

const dir = mkdtempSync(join(tmpdir(), 'e2e-install-'));
// The build must sit inside the project, where it finds package.json and node_modules, as dist/ does.
mkdirSync(join(ROOT, '.tmp'), { recursive: true });
const build = mkdtempSync(join(ROOT, '.tmp', 'build-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(build, { recursive: true, force: true });
});

const config = join(dir, 'config');
mkdirSync(config);
writeFileSync(join(config, 'x.json'), everyOrderFile('x'));

function files(folder: string): string[] {
  return readdirSync(folder, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(folder, f));
}

describe('installing and running the bot', () => {
  it('the bin works after npm install -g, from any folder, and loads .ts strategies', () => {
    const prefix = join(dir, 'prefix');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', ROOT], {
      encoding: 'utf8',
    });
    expect(install.status, install.stderr).toBe(0);
    const bot = (...args: string[]) =>
      spawnSync(join(prefix, 'bin', 'bot'), args, { cwd: dir, env: daemonEnv({}), encoding: 'utf8' });
    expect(bot('--version').stdout).toMatch(/^spot-bot \d+\.\d+\.\d+/);
    const checked = bot('check-config', '--strategies', TEST_STRATEGIES, config);
    expect(checked.stderr).toBe('');
    expect(checked.stdout).toContain('ok: ');
    expect(checked.status).toBe(0);
  });

  it('the compiled build (plain node, no loader) loads .ts strategies too', () => {
    // Transpiled file by file as tsc emits them (the type check is the typecheck script's job).
    for (const file of [...files(join(ROOT, 'src')), ...files(join(ROOT, 'strategies'))]) {
      const out = join(build, relative(ROOT, file)).replace(/\.ts$/, '.js');
      mkdirSync(dirname(out), { recursive: true });
      const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true },
        fileName: file,
      });
      writeFileSync(out, outputText);
    }
    const checked = spawnSync(
      process.execPath,
      [join(build, 'src/cli.js'), 'check-config', '--strategies', TEST_STRATEGIES, config],
      { cwd: dir, env: daemonEnv({}), encoding: 'utf8' },
    );
    expect(checked.stderr).toBe('');
    expect(checked.stdout).toContain('ok: ');
    expect(checked.status).toBe(0);
  });
});
