/**
 * The commands of `bot`, each in src/cli/<command>.ts exporting `run(argv): Promise<number>` (the exit code) and
 * its SPEC (flags.ts CommandSpec: its --help and its part of docs/cli.md). A module is loaded only when its
 * command is asked for, so a quick command does not pay for the daemon's start-up.
 */
import type { CommandModule } from './flags.js';

export interface Command {
  summary: string;
  load: () => Promise<CommandModule>;
  /**
   * A research command that replays recordings for as long as it runs: V8's tier-up threshold is raised for it
   * (ops/v8-tiering.ts). Never for the daemon or its tools, where it gains nothing.
   */
  replays?: true;
}

/** The operator's actions against a running daemon (src/cli/operator-commands.ts: one module, one spec each). */
const OPERATOR_SUMMARIES = {
  pause: 'pause an instance of the running daemon',
  resume: 'resume a paused instance of the running daemon',
  exit: "sell an instance's position (pause, cancel its orders, sell at MARKET or a LIMIT)",
  'force-entry': 'open a position for an instance now, through every brake, its declared exits attached',
  cancel: 'cancel one open order of the running daemon',
  'stop-buy': 'stop-buy on or off: no new BUY orders while on',
  'kill-switch': 'the kill switch on or off: no new orders at all while on',
  reload: 'reload the strategy files into the running daemon',
} as const;

function operatorCommands(): Record<string, Command> {
  return Object.fromEntries(
    Object.entries(OPERATOR_SUMMARIES).map(([name, summary]) => [
      name,
      {
        summary,
        load: () =>
          import('./operator-commands.js').then((m) => m.operatorModule(name as keyof typeof OPERATOR_SUMMARIES)),
      },
    ]),
  );
}

export const COMMANDS: Record<string, Command> = {
  'import-candles': {
    summary: 'turn one-minute candle CSVs into a ticker recording',
    load: () => import('./import-candles.js'),
  },
  record: { summary: 'record the market watch of some symbols to daily files', load: () => import('./record.js') },
  data: {
    summary: 'data export: recordings as CSV, Arrow or Parquet, for pandas, polars or DuckDB',
    load: () => import('./data.js'),
  },
  'new-strategy': {
    summary: 'write a strategy of your own (module, tests, strategy file) into a folder outside the checkout',
    load: () => import('./new-strategy.js'),
  },
  'check-config': {
    summary: 'validate strategy files offline (schema, schedule, module, params)',
    load: () => import('./check-config.js'),
  },
  exchange: { summary: 'call one exchange endpoint by hand', load: () => import('./exchange.js') },
  backtest: {
    summary: 'replay recordings through the engine and strategies; reports and parameter sweeps',
    load: () => import('./backtest.js'),
    replays: true,
  },
  'check-strategy': {
    summary: 'check that a strategy decides the same from any start and reads nothing after its decisions',
    load: () => import('./check-strategy.js'),
    replays: true,
  },
  hyperopt: {
    summary:
      'search strategy file keys (params, risk, exits, protections) for the lowest loss, and say how much is luck',
    load: () => import('./hyperopt.js'),
    replays: true,
  },
  worker: {
    summary: 'take sweep and walk-forward combinations from a Redis queue and run them (bot backtest --queue)',
    load: () => import('./worker.js'),
    replays: true,
  },
  run: { summary: 'run the daemon (paper unless MODE=live)', load: () => import('./run.js') },
  status: {
    summary: 'instances, open orders, fills and PnL, from the database',
    load: () => import('./status.js'),
  },
  ...operatorCommands(),
  sim: {
    summary: 'run the simulated exchange (HTTP API) on recorded, random or lockstep prices',
    load: () => import('./sim.js'),
  },
  healthcheck: {
    summary: "probe the running daemon's /healthz (--ready: /readyz) on loopback (the container's HEALTHCHECK)",
    load: () => import('./healthcheck.js'),
  },
};
