/**
 * The exits and protections the engine enforces are the same in a backtest and on paper (issue 23: "identical in
 * backtest, paper and live"). Two instances of a strategy that buys whenever it is flat and never sells, so the
 * engine alone decides every exit and every pause, over a day of the sample's fall (March 9-10, 2023): one with
 * its stop held on the exchange as an OCO bracket (stopLossPct with a roi "0" take-profit) and a cooldown after
 * each stop-out; one with a trailing stop and a roi table acting on ticks, and the losingTrades and maxDrawdown
 * protections. The backtester (matching engine in process, virtual clock stepped by the replay) and the daemon
 * on paper on the same recording (the real composition root, the simulated exchange's HTTP server, the signed
 * client, SQLite, on a virtual clock the test moves: test/e2e/paper-on-virtual-clock.ts) place the same orders
 * and get the same fills, order for order, with the same exit tags, and trip the same protections.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { storeTrace } from '../../src/backtest/runner.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { DEFAULT_PAPER_BALANCES } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { writeSlice } from '../support/recording-slice.js';
import { reenterFile, ROOT, TEST_STRATEGIES } from './daemon-process.js';
import { paperOnVirtualClock } from './paper-on-virtual-clock.js';
import { tempDir } from '../support/temp-dir.js';

const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
const FROM = Date.parse('2023-03-09T12:00:00Z');
const TO = Date.parse('2023-03-10T12:00:00Z');
const JOBS = { ordersPoll: '30 * * * * *', refresh: '0 */5 * * * *' };
const dir = tempDir('exits-parity');

/** The two instances' strategy files (the `reenter` test strategy), each on a schedule of its own. */
const INSTANCES: Record<string, { schedule: string; exits: object; protections: object }> = {
  held: {
    schedule: '*/30 * * * * *',
    exits: { stopLossPct: 0.6, roi: { '0': 1 } },
    protections: { cooldownMinutes: 30 },
  },
  ticks: {
    schedule: '15 * * * * *',
    exits: { trailingStopPct: 0.4, roi: { '0': 1.5, '90': 0.3 } },
    protections: {
      losingTrades: { count: 3, windowMinutes: 240, pauseMinutes: 120 },
      maxDrawdown: { pct: 1.2, pauseMinutes: 240 },
    },
  },
};

describe('declared exits and protections: backtest / paper parity', () => {
  it(
    'place the same orders and get the same fills, with the same exit tags and protection trips',
    { timeout: 300_000 },
    async () => {
      const configDir = join(dir, 'config');
      mkdirSync(configDir);
      const files = Object.entries(INSTANCES).map(([name, { schedule, exits, protections }]) => {
        const path = join(configDir, `${name}.json`);
        const file = JSON.parse(reenterFile({ entries: 1_000, exits, protections })) as Record<string, unknown>;
        writeFileSync(path, JSON.stringify({ ...file, name, schedule }));
        return path;
      });
      const recording = join(dir, 'BTCUSDT-slice.jsonl.gz');
      const { first, last } = await writeSlice(SAMPLE, recording, FROM, TO);

      const { sources } = await readConfigs(files, TEST_STRATEGIES);
      const backtest = await runJob(sources, await loadTicks([recording]), {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
        jobs: JOBS,
      });
      const db = await paperOnVirtualClock({
        dir,
        recording,
        configDir,
        strategiesDir: TEST_STRATEGIES,
        jobs: JOBS,
        from: first,
        to: last,
      });

      const store = openStore({ path: db, clock: wallClock });
      try {
        for (const name of Object.keys(INSTANCES)) {
          const expected = backtest.run.traces.get(name)!;
          expect({ name, ...storeTrace(store, [name]) }).toEqual({ name, ...expected });
          const tags = (rows: { instance?: string; tag?: string; status: string }[]) =>
            rows.filter((o) => o.instance === name).map((o) => `${o.tag ?? ''} ${o.status}`);
          expect(tags(store.orders.all()), `${name} tags`).toEqual(tags(backtest.run.orders));
        }
        // What the runs exercised: the held bracket's stop filled on the exchange, each starting a cooldown; on
        // ticks a roi exit, trailing stops, and both protections tripping on the losses.
        const exitTags = (name: string) =>
          new Set(backtest.run.orders.filter((o) => o.instance === name && o.status === 'FILLED').map((o) => o.tag));
        expect([...exitTags('held')].sort()).toEqual(['entry', 'exit:bracket']);
        expect([...exitTags('ticks')].sort()).toEqual(['entry', 'exit:roi', 'exit:trailing-stop']);
        const trips = store.events
          .list({ kinds: ['protection-tripped'] })
          .map((e) => `${e.instance} ${String(e.data.protection)}`);
        expect(new Set(trips)).toEqual(new Set(['held cooldown', 'ticks losingTrades', 'ticks maxDrawdown']));
        expect(backtest.run.traces.get('held')!.fills.length).toBeGreaterThan(6);
      } finally {
        store.close();
      }
    },
  );
});
