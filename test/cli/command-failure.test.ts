/**
 * The one rule the job-running commands (backtest, hyperopt, check-strategy, import-candles, data export, worker,
 * record, sim) report a failure by: the lines on stderr and the exit status.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { commandFailure, type FailureStyle } from '../../src/cli/command-failure.js';
import { BotError, ConfigError } from '../../src/errors.js';

afterEach(() => vi.restoreAllMocks());

/** The exit status and what went to stderr, a line a call. */
function failed(command: string, err: unknown, style?: FailureStyle): { status: number; lines: string[] } {
  const lines: string[] = [];
  vi.spyOn(console, 'error').mockImplementation((line: string) => void lines.push(line));
  return { status: commandFailure(command, err, style), lines };
}

describe('a command that failed', () => {
  it('lists a configuration error one problem a line, under its name, and exits 1', () => {
    const err = new ConfigError([
      'config/a.json: risk.maxPosition: expected a number',
      'config/b.json: symbol: missing',
    ]);
    expect(failed('backtest', err)).toEqual({
      status: 1,
      lines: [
        'backtest: config/a.json: risk.maxPosition: expected a number',
        'backtest: config/b.json: symbol: missing',
      ],
    });
  });

  it('names itself once, also over a message named for the command it shares inputs with; exit 2 on usage', () => {
    const usage = new BotError('E_USAGE', 'backtest: --from must be before --to');
    expect(failed('backtest', usage)).toEqual({ status: 2, lines: ['backtest: --from must be before --to'] });
    expect(failed('hyperopt', usage, { alsoNamed: 'backtest' })).toEqual({
      status: 2,
      lines: ['hyperopt: --from must be before --to'],
    });
    const data = new BotError('E_RECORDING', 'data/x.jsonl.gz:3: not JSON');
    expect(failed('worker', data)).toEqual({ status: 1, lines: ['worker: data/x.jsonl.gz:3: not JSON'] });
  });

  it('prints the usage after a usage error where the command has one to show', () => {
    const usage = new BotError('E_USAGE', 'data export: --format is required (csv, arrow, parquet)');
    expect(failed('data export', usage, { usageHelp: 'usage: bot data export …' })).toEqual({
      status: 2,
      lines: ['data export: --format is required (csv, arrow, parquet)\n\nusage: bot data export …'],
    });
  });

  it('throws a failure it did not raise (a bug, for its stack); a service reports it as a line with its code', () => {
    const bug = new TypeError('x is undefined');
    expect(() => failed('import-candles', bug)).toThrow(bug);
    expect(failed('record', bug, { service: true })).toEqual({
      status: 1,
      lines: ['record: E_UNEXPECTED: x is undefined'],
    });
    const usage = new BotError('E_USAGE', '--random-walk does not take --data');
    expect(failed('sim', usage, { service: true })).toEqual({
      status: 2,
      lines: ['sim: E_USAGE: --random-walk does not take --data'],
    });
  });
});
