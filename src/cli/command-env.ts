import { type Env, loadEnv } from '../app/env.js';
import { ConfigError } from '../errors.js';

/**
 * loadEnv for a command: when invalid, reports each problem (one per variable) and returns exit code 1. On a
 * terminal the problems are plain lines on stderr; otherwise they are JSON log lines like every other, on `fd`
 * (the command's log stream: 1 for the daemon, 2 for commands that print data on stdout). The logger (pino) is
 * loaded only then: a `bot status` or an operator command with a valid environment never loads it (~25 ms CPU).
 */
export async function commandEnv(options: { fd?: number } = {}): Promise<Env | 1> {
  try {
    return loadEnv();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    if (process.stdout.isTTY === true) {
      for (const problem of err.problems) console.error(problem);
    } else {
      const { createLogger } = await import('../ops/logger.js');
      const logger = createLogger({ level: 'info', fd: options.fd ?? 2, pretty: false, sync: true });
      for (const problem of err.problems) logger.error(problem);
    }
    return 1;
  }
}
