import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/flags.js';
import { didYouMean } from '../../src/config/problems.js';
import { BotError } from '../../src/errors.js';
import { daemonEnv, ROOT } from '../e2e/daemon-process.js';

function usageError(argv: string[]): string {
  try {
    parseFlags('backtest', argv, {
      config: { type: 'string' },
      data: { type: 'string' },
      'no-cancel': { type: 'boolean' },
    });
  } catch (err) {
    expect(err).toBeInstanceOf(BotError);
    return (err as BotError).message;
  }
  throw new Error('expected a usage error');
}

describe('did you mean', () => {
  it('names the closest valid flag for a typo or a swapped pair', () => {
    expect(usageError(['--confg', 'x'])).toBe('backtest: unknown flag --confg; did you mean --config?');
    expect(usageError(['--cnofig=x'])).toBe('backtest: unknown flag --cnofig; did you mean --config?');
    expect(usageError(['--no-cancle'])).toBe('backtest: unknown flag --no-cancle; did you mean --no-cancel?');
    expect(usageError(['--hepl'])).toBe('backtest: unknown flag --hepl; did you mean --help?');
  });

  it('lists the flags when nothing is close, and keeps other parse errors as they are', () => {
    expect(usageError(['--verbose'])).toBe(
      'backtest: unknown flag --verbose (flags: --config, --data, --no-cancel, --help)',
    );
    expect(usageError(['--config'])).toMatch(/^backtest: Option '--config <value>' argument missing/);
  });

  it('suggests nothing for a word far from every name', () => {
    expect(didYouMean('xyz', ['run', 'status'])).toBeUndefined();
    expect(didYouMean('stauts', ['run', 'status', 'sim'])).toBe('status');
  });
});

describe('the command line', () => {
  const bot = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      cwd: ROOT,
      env: daemonEnv({}),
      encoding: 'utf8',
    });

  it('--version and -V print the package version and the commit', () => {
    for (const flag of ['--version', '-V']) {
      const r = bot(flag);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^spot-bot \d+\.\d+\.\d+( \(commit [0-9a-f]{12}\))?\n$/);
    }
  });

  it('an unknown command names the closest one', () => {
    const r = bot('stauts');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^bot: unknown command 'stauts'; did you mean 'status'\?/);
  });

  it('environment errors are JSON lines when stdout is not a terminal, naming the variable', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'run'], {
      cwd: ROOT,
      env: daemonEnv({ MODE: 'lvie', EXCHANGE_TIMEOUT_MS: 'soon' }),
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => l.msg).sort()).toEqual([
      "EXCHANGE_TIMEOUT_MS: expected a positive integer, got 'soon'",
      "MODE: expected 'paper' or 'live', got 'lvie'",
    ]);
    expect(lines.every((l) => l.level === 50)).toBe(true);
  });
});
