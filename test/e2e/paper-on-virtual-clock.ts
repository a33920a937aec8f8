/**
 * The daemon on paper on a recording (the real composition root, the simulated exchange's HTTP server fed by the
 * replay feed, the signed client, a SQLite file) on a virtual clock the test moves through the recording: every
 * recorded ticker and every job fires at its recorded time, each awaited before the next, so what it does can be
 * compared with a backtest exactly. Returns the database it wrote.
 */
import { join } from 'node:path';
import { Daemon } from '../../src/app/daemon.js';
import { parseEnv } from '../../src/app/env.js';
import type { DaemonSchedule } from '../../src/config/env.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { silentLogger } from '../../src/ops/logger.js';

export async function paperOnVirtualClock(options: {
  dir: string;
  recording: string;
  configDir: string;
  strategiesDir: string;
  jobs: DaemonSchedule;
  /** The clock's start (the first ticker the replay feeds) and where it stops. */
  from: number;
  to: number;
  /** More variables (PAPER_FROM, …). */
  env?: Record<string, string>;
}): Promise<string> {
  const { dir, jobs } = options;
  const db = join(dir, 'paper.db');
  const env = parseEnv({
    MODE: 'paper',
    PAPER_DATA: options.recording,
    DB_PATH: db,
    CONFIG_DIR: options.configDir,
    STRATEGIES_DIR: options.strategiesDir,
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    ORDERS_POLL: jobs.ordersPoll,
    REFRESH: jobs.refresh,
    API_PORT: '0',
    // The token bucket paces requests for the real exchange (10/s by default); a virtual clock needs none.
    EXCHANGE_RATE_LIMIT: '100000',
    ...options.env,
  });
  const clock = new VirtualClock(options.from);
  const daemon = await Daemon.start({ env, logger: silentLogger, clock });
  try {
    await clock.advanceTo(options.to);
  } finally {
    await daemon.stop('test run done');
  }
  return db;
}
