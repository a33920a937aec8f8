#!/usr/bin/env node
/**
 * The one entry point: `bot <command> [flags]`. Each command lives in src/cli/<command>.ts and exports
 * `run(argv): Promise<number>` (the exit code); it is loaded only when asked for, so a quick command does
 * not pay for the daemon's start-up.
 */
import { installation, versionLine } from './app/installation.js';
import { didYouMean } from './config/problems.js';
import { COMMANDS as commands } from './cli/commands.js';
import { BotError } from './errors.js';
import { tierUpLater } from './ops/v8-tiering.js';

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((n) => n.length), 8);
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: bot <command> [flags]\n       bot --version\n\ncommands:\n${lines.join('\n')}\n\nRun 'bot <command> --help' for a command's flags.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    console.log(versionLine(installation()));
    return 0;
  }
  const command = commands[name];
  if (!command) {
    const near = didYouMean(name, Object.keys(commands));
    console.error(
      `bot: unknown command '${name}'${near === undefined ? '' : `; did you mean '${near}'?`}\n\n${usage()}`,
    );
    return 2;
  }
  // A replay's code is compiled once it has run long, set before its module is loaded (ops/v8-tiering.ts).
  if (command.replays) tierUpLater();
  const module = await command.load();
  return module.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // Last resort only: commands report their own errors. Still never a stack for a known error.
    if (err instanceof BotError) console.error(`bot: ${err.code}: ${err.message}`);
    else console.error('bot: unexpected error:', err);
    process.exitCode = 1;
  },
);
