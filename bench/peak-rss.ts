/**
 * Peak RSS of `bot backtest` in child processes, next to its baselines in the same rounds (bench:backtest's
 * part 4): the grid over a recording through bin/bot.js (the compiled build, as a user runs it), cold (the
 * recording scanned, the column cache written) and warm (from the cache), and two floors: a bare node process,
 * and one that loads the same columns from the cache and does nothing else.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * Peak RSS (MB) of a node process with these arguments, as it reports it on exit: VmHWM from /proc/self/status
 * (getrusage's ru_maxrss survives exec on Linux, so a child spawned by a large process would report the
 * parent's size), getrusage's elsewhere.
 */
function peakRss(args: readonly string[], env: NodeJS.ProcessEnv = {}): number {
  const report =
    "import { readFileSync } from 'node:fs'; process.on('exit', () => { let kb = process.resourceUsage().maxRSS;" +
    " try { kb = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}" +
    ' process.stderr.write(`\\nmaxrss ${kb}\\n`); });';
  const child = spawnSync(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(report)}`, ...args],
    {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    },
  );
  const match = /maxrss (\d+)/.exec(child.stderr);
  if (child.status !== 0 || !match) throw new Error(`${args.join(' ')} failed (${child.status}): ${child.stderr}`);
  return Number(match[1]) / 1024;
}

/** Three rounds, each: bare node, the backtest cold, the columns alone, the backtest warm. */
export function peakRssRuns(file: string, config: string, dir: string, label: string, rounds = 3): void {
  // The build brought up to date first (bin/bot.js makes it on demand), so no run pays for it.
  execFileSync(process.execPath, ['bin/bot.js', '--version'], { stdio: 'ignore' });
  const loadOnly =
    `const { loadTicks } = await import(${JSON.stringify(`${process.cwd()}/dist/src/backtest/tick-data.js`)});` +
    `await loadTicks([${JSON.stringify(file)}], { cacheDir: process.env.COLUMN_CACHE_DIR });`;
  const runs: Record<'bare' | 'columns' | 'cold' | 'warm', number[]> = { bare: [], columns: [], cold: [], warm: [] };
  for (let r = 0; r < rounds; r++) {
    const cache = join(dir, `rss-cache-${r}`);
    const backtest = ['bin/bot.js', 'backtest', '--config', config, '--data', file, '--out', join(dir, `rss-${r}`)];
    runs.bare.push(peakRss(['-e', '0']));
    runs.cold.push(peakRss([...backtest, '--force'], { COLUMN_CACHE_DIR: cache }));
    runs.columns.push(peakRss(['--input-type=module', '-e', loadOnly], { COLUMN_CACHE_DIR: cache }));
    runs.warm.push(peakRss([...backtest, '--force'], { COLUMN_CACHE_DIR: cache }));
  }
  const line = (what: string, xs: number[]) =>
    console.log(
      `    ${what.padEnd(46)} ${Math.min(...xs).toFixed(0)} to ${Math.max(...xs).toFixed(0)} MB ` +
        `(${xs.map((x) => x.toFixed(0)).join(', ')})`,
    );
  console.log(`  peak RSS, ${label}, ${rounds} rounds alternating (the issue aims under 150 MB):`);
  line('bot backtest, grid, cold (scan, write the cache)', runs.cold);
  line('bot backtest, grid, warm (from the cache)', runs.warm);
  line('baseline: node loading the columns alone', runs.columns);
  line('baseline: a bare node process', runs.bare);
}
