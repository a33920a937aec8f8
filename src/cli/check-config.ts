/**
 * `bot check-config [files or dirs…]`: validate strategy files offline (no network, no API keys) and say
 * which instance each one defines, or list every problem found, one per line on stderr.
 */
import { loadStrategyFiles } from '../config/loader.js';
import { BotError, ConfigError } from '../errors.js';
import { parseFlags } from './flags.js';

const HELP = `usage: bot check-config [--strategies <dir>] [file|dir …]

Validates strategy files (default: every *.json in config/): the file schema, the schedule, the strategy
module in strategies/ and its params, unique instance names. Exit 0 when all are valid, 1 otherwise.

  --strategies <dir>  where strategy modules live (default: the project's strategies/)`;

export async function run(argv: string[]): Promise<number> {
  let flags;
  try {
    flags = parseFlags('check-config', argv, { strategies: { type: 'string' } }, true);
  } catch (err) {
    if (!(err instanceof BotError)) throw err;
    console.error(`${err.message}\n\n${HELP}`);
    return 2;
  }
  if (flags.values.help) {
    console.log(HELP);
    return 0;
  }
  const sources = flags.positionals.length > 0 ? flags.positionals : 'config';
  try {
    const instances = await loadStrategyFiles(sources, { strategiesDir: flags.values.strategies });
    for (const { file, config } of instances) {
      const disabled = config.enabled ? '' : ' [disabled]';
      console.log(`ok: ${file} (${config.name} → ${config.strategy} on ${config.symbol})${disabled}`);
    }
    return 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) console.error(problem);
    return 1;
  }
}
