/**
 * What a command that runs a job prints and exits with when it fails, one rule for all of them (backtest, hyperopt,
 * check-strategy, import-candles, data export, worker, record, sim): the message on stderr under the command's name
 * (not twice when the message already starts with it, or with `alsoNamed`'s: the research commands share the
 * backtest's inputs), naming the file, field or flag as the error does; exit 2 for a usage error (E_USAGE), else 1.
 */
import { BotError, ConfigError, describeError } from '../errors.js';

export interface FailureStyle {
  /** Another command's name a message may start with, dropped like the command's own. */
  alsoNamed?: string;
  /** Printed after a usage error's message (which then is printed as it is). */
  usageHelp?: string;
  /**
   * A long-running service (record, sim): every failure, the unexpected ones too, is one line with its code
   * (describeError). Otherwise a failure the bot did not raise (not a BotError) is a bug and is thrown on, for the
   * entry point to print with its stack.
   */
  service?: boolean;
}

/** Prints `err` as `command`'s failure (see above) and returns the exit status. */
export function commandFailure(command: string, err: unknown, style: FailureStyle = {}): number {
  const status = err instanceof BotError && err.code === 'E_USAGE' ? 2 : 1;
  if (style.service === true) {
    console.error(`${command}: ${describeError(err)}`);
    return status;
  }
  if (err instanceof ConfigError) {
    for (const problem of err.problems) console.error(`${command}: ${problem}`);
    return 1;
  }
  if (!(err instanceof BotError)) throw err;
  if (status === 2 && style.usageHelp !== undefined) {
    console.error(`${err.message}\n\n${style.usageHelp}`);
    return 2;
  }
  const named = [command, ...(style.alsoNamed === undefined ? [] : [style.alsoNamed])];
  console.error(`${command}: ${err.message.replace(new RegExp(`^(?:${named.join('|')}):\\s*`), '')}`);
  return status;
}
