#!/usr/bin/env node
/**
 * The one entry point: `bot <command> [flags]`. Each command lives in src/cli/<command>.ts and exports
 * `run(argv): Promise<number>` (the exit code); it is loaded only when asked for, so a quick command does
 * not pay for the daemon's start-up.
 */
import { installation, versionLine } from './app/installation.js';
import { didYouMean } from './config/problems.js';
import { BotError } from './errors.js';

interface Command {
  summary: string;
  load: () => Promise<{ run(argv: string[]): Promise<number> }>;
}

const commands: Record<string, Command> = {
  'import-candles': {
    summary: 'turn one-minute candle CSVs into a ticker recording',
    load: () => import('./cli/import-candles.js'),
  },
  record: { summary: 'record the market watch of some symbols to daily files', load: () => import('./cli/record.js') },
  data: {
    summary: 'data export: recordings as CSV, Arrow or Parquet, for pandas, polars or DuckDB',
    load: () => import('./cli/data.js'),
  },
  'new-strategy': {
    summary: 'write a strategy of your own (module, tests, strategy file) into a folder outside the checkout',
    load: () => import('./cli/new-strategy.js'),
  },
  'check-config': {
    summary: 'validate strategy files offline (schema, schedule, module, params)',
    load: () => import('./cli/check-config.js'),
  },
  exchange: { summary: 'call one exchange endpoint by hand', load: () => import('./cli/exchange.js') },
  backtest: {
    summary: 'replay recordings through the engine and strategies; reports and parameter sweeps',
    load: () => import('./cli/backtest.js'),
  },
  worker: {
    summary: 'take sweep and walk-forward combinations from a Redis queue and run them (bot backtest --queue)',
    load: () => import('./cli/worker.js'),
  },
  run: { summary: 'run the daemon (paper unless MODE=live)', load: () => import('./cli/run.js') },
  status: {
    summary: 'instances, open orders, fills and PnL, from the database',
    load: () => import('./cli/status.js'),
  },
  sim: {
    summary: 'run the simulated exchange (HTTP API) on recorded, random or lockstep prices',
    load: () => import('./cli/sim.js'),
  },
  healthcheck: {
    summary: "probe the running daemon's /healthz (--ready: /readyz) on loopback (the container's HEALTHCHECK)",
    load: () => import('./cli/healthcheck.js'),
  },
};

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
