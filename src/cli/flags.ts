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
