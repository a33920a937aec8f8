/**
 * Peak RSS of `bot backtest` in child processes, next to its baselines in the same rounds (bench:backtest's
 * part 4): the grid over a recording through bin/bot.js run as a user runs it (the executable: its shebang
 * starts node with the project's V8 flags, and it runs the compiled build), cold (the recording scanned, the
 * column cache written) and warm (from the cache), and two floors: a bare node process, and one that loads the
 * same columns from the cache and does nothing else. With --against DIR (another checkout, e.g. a worktree of
 * the previous commit), its bin/bot.js runs the backtest cold and warm in the same rounds, started the same way.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

/** A child's peak RSS (MB), its wall time from spawn to exit and its CPU time (user + system, every thread). */
interface Peak {
  mb: number;
  seconds: number;
  cpu: number;
}

/**
 * Peak RSS (MB) of a command (node, or an executable script whose shebang starts node), as node reports it on
 * exit (the report is loaded through NODE_OPTIONS, so a script's own node gets it): VmHWM from
 * /proc/self/status (getrusage's ru_maxrss survives exec on Linux, so a child spawned by a large process would
 * report the parent's size), getrusage's elsewhere.
 */
function peakRss([command, ...args]: readonly string[], env: NodeJS.ProcessEnv = {}): Peak {
  const report =
    "import { readFileSync } from 'node:fs'; process.on('exit', () => { let kb = process.resourceUsage().maxRSS;" +
    " try { kb = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}" +
    ' const cpu = process.cpuUsage(); process.stderr.write(`\\nmaxrss ${kb} cpu ${cpu.user + cpu.system}\\n`); });';
  const hook = `--import=data:text/javascript,${encodeURIComponent(report)}`;
  const t0 = performance.now();
  const child = spawnSync(command as string, args, {
    env: { ...process.env, ...env, NODE_OPTIONS: [process.env.NODE_OPTIONS, hook].filter(Boolean).join(' ') },
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const match = /maxrss (\d+) cpu (\d+)/.exec(child.stderr);
  if (child.status !== 0 || !match) throw new Error(`${args.join(' ')} failed (${child.status}): ${child.stderr}`);
  return { mb: Number(match[1]) / 1024, seconds: (performance.now() - t0) / 1000, cpu: Number(match[2]) / 1e6 };
}

/**
 * Three rounds, each: bare node, the backtest cold, the columns alone, the backtest warm (and through `node
 * bin/bot.js`, which does not get the shebang's flags, and over the same ticks in several files; the build in
 * `against` too when given). Each line gives the peak RSS of every round and, for the backtests, their wall time
 * from spawn to exit (ticks a second end to end) and CPU time.
 */
export interface PeakRssOptions {
  /** The recording, and the same ticks in several files (as a recorder's day files come), in time order. */
  file: string;
  parts: readonly string[];
  config: string;
  /** Where the runs write (their outputs and column caches). */
  dir: string;
  label: string;
  rounds?: number;
  /** Ticks in the recording, for ticks a second. */
  ticks?: number;
  /** Another checkout whose build runs in the same rounds. */
  against?: string;
}

export function peakRssRuns({ file, parts, config, dir, label, rounds = 3, ticks = 0, against }: PeakRssOptions): void {
  // The builds brought up to date first (bin/bot.js makes it on demand), so no run pays for it.
  const bots = [resolve('bin/bot.js'), ...(against === undefined ? [] : [join(resolve(against), 'bin/bot.js')])];
  for (const bot of bots) execFileSync(bot, ['--version'], { stdio: 'ignore' });
  const loadOnly =
    `const { loadTicks } = await import(${JSON.stringify(`${process.cwd()}/dist/src/backtest/tick-data.js`)});` +
    `await loadTicks([${JSON.stringify(file)}], { cacheDir: process.env.COLUMN_CACHE_DIR });`;
  const runs: Record<
    'bare' | 'columns' | 'cold' | 'warm' | 'plain' | 'parts' | 'againstCold' | 'against' | 'againstParts',
    Peak[]
  > = {
    bare: [],
    columns: [],
    cold: [],
    warm: [],
    plain: [],
    parts: [],
    againstCold: [],
    against: [],
    againstParts: [],
  };
  for (let r = 0; r < rounds; r++) {
    console.error(`  (peak RSS: round ${r + 1} of ${rounds}, ${against === undefined ? 7 : 11} processes)`);
    const cache = join(dir, `rss-cache-${r}`);
    const out = join(dir, `rss-${r}`);
    const data = resolve(file);
    const split = parts.map((p) => resolve(p)).join(',');
    const backtest = (bot: string, recordings = data) => [
      bot,
      'backtest',
      '--config',
      resolve(config),
      '--data',
      recordings,
      '--out',
      out,
      '--force',
    ];
    runs.bare.push(peakRss([process.execPath, '-e', '0']));
    runs.cold.push(peakRss(backtest(bots[0]!), { COLUMN_CACHE_DIR: cache }));
    runs.columns.push(peakRss([process.execPath, '--input-type=module', '-e', loadOnly], { COLUMN_CACHE_DIR: cache }));
    runs.warm.push(peakRss(backtest(bots[0]!), { COLUMN_CACHE_DIR: cache }));
    runs.plain.push(peakRss([process.execPath, ...backtest(bots[0]!)], { COLUMN_CACHE_DIR: cache }));
    peakRss(backtest(bots[0]!, split), { COLUMN_CACHE_DIR: cache }); // the parts' cache entries written first
    runs.parts.push(peakRss(backtest(bots[0]!, split), { COLUMN_CACHE_DIR: cache }));
    if (bots[1] !== undefined) {
      const own = { COLUMN_CACHE_DIR: `${cache}-against` };
      runs.againstCold.push(peakRss(backtest(bots[1]), own));
      runs.against.push(peakRss(backtest(bots[1]), own));
      peakRss(backtest(bots[1], split), own);
      runs.againstParts.push(peakRss(backtest(bots[1], split), own));
    }
  }
  const line = (what: string, xs: Peak[], timed = false) => {
    const mbs = xs.map((x) => x.mb);
    const list = (values: number[], digits: number) => values.map((v) => v.toFixed(digits)).join(', ');
    const wall = xs.map((x) => x.seconds);
    const cpu = xs.map((x) => x.cpu);
    const times = timed
      ? `; wall ${list(wall, 2)} s` +
        (ticks > 0 ? ` (${Math.round(ticks / Math.min(...wall)).toLocaleString('en-US')} ticks/s best)` : '') +
        `; CPU ${list(cpu, 2)} s`
      : '';
    console.log(
      `    ${what.padEnd(46)} ${Math.min(...mbs).toFixed(0)} to ${Math.max(...mbs).toFixed(0)} MB (${list(mbs, 0)})${times}`,
    );
  };
  console.log(`  peak RSS, ${label}, ${rounds} rounds alternating (the issue aims under 150 MB):`);
  line('bot backtest, grid, cold (scan, write the cache)', runs.cold, true);
  line('bot backtest, grid, warm (from the cache)', runs.warm, true);
  line('the same, node bin/bot.js (no shebang flags)', runs.plain, true);
  line(`the same ticks in ${parts.length} files, warm`, runs.parts, true);
  if (against !== undefined) {
    line(`the build in ${against}, cold`, runs.againstCold, true);
    line(`the build in ${against}, warm`, runs.against, true);
    line(`the build in ${against}, ${parts.length} files, warm`, runs.againstParts, true);
  }
  line('baseline: node loading the columns alone', runs.columns);
  line('baseline: a bare node process', runs.bare);
}
