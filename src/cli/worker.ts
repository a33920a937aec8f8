/**
 * `bot worker --queue redis://…`: takes sweep and walk-forward combinations from the Redis queue and runs them
 * with the local pool's code (backtest/queue/queue-worker.ts), on any machine that reaches the Redis. Stops on
 * SIGINT/SIGTERM after the combination in hand (exit 0).
 */
import { QUEUE_ENV, queueUrlFrom } from '../backtest/queue/queue-url.js';
import { DEFAULT_WORKER_CACHE } from '../backtest/queue/recording-store.js';
import { BotError } from '../errors.js';
import { researchImport } from '../ops/research-import.js';
import { commandSpec, parseCommandFlags } from './flags.js';
import { commandFailure } from './command-failure.js';

export const SPEC = commandSpec({
  name: 'worker',
  usage: 'worker --queue redis://[:PASSWORD@]HOST:PORT[/DB] [flags]',
  about: `Takes backtest combinations from the queue that 'bot backtest --sweep … --queue URL' fills and runs them, one
at a time, with the same code as the local worker threads. Run one per core, on as many machines as you like.
Recordings are named by sha256: read from the path the coordinator names when this machine sees it, else from
its --serve-data URL, kept in the cache folder and used only when they hash right. A strategy module is run
only when its sha256 is the one the coordinator sent.`,
  flags: {
    queue: {
      type: 'string',
      arg: 'URL',
      doc: `the Redis (rediss:// for TLS); default ${QUEUE_ENV}, which keeps the password off the command line`,
    },
    cache: {
      type: 'string',
      arg: 'DIR',
      doc: `where fetched recordings and their columns are kept (default ${DEFAULT_WORKER_CACHE}; COLUMN_CACHE_DIR=off keeps no columns)`,
    },
    strategies: {
      type: 'string',
      arg: 'DIR',
      doc: "where strategy modules are found (default: the folder the coordinator named, or the project's strategies/)",
    },
  },
  notes: 'Stop with Ctrl-C (SIGINT) or SIGTERM: the combination in hand finishes first.',
});

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const { values } = flags;
  try {
    const url = queueUrlFrom(values.queue);
    if (url === undefined) throw new BotError('E_USAGE', `--queue (or ${QUEUE_ENV}) is required`);
    const { startQueueWorker } = await researchImport('bot worker', () => import('../backtest/queue/queue-worker.js'));
    const worker = await startQueueWorker({
      url,
      cacheDir: values.cache ?? DEFAULT_WORKER_CACHE,
      strategiesDir: values.strategies,
      log: (line) => console.error(line),
    });
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    console.error(`worker: ${signal}: stopping after the combination in hand`);
    await worker.stop();
    return 0;
  } catch (err) {
    return commandFailure('worker', err);
  }
}
