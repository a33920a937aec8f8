/**
 * What a fill costs a backtest, end to end (issue 39): the grid (config/grid-btcusdt.json) run warm in this
 * process, with the CPU time (process.cpuUsage, every thread of the process: the replay is on this one) of the
 * fill path's parts summed: each orders poll that ran (on the in-process venue only a poll with something to learn
 * runs: about one a fill), and inside it the reads of open orders and history with the fills recorded, the trade
 * history read and the inserts, the balances read again, the delivery to onFill with the order it places; beside
 * them every intent processed (the orders sent). The parts are timed by wrapping the engine's methods, so the
 * figures carry a few microseconds of that each; the run's total is printed beside them. On the 10x recording of
 * `npm run bench:backtest` when it has been generated (data/cache/bench/), else the 21-day sample.
 * `npm run bench:fill-cost [-- --rounds N]` (the median of N timed runs after one warm-up; 3 by default).
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../src/backtest/job-settings.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { loadTicks } from '../src/backtest/tick-data.js';
import { FillDelivery } from '../src/engine/fill-delivery.js';
import { FillRecorder } from '../src/engine/fill-recorder.js';
import { OrderManager } from '../src/engine/order-manager.js';
import { OrderSync } from '../src/engine/order-sync.js';
import { OrdersPoll } from '../src/engine/orders-poll.js';
import { VenueReads } from '../src/engine/venue-reads.js';

const SYNTHETIC = 'data/cache/bench/BTCUSDT-synthetic-x10.jsonl.gz';
const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const i = process.argv.indexOf('--rounds');
const ROUNDS = i < 0 ? 3 : Number(process.argv[i + 1]);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) throw new Error('--rounds: expected a whole number >= 1');

interface Part {
  label: string;
  calls: number;
  cpuUs: number;
}
const parts: Part[] = [];

/** Sums the CPU time of `method`'s calls on `cls`, until the promise it returns settles (the replay awaits it). */
function timed(cls: { prototype: object }, method: string, label: string): void {
  const proto = cls.prototype as Record<string, (...args: unknown[]) => unknown>;
  const original = proto[method];
  if (typeof original !== 'function') throw new Error(`${label}: no method ${method}`);
  const part: Part = { label, calls: 0, cpuUs: 0 };
  parts.push(part);
  proto[method] = function (this: unknown, ...args: unknown[]) {
    const start = process.cpuUsage();
    const done = () => {
      const { user, system } = process.cpuUsage(start);
      part.calls++;
      part.cpuUs += user + system;
    };
    const result = original.apply(this, args);
    if (result instanceof Promise) return result.finally(done);
    done();
    return result;
  };
}

timed(OrdersPoll, 'runNow', 'orders polls that ran (all of the below but the intents)');
timed(OrderSync, 'pollMany', '  open orders and history read, fills recorded (refreshes too)');
timed(FillRecorder, 'recordMany', '    trade history read, fills and their orders written');
timed(VenueReads, 'balancesIfChanged', '  balances read again after fills');
timed(FillDelivery, 'deliverAll', '  fills delivered to onFill, with the intents it queued');
timed(OrderManager, 'process', 'intents processed (orders sent: on ticks and fills)');

const file = existsSync(SYNTHETIC) ? SYNTHETIC : SAMPLE;
const data = await loadTicks([file]);
const { sources } = await readConfigs(['config/grid-btcusdt.json']);
await runJob(sources, data, DEFAULT_JOB_SETTINGS);

const rounds: { cpuUs: number; fills: number; parts: Part[] }[] = [];
for (let r = 0; r < ROUNDS; r++) {
  for (const p of parts) Object.assign(p, { calls: 0, cpuUs: 0 });
  const start = process.cpuUsage();
  const { run } = await runJob(sources, data, DEFAULT_JOB_SETTINGS);
  const { user, system } = process.cpuUsage(start);
  rounds.push({ cpuUs: user + system, fills: run.fills.length, parts: parts.map((p) => ({ ...p })) });
}
rounds.sort((a, b) => a.cpuUs - b.cpuUs);
const median = rounds[Math.floor(rounds.length / 2)]!;
const ms = (us: number) => (us / 1000).toFixed(0).padStart(6);
console.log(
  `  load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} (2 cores, shared with other work)`,
);
console.log(
  `  the grid on ${file} (${data.length.toLocaleString('en-US')} ticks), warm, the median of ${ROUNDS} runs by CPU: ` +
    `${ms(median.cpuUs).trim()} ms of CPU, ${median.fills} fills (runs ${rounds.map((r) => ms(r.cpuUs).trim()).join(', ')} ms)`,
);
for (const p of median.parts)
  console.log(
    `    ${p.label.padEnd(64)} ${String(p.calls).padStart(6)} calls ${ms(p.cpuUs)} ms ` +
      `${String(Math.round(p.cpuUs / Math.max(p.calls, 1))).padStart(6)} us each ${((100 * p.cpuUs) / median.cpuUs).toFixed(1).padStart(5)} %`,
  );
const polls = median.parts[0]!;
console.log(
  `    per fill: ${Math.round(polls.cpuUs / Math.max(median.fills, 1))} us of CPU in the orders polls (its delivery and the order onFill places included)`,
);
