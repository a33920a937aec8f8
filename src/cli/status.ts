/**
 * `bot status [--db PATH] [--json]`: every instance's state, open orders, today's fills and PnL, and the
 * kill switch, circuit breaker and authentication state, read from the database alone: it works while the
 * daemon runs (SQLite WAL lets a reader in) and after it stopped.
 */
import { existsSync } from 'node:fs';
import { buildStatusView, statusJson, statusTable } from '../status/status-view.js';
import { wallClock } from '../clocks/wall-clock.js';
import { openStore } from '../store/store.js';
import { commandEnv } from './command-env.js';
import { commandSpec, parseCommandFlags } from './flags.js';

export const SPEC = commandSpec({
  name: 'status',
  usage: 'status [--db PATH] [--json]',
  about: `Prints each instance's state (running/paused and why), open orders, today's fills, realised and unrealised
PnL (at the last price recorded), and the kill switch, circuit breaker and authentication state.`,
  flags: {
    db: { type: 'string', arg: 'PATH', doc: 'the database (default: DB_PATH, else data/bot.db)' },
    json: { type: 'boolean', doc: 'JSON for scripts instead of a table' },
  },
});

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const env = await commandEnv();
  if (env === 1) return 1;
  const path = flags.values.db ?? env.DB_PATH;
  // Opening would create an empty database: a wrong path must be an error, not "nothing to show".
  if (!existsSync(path)) {
    console.error(`status: no database at ${path} (run the bot first, or pass --db PATH)`);
    return 1;
  }
  const store = openStore({ path, clock: wallClock });
  try {
    // The venue's time comes from the store (the daemon's clock is in another process): see buildStatusView.
    const view = buildStatusView(store, { wallNow: wallClock.now(), killSwitchFile: env.KILL_SWITCH_FILE });
    console.log(flags.values.json ? JSON.stringify(statusJson(view), null, 2) : statusTable(view));
    return 0;
  } finally {
    store.close();
  }
}
