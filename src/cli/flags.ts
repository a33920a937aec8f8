import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BotError } from '../errors.js';

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * Parse a command's flags strictly: an unknown flag or a missing value is an error that names the flag,
 * never silently ignored. `--help` is always accepted.
 */
export function parseFlags<T extends FlagSpec>(command: string, argv: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new BotError('E_USAGE', `${command}: ${message}`, { cause: err });
  }
}

/** A flag that must be a finite number; the error names the flag and what it got. */
export function numberFlag(command: string, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) {
    throw new BotError('E_USAGE', `${command}: --${name} must be a number, got '${value}'`);
  }
  return n;
}

/**
 * parseFlags for a command with a usage text: on a bad flag prints the error and the usage to stderr and
 * returns 2; on --help prints the usage and returns 0; otherwise returns the parsed flags.
 */
export function parseCommandFlags<T extends FlagSpec>(
  command: string,
  argv: string[],
  options: T,
  usage: string,
  allowPositionals = false,
) {
  let flags;
  try {
    flags = parseFlags(command, argv, options, allowPositionals);
  } catch (err) {
    if (!(err instanceof BotError)) throw err;
    console.error(`${err.message}\n\n${usage}`);
    return 2;
  }
  // parseFlags always adds --help; the generic return type does not show it.
  if ((flags.values as { help?: boolean }).help === true) {
    console.log(usage);
    return 0;
  }
  return flags;
}
