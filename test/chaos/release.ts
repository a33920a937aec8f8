/**
 * `npm run test:chaos -- [--kills N] [--ticks N] [--fuzz X] [--phase-ms N]`: the chaos suites at release
 * strength (default 1000 kills, a 1 000 000-tick soak, ten times the fuzz cases and the lying venue's
 * histories), where `npm test` runs bounded counts. Each suite prints its figures.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    kills: { type: 'string', default: '1000' },
    ticks: { type: 'string', default: '1000000' },
    fuzz: { type: 'string', default: '10' },
    'phase-ms': { type: 'string', default: '5000' },
    only: { type: 'string' },
  },
});

function positive(name: string, text: string): string {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`test:chaos: --${name} must be a positive number, got '${text}'`);
    process.exit(2);
  }
  return String(n);
}

const env = {
  ...process.env,
  CHAOS_KILLS: positive('kills', values.kills),
  SOAK_TICKS: positive('ticks', values.ticks),
  FUZZ_RUNS: positive('fuzz', values.fuzz),
  CHAOS_PHASE_MS: positive('phase-ms', values['phase-ms']),
};
console.log(
  `chaos suites: ${env.CHAOS_KILLS} kills, a ${env.SOAK_TICKS}-tick soak, fuzz ×${env.FUZZ_RUNS}, ` +
    `fault phases of ${env.CHAOS_PHASE_MS} ms`,
);
const vitest = join(fileURLToPath(new URL('../../', import.meta.url)), 'node_modules/vitest/vitest.mjs');
const target = values.only === undefined ? 'test/chaos' : `test/chaos/${values.only}`;
const child = spawn(process.execPath, [vitest, 'run', target, '--testTimeout=0'], { env, stdio: 'inherit' });
child.on('exit', (code) => process.exit(code ?? 1));
