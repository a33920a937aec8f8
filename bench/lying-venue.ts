/**
 * `npm run bench:lying-venue [-- --runs 2000 --seed N]`: the lying venue's property test
 * (test/chaos/lying-venue.test.ts) at strength, on a new seed each time unless one is given, where `npm test`
 * runs 25 histories on seed 36. Prints the test's own figures (histories, steps, fills, refusals, the
 * invariants), then the wall time and the machine's load. A failure names its seed; `--seed` replays it.
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from '../test/e2e/daemon-process.js';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '2000' }, seed: { type: 'string' } },
});
const runs = Number(values.runs);
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(values.seed);
if (!(runs >= 1) || !Number.isInteger(seed)) {
  console.error('bench:lying-venue: --runs must be a positive number and --seed an integer');
  process.exit(2);
}
const env = { ...process.env, LYING_VENUE_RUNS: String(runs), LYING_VENUE_SEED: String(seed), FUZZ_RUNS: '1' };
const started = performance.now();
const vitest = join(ROOT, 'node_modules/vitest/vitest.mjs');
const child = spawn(process.execPath, [vitest, 'run', 'test/chaos/lying-venue.test.ts', '--testTimeout=0'], {
  cwd: ROOT,
  env,
  stdio: 'inherit',
});
child.on('exit', (code) => {
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(
    `bench:lying-venue: ${runs} histories on seed ${seed} in ${((performance.now() - started) / 1000).toFixed(0)} s ` +
      `(load average 1/5/15 min at the end: ${load})`,
  );
  process.exit(code ?? 1);
});
