/**
 * Are this checkout's backtest outputs byte-identical to another checkout's? Every shipped strategy file in config/
 * (the BTCUSDT ones on the 21-day sample, ema-trend-usdt on the April 2023 USDT pairs), scheduled and
 * `--every-tick`, run by each checkout's own `bot backtest` (bin/bot.js, its build made on demand) into a temporary
 * folder, each checkout with a column cache of its own; then every file of the two output folders and the two exit
 * codes compared (bench/output-comparison.ts). A speed change keeps all of them identical (issue 39). Prints a run
 * `identical`; `identical but for source hashes` when the outputs differ only in the recorded sha256 of source
 * files that differ between the checkouts (a strategy module or strategy file changed, each side's value that
 * file's hash in its checkout; the output folder's inputs hash with them when summary.json, which records every
 * input, differs in nothing else), with those files named; or `DIFFERENT`, with the changed sources, the files
 * that differ and the first line that differs once those hashes are masked. Exits 1 when any run differs or fails
 * (the first two verdicts count as identical), and the last line says how many were identical but for hashes.
 * `npm run bench:identical -- --against main [--only grid] [--synthetic] [--keep]` (--against: a checkout with its
 * node_modules, used as it is, or a commit, or a checkout without node_modules such as /work/main for its HEAD,
 * checked out in a temporary git worktree with this checkout's node_modules)
 * (--only: the configs whose name contains the word; --synthetic: also the grid on the 10x recording of
 * `npm run bench:backtest`, data/cache/bench/, when it has been generated; --keep: leave the output folders).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { compareOutputs, outputFiles } from './output-comparison.js';

const flag = (name: string): string | undefined => {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = process.argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name}: expected a value`);
  return value;
};
const against = flag('--against');
if (against === undefined) throw new Error('--against DIR|COMMIT: the checkout or commit to compare with (e.g. main)');
const here = process.cwd();
const work = mkdtempSync(join(tmpdir(), 'identical-outputs-'));

/**
 * The other side: a checkout with its node_modules, used as it is; else a commit (a checkout without node_modules,
 * such as /work/main, stands for its HEAD) checked out in a temporary git worktree with this checkout's node_modules.
 */
function otherSide(spec: string): { root: string; label: string; worktree?: string } {
  const dir = resolve(spec);
  if (existsSync(join(dir, 'bin', 'bot.js')) && existsSync(join(dir, 'node_modules'))) return { root: dir, label: dir };
  const git = (args: string[], cwd = here) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();
  const commit = existsSync(dir) ? git(['rev-parse', 'HEAD'], dir) : git(['rev-parse', '--verify', `${spec}^{commit}`]);
  const worktree = join(work, 'against');
  git(['worktree', 'add', '--detach', worktree, commit]);
  symlinkSync(join(here, 'node_modules'), join(worktree, 'node_modules'), 'dir');
  return { root: worktree, label: `${spec} (${commit.slice(0, 7)}, committed state)`, worktree };
}
const side = otherSide(against);
const other = side.root;
const only = flag('--only');
const keep = process.argv.includes('--keep');

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const USDT_PAIRS = 'data/samples/2023-04';
const SYNTHETIC = 'data/cache/bench/BTCUSDT-synthetic-x10.jsonl.gz';

interface Run {
  name: string;
  config: string;
  /** The recording, relative to this checkout (the other one is given its absolute path: the same bytes). */
  data: string;
  everyTick: boolean;
}

const configs = readdirSync('config')
  .filter((f) => f.endsWith('.json') && (only === undefined || f.includes(only)))
  .sort();
const runs: Run[] = configs.flatMap((file) =>
  [false, true].map((everyTick) => ({
    name: `${file.replace(/\.json$/, '')}${everyTick ? ' --every-tick' : ''}`,
    config: `config/${file}`,
    data: file.endsWith('-usdt.json') ? USDT_PAIRS : SAMPLE,
    everyTick,
  })),
);
if (process.argv.includes('--synthetic')) {
  if (!existsSync(SYNTHETIC)) throw new Error(`--synthetic: ${SYNTHETIC} not generated (npm run bench:backtest)`);
  runs.push({
    name: 'grid-btcusdt on the 10x recording',
    config: 'config/grid-btcusdt.json',
    data: SYNTHETIC,
    everyTick: false,
  });
}

/** One `bot backtest` in `root`; its exit code (1 is an instance that ended early: its output is still written). */
function backtest(root: string, run: Run, out: string, cache: string): Promise<number | null> {
  const args = ['bin/bot.js', 'backtest', '--config', run.config, '--data', resolve(here, run.data), '--out', out];
  if (run.everyTick) args.push('--every-tick');
  args.push('--force');
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--max-semi-space-size=2', ...args], {
      cwd: root,
      env: { ...process.env, COLUMN_CACHE_DIR: cache },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => {
      if (code !== 0 && code !== 1) process.stdout.write(`  ${root}: exit ${code}\n${stderr.slice(-2000)}\n`);
      done(code);
    });
  });
}

process.stdout.write(`${runs.length} runs, this checkout against ${side.label} (load ${loadavg()[0]!.toFixed(1)})\n`);
let bad = 0;
let sourcesOnly = 0;
try {
  for (const [i, run] of runs.entries()) {
    const [outHere, outThere] = [join(work, `${i}-here`), join(work, `${i}-there`)];
    const codeHere = await backtest(here, run, outHere, join(work, 'cache-here'));
    const codeThere = await backtest(other, run, outThere, join(work, 'cache-there'));
    const { sources, masked, differences } = compareOutputs(
      { out: outHere, root: here },
      { out: outThere, root: other },
    );
    if (codeHere !== codeThere) differences.unshift(`exit code ${codeHere} here, ${codeThere} there`);
    if (outputFiles(outHere).length === 0) differences.unshift('no output written');
    const verdict =
      differences.length > 0 ? 'DIFFERENT' : sources.length > 0 ? 'identical but for source hashes' : 'identical';
    if (differences.length > 0) bad++;
    else if (sources.length > 0) sourcesOnly++;
    process.stdout.write(`${verdict}  ${run.name}\n`);
    for (const s of sources)
      process.stdout.write(
        `    ${s.file} changed: sha256 ${s.here.slice(0, 12)}… here, ${s.there.slice(0, 12)}… there\n`,
      );
    if (masked.length > 0) process.stdout.write(`    differing only in those hashes: ${masked.join(', ')}\n`);
    for (const line of differences) process.stdout.write(`    ${line}\n`);
  }
} finally {
  if (side.worktree !== undefined) execFileSync('git', ['worktree', 'remove', '--force', side.worktree]);
  if (keep) process.stdout.write(`outputs kept in ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
}
const butFor = (what: string) => (sourcesOnly > 0 ? `, ${sourcesOnly} ${what} but for source hashes` : '');
process.stdout.write(
  bad === 0
    ? `all ${runs.length} identical${butFor('of them')}\n`
    : `${bad} of ${runs.length} differ${butFor('identical')} (load ${loadavg()[0]!.toFixed(1)})\n`,
);
process.exitCode = bad === 0 ? 0 : 1;
