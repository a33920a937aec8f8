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

/** A command's flag: what parseArgs needs, and what `--help` and docs/cli.md say of it. */
export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string;
  /** The value's placeholder in the help: FILE, N, ISO… (string flags). */
  arg?: string;
  /** What it does; `--help` wraps it under the flag's column. */
  doc: string;
  /** A heading the flag is listed under (the flags before the first one with a section have none). */
  section?: string;
}

export type Flags = Record<string, Flag>;

/** A command's module (src/cli/<command>.ts): its run, and its usage. */
export interface CommandModule {
  run(argv: string[]): Promise<number>;
  /** Its usage (one command); a module with subcommands exports SPECS instead. */
  SPEC?: CommandSpec;
  SPECS?: readonly CommandSpec[];
}

/**
 * A command's usage: the one source of its `--help` and of its part of docs/cli.md (src/cli/reference.ts), so
 * that neither can list a flag the parser does not take, nor miss one it does.
 */
export interface CommandSpec<F extends Flags = Flags> {
  /** As typed after `bot`: 'backtest', 'data export'. */
  name: string;
  /** The synopsis after `usage: bot `. */
  usage: string;
  /** What the command does, before the flags (plain text, blank lines between paragraphs). */
  about: string;
  flags: F;
  /** After the flags: outputs, exit codes. */
  notes?: string;
  /** Takes arguments besides its flags (files, a call's name). */
  positionals?: boolean;
}

/** Keeps a spec's literal flag types (parseArgs types the values from them) while checking its shape. */
export function commandSpec<const F extends Flags>(spec: CommandSpec<F>): CommandSpec<F> {
  return spec;
}

const HELP_WIDTH = 110;
/** Flag labels longer than this put their text on the next line. */
const LABEL_MAX = 30;

/** `--config FILE` (a repeatable flag says so once: `--config FILE …`). */
export function flagLabel(name: string, flag: Flag): string {
  const short = flag.short === undefined ? '' : `-${flag.short}, `;
  const value = flag.type === 'string' ? ` ${flag.arg ?? 'VALUE'}` : '';
  return `${short}--${name}${value}`;
}

/** Words of `text` in lines of at most `width` characters (a longer word stands alone). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/)) {
      if (line !== '' && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(line);
  }
  return lines;
}

/** The flags as `--help` lists them: label, then the text wrapped beside it; each section under its heading. */
function flagLines(flags: Flags): string[] {
  const entries = Object.entries(flags);
  const labels = entries.map(([name, flag]) => flagLabel(name, flag));
  const column = Math.min(Math.max(...labels.map((l) => l.length), 0), LABEL_MAX) + 4;
  const out: string[] = [];
  let section: string | undefined;
  entries.forEach(([, flag], i) => {
    if (flag.section !== undefined && flag.section !== section) {
      section = flag.section;
      out.push('', ...wrap(section, HELP_WIDTH));
    }
    const label = `  ${labels[i]!}`;
    const text = wrap(flag.doc, HELP_WIDTH - column);
    const indent = ' '.repeat(column);
    if (label.length + 2 > column) out.push(label, ...text.map((t) => indent + t));
    else out.push(label.padEnd(column) + text[0], ...text.slice(1).map((t) => indent + t));
  });
  return out;
}

/** A command's `--help`: the synopsis, what it does, its flags, the notes. */
export function helpText(spec: CommandSpec): string {
  const parts = [`usage: bot ${spec.usage}`, spec.about];
  if (Object.keys(spec.flags).length > 0) parts.push(flagLines(spec.flags).join('\n').replace(/^\n/, ''));
  if (spec.notes !== undefined) parts.push(spec.notes);
  return parts.join('\n\n');
}

/**
 * parseFlags for a command's spec: on a bad flag prints the error and the usage to stderr and returns 2; on
 * --help prints the usage and returns 0; otherwise returns the parsed flags.
 */
export function parseCommandFlags<F extends Flags>(spec: CommandSpec<F>, argv: string[]) {
  let flags;
  try {
    flags = parseFlags(spec.name, argv, spec.flags, spec.positionals === true);
  } catch (err) {
    if (!(err instanceof BotError)) throw err;
    console.error(`${err.message}\n\n${helpText(spec)}`);
    return 2;
  }
  // parseFlags always adds --help; the generic return type does not show it.
  if ((flags.values as { help?: boolean }).help === true) {
    console.log(helpText(spec));
    return 0;
  }
  return flags;
}
