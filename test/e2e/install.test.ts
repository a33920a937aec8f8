/**
 * The package's `bot` command as the README installs it (`npm install -g` of the checkout: no build step; the
 * command makes the build it runs), loading a TypeScript strategy module from another folder on this Node
 * (20.19+ here; the container test does the same on Node 22). compiled-start.test.ts tests the build itself.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonEnv, everyOrderFile, ROOT, TEST_STRATEGIES } from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-install');

const config = join(dir, 'config');
mkdirSync(config);
writeFileSync(join(config, 'x.json'), everyOrderFile('x'));

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
});
