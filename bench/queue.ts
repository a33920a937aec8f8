/**
 * The Redis queue (BullMQ) against the local worker pool, on the same sweep, printed side by side (no
 * assertions): redis-server on a free loopback port, `bot worker` processes as real processes.
 * 1. One worker: the local pool on 1 thread against the queue with 1 `bot worker`: jobs/s of each, and the
 *    queue's overhead per job (its time per combination less the pool's).
 * 2. Two workers: the pool on 2 threads against the queue with 2 `bot worker` processes, and the queue's speed-up
 *    from 1 to 2 workers.
 * Workers are warmed on other combinations first (a worker is long-lived; its first job pays for loading the
 * code and the data); the local pool starts its threads per sweep, as a sweep does. Rounds alternate the two
 * paths, so the machine's drift (2 shared cores here) falls on both. Then the projection for a 10-pair, 1-year
 * walk-forward on 1, 4 and 16 machines from these figures.
 * `npm run bench:queue [-- --rounds N --combos N]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openQueueExecutor } from '../src/backtest/queue/coordinator.js';
import { parseQueueUrl } from '../src/backtest/queue/queue-url.js';
import { DEFAULT_JOB_SETTINGS } from '../src/backtest/job-settings.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { runSweep, type SweepJob, type SweepWorkers } from '../src/backtest/sweep.js';
import { loadTicks } from '../src/backtest/tick-data.js';
import { startRedis, startWorker, type WorkerProcess } from '../test/support/redis.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
/** Two days of the sample: a combination is a fraction of a second, so a job's overhead shows. */
const FROM = Date.parse('2023-03-09T00:00:00Z');
const TO = Date.parse('2023-03-11T00:00:00Z');
const GRID = 'config/grid-btcusdt.json';
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 3);
const COMBOS = arg('combos', 24);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-queue-'));
  const data = await loadTicks([SAMPLE], { from: FROM, to: TO });
  const { sources } = await readConfigs([GRID]);
  const spacings = Array.from({ length: COMBOS }, (_, i) => (0.2 + 0.05 * i).toFixed(2));
  /** Combinations of round r (each round its own, so no result is re-used from Redis). */
  const job = (round: number, n = COMBOS): SweepJob => ({
    sources,
    data,
    settings: DEFAULT_JOB_SETTINGS,
    combos: spacings.slice(0, n).map((s) => ({ spacingPct: s, levels: 3 + round })),
  });
  const timed = async (j: SweepJob, workers: SweepWorkers) => {
    const t0 = performance.now();
    await runSweep(j, workers);
    return (performance.now() - t0) / 1000;
  };
  console.log(
    `sweep: ${COMBOS} grid combinations, each over the ${data.length.toLocaleString('en-US')}-tick sample; ` +
      `${ROUNDS} rounds alternating (a 2-core machine shared with others: figures move by a quarter or more)`,
  );

  const redis = await startRedis();
  const url = parseQueueUrl(redis.url, 'bench');
  const executor = await openQueueExecutor({
    url,
    load: { from: FROM, to: TO, allowPartial: false },
    reconcileMs: 2000,
    note: () => {},
  });
  const workers: WorkerProcess[] = [];
  let round = 0;
  try {
    const measure = async (n: number) => {
      while (workers.length < n) workers.push(await startWorker(redis.url, join(dir, `cache-${workers.length}`)));
      // Warm every worker (code loaded, data read and cached) on combinations of their own.
      await runSweep(job(30 + n, 2 * n), executor);
      const local: number[] = [];
      const queued: number[] = [];
      /** The workers' own time per combination (their `done in N ms` lines), and the queue's wall time. */
      const computeMs: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        local.push(await timed(job(round++), n));
        const before = workers.map((w) => w.lines.length);
        queued.push(await timed(job(round++), executor));
        workers.forEach((w, k) => {
          for (const line of w.lines.slice(before[k]))
            computeMs.push(Number(/ done in (\d+) ms$/.exec(line)?.[1] ?? NaN));
        });
        console.error(`  ${n} worker(s), round ${r + 1}: pool ${f2(local[r]!)} s, queue ${f2(queued[r]!)} s`);
      }
      const work = computeMs.filter(Number.isFinite);
      const meanMs = work.reduce((a, b) => a + b, 0) / work.length;
      // Each worker's wall time not spent running a combination, per job: taking it, storing the result, waiting.
      const overheadMs = (median(queued) * 1000 * n) / COMBOS - meanMs;
      return { local: median(local), queued: median(queued), meanMs, overheadMs, all: { local, queued } };
    };
    const one = await measure(1);
    const two = await measure(2);
    const rate = (s: number) => COMBOS / s;
    console.log('\n1 worker (pool: 1 thread; queue: 1 bot worker process), median of the rounds');
    console.log(
      `  local pool   ${f2(rate(one.local))} combinations/s  (rounds: ${one.all.local.map(f2).join(', ')} s)`,
    );
    console.log(
      `  queue        ${f2(rate(one.queued))} combinations/s  (rounds: ${one.all.queued.map(f2).join(', ')} s)`,
    );
    const { overheadMs } = one;
    console.log(
      `  per job: ${f1(one.meanMs)} ms running the combination in the worker, ${f1(overheadMs)} ms of queue ` +
        `overhead (taking it, storing the result, the coordinator's collection); the pool's threads start per ` +
        `sweep, the workers stay warm`,
    );
    console.log('\n2 workers (pool: 2 threads; queue: 2 bot worker processes)');
    console.log(
      `  local pool   ${f2(rate(two.local))} combinations/s  (rounds: ${two.all.local.map(f2).join(', ')} s)`,
    );
    console.log(
      `  queue        ${f2(rate(two.queued))} combinations/s  (rounds: ${two.all.queued.map(f2).join(', ')} s)`,
    );
    console.log(
      `  speed-up 1 -> 2 workers: queue ${f2(one.queued / two.queued)}x, local pool ${f2(one.local / two.local)}x; ` +
        `queue overhead per job with 2 workers: ${f1(two.overheadMs)} ms`,
    );

    // The projection: a 10-pair, 1-year walk-forward of 1,000 combinations, 5 windows in the default split (the
    // year in 8 test lengths, each train part three of them: 3/8 of a year). A combination's time follows the
    // data's time (the schedule's jobs fire every 5 s of it), so it is scaled by days, from the workers' own time.
    const days = (TO - FROM) / 86_400_000;
    const jobS = ((one.meanMs / days) * (365 * 3)) / 8 / 1000 + one.overheadMs / 1000;
    const jobs = 1000 * 5 * 10;
    console.log(
      `\nprojection: 10 pairs x 1 year, walk-forward of 1,000 combinations in 5 windows: ` +
        `${jobs.toLocaleString('en-US')} train jobs of ${f1(jobS)} s each (${f1(one.meanMs / days)} ms per day of ` +
        `data measured above, 137 days each, plus the overhead per job); the 50 test runs are noise beside them`,
    );
    const measured = one.queued / two.queued;
    for (const machines of [1, 4, 16]) {
      const hours = (per: number) => f1((jobs * jobS) / (machines * per) / 3600);
      console.log(
        `  ${String(machines).padStart(2)} machine(s) of 2 cores, 2 workers each: ${hours(2)} h if 2 workers give 2x; ` +
          `${hours(measured)} h at the ${f2(measured)}x measured here`,
      );
    }
  } finally {
    await executor.close();
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
