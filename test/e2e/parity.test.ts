/**
 * Backtest and paper trading agree (issue: fidelity). The same strategy file over the same recording must
 * give the same orders (type, side, price, quantity) and the same fills in the backtester (matching engine in
 * process, virtual clock) and in the daemon on paper: the real composition root, the simulated exchange's
 * HTTP server with its lockstep feed (one recorded tick per market-watch request), the signed client and a
 * SQLite file. Ids and wall-clock times aside. The daemon's jobs are fired through the Scheduler port, one
 * recorded tick at a time (market cycle, then orders poll, and the refresh once a recorded minute), instead of
 * by node-cron on the wall clock: the only difference from `npm start`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Daemon } from '../../src/app/daemon.js';
import { DEFAULT_JOB_SETTINGS, runJob } from '../../src/backtest/job.js';
import { storeTrace, type Trace } from '../../src/backtest/runner.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { parseEnv } from '../../src/config/env.js';
import type { WireTicker } from '../../src/exchange/wire-schemas.js';
import { silentLogger } from '../../src/ops/logger.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import type { JobStats, Scheduler } from '../../src/ports/scheduler.js';
import type { RecordingHeader } from '../../src/record/recording-format.js';
import { readRecording } from '../../src/record/recording-reader.js';
import { RecordingWriter } from '../../src/record/recording-writer.js';
import { DEFAULT_PAPER_BALANCES } from '../../src/sim/server.js';
import { openStore } from '../../src/store/store.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const dir = mkdtempSync(join(tmpdir(), 'parity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Jobs as the daemon schedules them, fired only when the test says so. */
class SteppedScheduler implements Scheduler {
  readonly jobs = new Map<string, () => Promise<void>>();
  schedule(name: string, _cron: string, run: () => Promise<void>): void {
    this.jobs.set(name, run);
  }
  async run(prefix: string): Promise<void> {
    const matching = [...this.jobs].filter(([name]) => name.startsWith(prefix));
    if (matching.length !== 1) throw new Error(`expected one job named ${prefix}…, found ${matching.length}`);
    await matching[0]![1]();
  }
  stats(): JobStats[] {
    return [];
  }
  stop(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

/** Three hours of the sample in which a tight grid trades both ways. */
async function slice(file: string): Promise<number> {
  let header: RecordingHeader | undefined;
  const ticks: WireTicker[] = [];
  const from = Date.parse('2023-03-09T00:00:00Z');
  for await (const t of readRecording(SAMPLE, { from, to: from + 3 * 3_600_000, onHeader: (h) => (header = h) }))
    ticks.push(t);
  const writer = await RecordingWriter.open(file, { header: header! });
  await writer.writeTickers(ticks);
  await writer.close();
  return ticks.length;
}

const withoutTime = (trace: Trace) => ({
  orders: trace.orders.map(({ time: _, ...rest }) => rest),
  fills: trace.fills.map(({ time: _, ...rest }) => rest),
});

describe('backtest / paper parity', () => {
  it(
    'places the same orders and gets the same fills in the backtester and in the daemon on paper',
    { timeout: 120_000 },
    async () => {
      const recording = join(dir, 'BTCUSDT-slice.jsonl.gz');
      const ticks = await slice(recording);
      const configDir = join(dir, 'config');
      const configFile = join(configDir, 'grid-parity.json');
      rmSync(configDir, { recursive: true, force: true });
      await import('node:fs/promises').then((fs) => fs.mkdir(configDir));
      writeFileSync(
        configFile,
        JSON.stringify({
          name: 'grid-parity',
          strategy: 'grid',
          symbol: 'BTCUSDT',
          schedule: '* * * * * *',
          params: { levels: 4, spacingPct: '0.1', quantity: '0.001', initialBase: '0.002' },
        }),
      );

      const data = await loadTicks([recording]);
      const { sources } = await readConfigs([configFile]);
      const backtest = await runJob(sources, data, {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
      });

      const db = join(dir, 'paper.db');
      const env = parseEnv({
        MODE: 'paper',
        PAPER_LOCKSTEP: 'true',
        PAPER_DATA: recording,
        DB_PATH: db,
        CONFIG_DIR: configDir,
        KILL_SWITCH_FILE: join(dir, 'KILL'),
        // No HTTP listener: a fixed port would collide with whatever else holds it (8080 by default).
        API_PORT: '0',
        // The token bucket paces requests for the real exchange (10/s by default); stepping ticks needs none.
        EXCHANGE_RATE_LIMIT: '100000',
      });
      const scheduler = new SteppedScheduler();
      const daemon = await Daemon.start({ env, logger: silentLogger, scheduler });
      try {
        for (let i = 0; i < ticks; i++) {
          await scheduler.run('market');
          await scheduler.run('orders poll');
          if (i % 4 === 3) await scheduler.run('refresh');
        }
      } finally {
        await daemon.stop('parity test done');
      }
      const store = openStore({ path: db, clock: wallClock });
      const paper = storeTrace(store, ['grid-parity']);
      store.close();

      expect(backtest.run.trace.fills.length).toBeGreaterThan(10);
      expect(new Set(backtest.run.trace.fills.map((f) => f.side))).toEqual(new Set(['BUY', 'SELL']));
      expect(withoutTime(paper)).toEqual(withoutTime(backtest.run.trace));
    },
  );
});
