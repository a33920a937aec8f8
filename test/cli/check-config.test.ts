import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOD_STRATEGY, REPO, tempProject, type TempProject } from '../config/temp-project.js';

let project: TempProject;
beforeAll(() => {
  project = tempProject();
  project.strategy('good.ts', GOOD_STRATEGY);
});
afterAll(() => project.remove());

interface Outcome {
  code: number;
  stdout: string[];
  stderr: string[];
}

/** Run `tsx src/cli.ts check-config …` from the repository, without network or API keys in the env. */
function checkConfig(...args: string[]): Promise<Outcome> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME };
  return new Promise((resolve) => {
    execFile(
      join(REPO, 'node_modules/.bin/tsx'),
      ['src/cli.ts', 'check-config', ...args],
      { cwd: REPO, env },
      (err, stdout, stderr) => {
        const lines = (text: string) => text.split('\n').filter((l) => l !== '');
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout: lines(stdout), stderr: lines(stderr) });
      },
    );
  });
}

describe.concurrent('bot check-config', () => {
  it('prints one ok line per instance and exits 0', async () => {
    const a = project.config('a.json', { name: 'alpha', strategy: 'good', symbol: 'BTCUSDT' });
    const b = project.config('b.json', { name: 'beta', strategy: 'good', symbol: 'ETHUSDT', enabled: false });
    const out = await checkConfig('--strategies', project.strategiesDir, a, b);
    expect(out).toEqual({
      code: 0,
      stdout: [`ok: ${a} (alpha → good on BTCUSDT)`, `ok: ${b} (beta → good on ETHUSDT) [disabled]`],
      stderr: [],
    });
  });

  it('validates the shipped config with the real strategies by default', async () => {
    const out = await checkConfig('config/grid-btcusdt.json');
    expect(out).toEqual({
      code: 0,
      stdout: ['ok: config/grid-btcusdt.json (grid-btcusdt → grid on BTCUSDT)'],
      stderr: [],
    });
  });

  it('shows the pairs a pairlist resolves to on recordings at a time, and why each other pair was left out', async () => {
    const file = project.config('listed.json', {
      name: 'rot',
      strategy: 'good',
      pairlist: { quote: 'USDT', top: 3, sortBy: 'volatility', exclude: ['BTCUSDT'] },
    });
    const data = ['--data', 'data/samples/2023-04'];
    const at = await checkConfig('--strategies', project.strategiesDir, ...data, '--at', '2023-04-14T07:30:00Z', file);
    expect(at).toEqual({
      code: 0,
      stdout: [
        `ok: ${file} (rot → good on the pairlist of USDT, refreshed 0 */30 * * * *)`,
        '  pairlist on data/samples/2023-04 at 2023-04-14T07:30:00.000Z: 3 pairs by 24-hour range % (top 3)',
        '      1. ADAUSDT  10.1502',
        '      2. ETHUSDT  10.1176',
        '      3. XRPUSDT  7.59565',
        '  left out:',
        '    BTCUSDT  excluded',
        '    SOLUSDT  ranked 4 by 24-hour range, outside top 3',
      ],
      stderr: [],
    });
    const offline = await checkConfig('--strategies', project.strategiesDir, file);
    expect(offline.stdout.at(-1)).toBe('  its pairs are chosen at run time: --data or --market shows them');
  });

  it('prints every problem on stderr, one per line, and exits 1', async () => {
    const bad = project.config('bad.json', {
      name: 'alpha',
      strategy: 'good',
      symbol: 'BTCUSDT',
      schedule: 'often',
      params: { spacingPtc: 1 },
    });
    const broken = project.config('broken.json', '{ "name": "x", }');
    const out = await checkConfig('--strategies', project.strategiesDir, bad, broken);
    expect(out.code).toBe(1);
    expect(out.stdout).toEqual([]);
    expect(out.stderr).toEqual([
      `${bad}: schedule: expected a cron expression ([second] minute hour day month weekday), found "often" (expected 5 or 6 fields but got 1)`,
      `${bad}: params.spacingPtc: unknown key (did you mean spacingPct?)`,
      `${broken}: line 1, column 16: expected a property name in double quotes, found '}'`,
    ]);
  });

  it('rejects an unknown flag with exit 2 and prints help with exit 0', async () => {
    const wrong = await checkConfig('--strategy', 'x');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr[0]).toMatch(/^check-config: .*--strategy/);
    const help = await checkConfig('--help');
    expect(help.code).toBe(0);
    expect(help.stdout[0]).toBe(
      'usage: bot check-config [--strategies DIR] [--data RECORDING[,RECORDING…]] [--at TIME] [--market URL] [file|dir …]',
    );
  });
});
