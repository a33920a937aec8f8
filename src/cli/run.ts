/**
 * `bot run` (`npm start`): the daemon. Paper trading on the embedded simulated exchange unless MODE=live;
 * the environment (and .env) says everything else. SIGTERM/SIGINT/SIGHUP, or its parent process going away,
 * stop it cleanly (exit 0), a second signal at once; a configuration or authentication problem stops it before anything is sent (exit 1).
 */
import { Daemon } from '../app/daemon.js';
import { dotenvExposure } from '../config/env.js';
import { ConfigError, describeError, errorCode } from '../errors.js';
import { createLogger } from '../ops/logger.js';
import { installShutdown } from '../ops/shutdown.js';
import { JournalLockedError } from '../store/journal-lock.js';
import { commandEnv } from './command-env.js';
import { commandSpec, parseCommandFlags } from './flags.js';

export const SPEC = commandSpec({
  name: 'run',
  usage: 'run [--fresh] [--adopt-open-orders]',
  about: `Runs every enabled strategy file in CONFIG_DIR (default config/) until SIGTERM, SIGINT or SIGHUP
(or until its parent process is gone).
MODE=paper (default): on the embedded simulated exchange, fed by recordings (PAPER_DATA, default the samples)
or, with EXCHANGE_BASE_URL set, by the exchange's live public market watch. The paper account (balances,
orders, fills, where the replay stands) is kept in DB_PATH and resumed by the next run. MODE=live: on
EXCHANGE_BASE_URL with EXCHANGE_API_KEY and EXCHANGE_API_SECRET. Every variable is listed in
docs/configuration.md.`,
  flags: {
    fresh: {
      type: 'boolean',
      doc: 'paper only: archive DB_PATH next to it and start a new paper account (as PAPER_FRESH=true); the newest PAPER_ARCHIVES_KEPT archives (default 5) are kept',
    },
    'adopt-open-orders': {
      type: 'boolean',
      doc: 'live only: the journal is empty and the account has open orders (a journal deleted, another bot): journal them as external orders and trade beside them (as ADOPT_OPEN_ORDERS=true); without it such a start is refused, nothing sent',
    },
  },
});

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const loaded = await commandEnv({ fd: 1 });
  if (loaded === 1) return 1;
  const env = {
    ...loaded,
    PAPER_FRESH: loaded.PAPER_FRESH || flags.values.fresh === true,
    ADOPT_OPEN_ORDERS: loaded.ADOPT_OPEN_ORDERS || flags.values['adopt-open-orders'] === true,
  };
  const logger = createLogger({
    level: env.LOG_LEVEL,
    pretty: env.LOG_FORMAT === undefined ? undefined : env.LOG_FORMAT === 'pretty',
  });
  const exposure = dotenvExposure();
  if (exposure !== undefined) logger.warn(exposure);
  const shutdown = installShutdown({
    logger,
    timeoutMs: env.STOP_TIMEOUT_MS,
    // npm forwards only SIGINT and SIGTERM: killed otherwise, it would leave the bot trading as an orphan.
    watchParent: {},
    stop: async (reason) => {
      // A signal during start-up waits for the start to end (it aborts its retries), then stops what started.
      const daemon = await starting.catch(() => undefined);
      await daemon?.stop(reason);
    },
  });
  // The daemon's two bounded waits (running jobs, requests in flight) fit inside the whole stop's deadline.
  const stopTimeoutMs = Math.floor(env.STOP_TIMEOUT_MS * 0.4);
  const starting = Daemon.start({
    env,
    logger,
    signal: shutdown.signal,
    stopTimeoutMs,
    onLeaseLost: () => void shutdown.trigger('journal lease lost', 1),
  });
  let daemon: Daemon;
  try {
    daemon = await starting;
  } catch (err) {
    // A shutdown asked for during start-up finishes on its own (exit 0 after a signal).
    if (shutdown.signal.aborted) return new Promise<number>(() => undefined);
    shutdown.dispose();
    if (err instanceof JournalLockedError) {
      // One line, naming the holder: nothing was opened, so there is nothing else to say.
      logger.fatal({ code: err.code, holder: err.holder }, `not started: ${err.message}`);
    } else if (['E_RECORDING', 'E_NO_PAIR_RULES', 'E_DB_VERSION', 'E_DB_BACKUP'].includes(errorCode(err))) {
      // A recording that cannot be replayed (PAPER_DATA): the message names the file and where, or says how to
      // give its pair's rules; a journal of a newer schema or that could not be backed up before its migration:
      // the message names the backup and what to do. No stack.
      logger.fatal({ code: errorCode(err) }, `not started: ${(err as Error).message}`);
    } else if (err instanceof ConfigError) {
      for (const problem of err.problems) logger.error(problem);
      logger.error(`not started: ${err.problems.length} configuration problem(s)`);
    } else {
      logger.fatal({ err }, `not started: ${describeError(err)}`);
    }
    await new Promise<void>((resolve) => logger.flush(() => resolve()));
    return 1;
  }
  // The operator's way to clear an authentication halt without a restart, once the keys or clock are fixed.
  process.on('SIGUSR2', () => {
    logger.info('SIGUSR2 received: clearing the authentication halt after a signed read');
    daemon.engine.clearAuthHalt().then(
      (cleared) => {
        if (!cleared) logger.info('SIGUSR2: trading was not halted');
      },
      (err: unknown) => logger.error({ err }, 'halt kept: the signed read still fails'),
    );
  });
  // Runs until a signal or a fatal error, which exit the process through the shutdown handler.
  return new Promise<number>(() => undefined);
}
