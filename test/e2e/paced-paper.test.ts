/**
 * Paper on recordings that falls behind its own clock (issue 38): the daemon as `npm start` composes it on paper
 * on a recording (its replay clock at PAPER_SPEED, the simulated exchange's HTTP server fed by the replay feed,
 * the signed client, a SQLite file; in this process, which its strategy starves) on twenty recorded minutes at
 * 7200x, with a strategy whose every tick costs 20 ms of CPU (a market job a recorded minute: 0.4 s of hooks
 * where the pace allows 0.17 s). The recording's clock waits for it: the daemon places the orders the backtest of
 * the same minutes places and gets its fills (maker and taker), at the same recorded times and prices. Before,
 * the recording's time ran on while the daemon started (its first order minutes late) and while its jobs ran
 * (firings merged, the orders onFill places sent at a later job).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Daemon } from '../../src/app/daemon.js';
import { parseEnv } from '../../src/app/env.js';
import { runJob } from '../../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { storeTrace, type Trace } from '../../src/backtest/runner.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { silentLogger } from '../../src/ops/logger.js';
import { DEFAULT_PAPER_BALANCES } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { writeSlice } from '../support/recording-slice.js';
import { tempDir } from '../support/temp-dir.js';
import { readDb, ROOT, waitFor } from './daemon-process.js';

const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
const FROM = Date.parse('2023-03-10T01:00:00Z');
const TO = FROM + 20 * 60_000;
const JOBS = { ordersPoll: '30 * * * * *', refresh: '0 */5 * * * *' };

/** What happened in the recorded stretch (the replay loops on after it, at later times). */
const within = (trace: Trace): Trace => ({
  orders: trace.orders.filter((o) => o.time < TO),
  fills: trace.fills.filter((f) => f.time < TO),
});

describe('paper behind its pace', () => {
  it('waits for the daemon: the backtest’s orders and fills, at the same recorded times and prices', async () => {
    const dir = tempDir('paced-paper');
    const recording = join(dir, 'BTCUSDT-twenty-minutes.jsonl.gz');
    await writeSlice(SAMPLE, recording, FROM, TO);
    const strategiesDir = join(dir, 'strategies');
    const configDir = join(dir, 'config');
    mkdirSync(strategiesDir);
    mkdirSync(configDir);
    const clockStrategy = pathToFileURL(join(ROOT, 'test/e2e/strategies/on-the-clock.ts')).href;
    writeFileSync(
      join(strategiesDir, 'slow-clock.ts'),
      `import base from '${clockStrategy}';\n` +
        'export default { ...base, name: "slow-clock", onTick(ctx) {\n' +
        '  const until = performance.now() + 20;\n' +
        '  while (performance.now() < until);\n' +
        '  return base.onTick(ctx);\n' +
        '} };\n',
    );
    const file = join(configDir, 'slow-clock.json');
    writeFileSync(
      file,
      JSON.stringify({ name: 'slow-clock', strategy: 'slow-clock', symbol: 'BTCUSDT', schedule: '0 * * * * *' }),
    );
    const { sources } = await readConfigs([file], strategiesDir);
    const expected = (
      await runJob(sources, await loadTicks([recording]), {
        ...DEFAULT_JOB_SETTINGS,
        balances: { ...DEFAULT_PAPER_BALANCES },
        jobs: JOBS,
      })
    ).run.traces.get('slow-clock')!;
    // Two round trips: resting buys filled as a maker and as a taker, each sold back.
    expect([expected.orders.length, expected.fills.length]).toEqual([4, 4]);

    const db = join(dir, 'paper.db');
    const env = parseEnv({
      DB_PATH: db,
      CONFIG_DIR: configDir,
      STRATEGIES_DIR: strategiesDir,
      KILL_SWITCH_FILE: join(dir, 'KILL'),
      PAPER_DATA: recording,
      PAPER_SPEED: '7200',
      ORDERS_POLL: JOBS.ordersPoll,
      REFRESH: JOBS.refresh,
    });
    const daemon = await Daemon.start({ env, logger: silentLogger });
    try {
      // Its market job saw the replay's next pass: every firing of the stretch has run.
      const seen = () =>
        readDb(db, (d) => d.prepare("SELECT time FROM last_prices WHERE symbol = 'BTCUSDT'").pluck().get()) as
          number | undefined;
      await waitFor('the daemon past the recorded stretch', () => (seen() ?? 0) >= TO);
    } finally {
      await daemon.stop('test done');
    }
    const store = openStore({ path: db, clock: wallClock });
    try {
      expect(within(storeTrace(store, ['slow-clock']))).toEqual(expected);
    } finally {
      store.close();
    }
  });
});
