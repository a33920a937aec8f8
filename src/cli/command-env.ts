import { type Env, loadEnv } from '../config/env.js';
import { ConfigError } from '../errors.js';

/** loadEnv for a command: prints each problem (one per variable) on stderr and returns exit code 1 when invalid. */
export function commandEnv(): Env | 1 {
  try {
    return loadEnv();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) console.error(problem);
    return 1;
  }
}
