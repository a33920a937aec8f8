/**
 * bench:backtest's comparison with backtrader (issue 39's goal: the CPU of a backtest of the shipped grid at most
 * 0.1 of backtrader's on the same candles). `bot backtest` of config/grid-btcusdt.json over the recording (a
 * child process run as a user runs it, the column cache warm) and bench/backtrader/grid.py (the same ladder in
 * backtrader, over the recording's one-minute candles written once as CSV beside it) alternate round by round;
 * each one's CPU seconds (user + system, start-up included) are taken, and the ratio of the medians is printed
 * against the goal, with the orders and fills of each so that the two are seen to do the same trading.
 *
 * backtrader is a Python package that this machine cannot install from PyPI: --backtrader DIR names a folder
 * that holds it (its `backtrader/` package, e.g. a checkout of its repository), put on python3's path. Without
 * it, --backtrader-cpu SECONDS takes backtrader's figure as an input (measured elsewhere on the same candles),
 * and the ratio is printed against that, saying so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { valueAt } from '../src/backtest/number-column.js';
import type { TickData } from '../src/backtest/tick-data.js';

const GRID_PY = new URL('./backtrader/grid.py', import.meta.url).pathname;
const GOAL = 0.1;

/**
 * The recording's one-minute candles as CSV (epoch seconds, open, high, low, close, volume), one line per
 * minute with ticks: open the minute's first price, close its last, high and low its extremes (a recording
 * imported from candles walks each candle's four prices within its minute, so these are the candles it was
 * made from). Written once beside the recording and kept.
 */
export function candlesCsv(data: TickData, recording: string): string {
  const file = recording.replace(/\.jsonl\.gz$/, '-1m.csv');
  if (existsSync(file)) return file;
  const { time, price } = data.columns;
  const lines: string[] = [];
  let minute = -1;
  let [o, h, l, c] = [0, 0, 0, 0];
  const flush = () => {
    if (minute >= 0) lines.push(`${minute * 60},${o},${h},${l},${c},0`);
  };
  for (let i = 0; i < data.length; i++) {
    if (data.columns.sym[i] !== 0) continue;
    const m = Math.floor(valueAt(time, i) / 60_000);
    const p = valueAt(price, i);
    if (m !== minute) {
      flush();
      minute = m;
      o = h = l = c = p;
    } else {
      h = Math.max(h, p);
      l = Math.min(l, p);
      c = p;
    }
  }
  flush();
  writeFileSync(`${file}.${process.pid}.tmp`, `${lines.join('\n')}\n`);
  renameSync(`${file}.${process.pid}.tmp`, file);
  return file;
}

interface Run {
  cpu: number;
  orders: number;
  fills: number;
}

/** `bot backtest` of the grid over the recording (the column cache warm), its CPU seconds from /usr/bin/time. */
function ours(recording: string, config: string, out: string, cache: string): Run {
  const times = join(out, '..', 'backtrader-time.txt');
  const run = spawnSync(
    '/usr/bin/time',
    [
      ...['-o', times, '-f', '%U %S', resolve('bin/bot.js'), 'backtest', '--config', config, '--data', recording],
      ...['--out', out, '--force'],
    ],
    { env: { ...process.env, COLUMN_CACHE_DIR: cache }, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (run.status !== 0) throw new Error(`bot backtest failed (${run.status}): ${run.stderr}`);
  const [user, system] = readFileSync(times, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const { metrics } = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
    metrics: { orders: number; fills: number };
  };
  return { cpu: user! + system!, orders: metrics.orders, fills: metrics.fills };
}

/** bench/backtrader/grid.py over the candles, its CPU seconds from /usr/bin/time (the interpreter's start included). */
function theirs(candles: string, backtrader: string, out: string): Run {
  const times = join(out, '..', 'backtrader-time.txt');
  const run = spawnSync('/usr/bin/time', ['-o', times, '-f', '%U %S', 'python3', GRID_PY, candles], {
    env: { ...process.env, PYTHONPATH: backtrader },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`bench/backtrader/grid.py failed (${run.status}): ${run.stderr}`);
  const [user, system] = readFileSync(times, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as { orders: number; fills: number };
  return { cpu: user! + system!, orders: result.orders, fills: result.fills };
}

export interface AgainstBacktraderOptions {
  data: TickData;
  recording: string;
  config: string;
  /** A folder for the runs' outputs and column cache. */
  dir: string;
  label: string;
  rounds: number;
  /** A folder holding backtrader's package, or undefined. */
  backtrader?: string;
  /** backtrader's CPU seconds on these candles, as an input, when it cannot run here. */
  backtraderCpu?: number;
}

export function againstBacktrader(o: AgainstBacktraderOptions): void {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cache = join(o.dir, 'backtrader-columns');
  const out = join(o.dir, 'backtrader-out');
  const candles = candlesCsv(o.data, o.recording);
  ours(o.recording, o.config, out, cache); // the column cache written, the build made
  const mine: Run[] = [];
  const them: Run[] = [];
  for (let r = 0; r < o.rounds; r++) {
    console.error(`  (against backtrader: round ${r + 1} of ${o.rounds})`);
    // Alternated: ours first on even rounds, backtrader first on odd ones.
    if (r % 2 === 1 && o.backtrader !== undefined) them.push(theirs(candles, o.backtrader, out));
    mine.push(ours(o.recording, o.config, out, cache));
    if (r % 2 === 0 && o.backtrader !== undefined) them.push(theirs(candles, o.backtrader, out));
  }
  const list = (runs: Run[]) => runs.map((x) => x.cpu.toFixed(2)).join(', ');
  const m = mine[0]!;
  console.log(`  against backtrader, the grid on ${o.label} (${candles}), ${o.rounds} rounds alternating:`);
  console.log(
    `    bot backtest (warm column cache, process start to exit)  ${median(mine.map((x) => x.cpu)).toFixed(2)} CPU s median (${list(mine)}); ${m.orders} orders, ${m.fills} fills`,
  );
  let theirsCpu: number;
  if (o.backtrader !== undefined) {
    const t = them[0]!;
    theirsCpu = median(them.map((x) => x.cpu));
    console.log(
      `    backtrader ${'(bench/backtrader/grid.py, python3)'.padEnd(46)} ${theirsCpu.toFixed(2)} CPU s median (${list(them)}); ${t.orders} orders, ${t.fills} fills`,
    );
  } else if (o.backtraderCpu !== undefined) {
    theirsCpu = o.backtraderCpu;
    console.log(
      `    backtrader: ${theirsCpu.toFixed(2)} CPU s, taken as an input (--backtrader-cpu), not measured here`,
    );
  } else {
    console.log(
      `    backtrader: not measured (--backtrader DIR: a folder holding its package; or --backtrader-cpu SECONDS)`,
    );
    return;
  }
  const ratio = median(mine.map((x) => x.cpu)) / theirsCpu;
  console.log(
    `    bot backtest over backtrader, CPU                        ${ratio.toFixed(3)} (goal <= ${GOAL}: ${ratio <= GOAL ? 'met' : 'not met'})`,
  );
}
