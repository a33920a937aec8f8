import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BotError } from '../errors.js';
import { didYouMean } from '../config/problems.js';

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

/** `--confg` → "unknown flag --confg; did you mean --config?" (or the list of flags when none is close). */
function unknownFlagMessage(flag: string, options: FlagSpec): string {
  const long = Object.keys(options).map((name) => `--${name}`);
  const shorts = Object.values(options).flatMap((o) => (o.short === undefined ? [] : [`-${o.short}`]));
  const typed = flag.split('=')[0]!;
  const near = typed.startsWith('--') ? didYouMean(typed, long) : didYouMean(typed, [...shorts, ...long]);
  return near === undefined
    ? `unknown flag ${typed} (flags: ${long.join(', ')})`
    : `unknown flag ${typed}; did you mean ${near}?`;
}

/**
 * Parse a command's flags strictly: an unknown flag or a missing value is an error that names the flag,
 * never silently ignored; an unknown flag names the closest valid one. `--help` is always accepted.
 */
export function parseFlags<T extends FlagSpec>(command: string, argv: string[], options: T, allowPositionals = false) {
  const all = { ...options, help: { type: 'boolean', short: 'h' } } as const;
  try {
    return parseArgs({ args: argv, options: all, strict: true, allowPositionals });
  } catch (err) {
    let message = err instanceof Error ? err.message : String(err);
    const unknown = /^Unknown option '([^']+)'/.exec(message);
    if ((err as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown?.[1] !== undefined)
      message = unknownFlagMessage(unknown[1], all);
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

/** A flag that must be an ISO 8601 time (2023-03-10, 2023-03-10T12:00:00Z): epoch ms; the error names the flag. */
export function timeFlag(command: string, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || !Number.isFinite(ms))
    throw new BotError(
      'E_USAGE',
      `${command}: --${name} must be an ISO 8601 time such as 2023-03-10T00:00:00Z, got '${value}'`,
    );
  return ms;
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
