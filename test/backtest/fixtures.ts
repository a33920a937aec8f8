/**
 * Shared inputs of the backtest tests: a grid strategy file in a temp dir, a two-day slice of the sample, and
 * the backtest command run in process with what it printed (test/support/command-output.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run as cli } from '../../src/cli/backtest.js';
import type { TempProject } from '../config/temp-project.js';
import { capture } from '../support/command-output.js';

export const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
export const FROM = '2023-03-09T00:00:00Z';
export const TO = '2023-03-11T00:00:00Z';

/** A grid tight enough to trade a lot over the slice (the banking-scare fall of March 9-10). */
export function gridConfig(dir: string, overrides: Record<string, unknown> = {}): string {
  const file = join(dir, 'grid-test.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'grid-test',
      strategy: 'grid',
      symbol: 'BTCUSDT',
      schedule: '*/5 * * * * *',
      params: { levels: 4, spacingPct: '0.4', quantity: '0.001', ...overrides },
      risk: { maxOrderNotional: '50', maxOpenOrders: 12, maxPosition: '0.01' },
    }),
  );
  return file;
}

/** The flags of a backtest of `config` over the two-day slice (FROM to `to`) into `out`, and `more`. */
export function sliceFlags(config: string, out: string, more: string[] = [], to = TO): string[] {
  return ['--config', config, '--data', SAMPLE, '--from', FROM, '--to', to, ...more, '--out', out];
}

/** `bot backtest ARGS` in process: its exit code and the lines it wrote to stdout and stderr. */
export function bot(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  return capture(cli, args);
}

/** Writes strategies/NAME.js and a strategy file for it (instance NAME-test on BTCUSDT); returns the file. */
export function userStrategy(
  project: TempProject,
  name: string,
  source: string,
  params: Record<string, unknown>,
): string {
  project.strategy(`${name}.js`, source);
  const file = { name: `${name}-test`, strategy: name, symbol: 'BTCUSDT', schedule: '*/5 * * * * *', params };
  return project.config(`${name}.json`, file);
}

/**
 * A strategy that never trades and, once the data's time passes `failAfterHours` after FROM, throws on every tick:
 * a run that fails only past a date (a walk-forward's test part, a held-out part).
 */
export const LATE_THROW = `
import { z } from 'zod';
export default {
  name: 'late-throw',
  params: z.object({ failAfterHours: z.number() }),
  onTick(ctx) {
    if (ctx.now() >= ${Date.parse(FROM)} + ctx.params.failAfterHours * 3600000) throw new Error('past my date');
  },
};
`;

/** A strategy that takes its worker down, by process.exit or by an exception no hook can catch. */
export const WRECK_STRATEGY = `
import { z } from 'zod';
export default {
  name: 'wreck',
  params: z.object({ how: z.enum(['none', 'exit', 'throw']) }),
  onTick(ctx) {
    if (ctx.params.how === 'exit') process.exit(0);
    if (ctx.params.how === 'throw') setTimeout(() => { throw new Error('thrown outside any hook'); }, 0);
  },
};
`;
