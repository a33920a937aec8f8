import { defineConfig } from 'vitest/config';

/**
 * The test files outside test/e2e and test/chaos that start processes (the daemon, `bot` commands, the simulator,
 * Redis) or run whole backtests, sweeps and searches over the sample (worker threads; a minute or more each on a
 * loaded machine). A new file that does either belongs here: the in-process project is the one a developer runs
 * after every change, and it stays about a minute (docs/testing.md). test/lint/suite-projects.test.ts fails on a file
 * that starts a process and is not listed.
 */
export const PROCESS_FILES = [
  'test/backtest/hyperopt-processes.test.ts',
  'test/backtest/queue-faults.test.ts',
  'test/backtest/queue.test.ts',
  'test/cli/check-config.test.ts',
  'test/cli/data-export.test.ts',
  'test/cli/docs-commands.test.ts',
  'test/cli/exchange.test.ts',
  'test/cli/flags.test.ts',
  'test/cli/log-format.test.ts',
  'test/ops/sbom.test.ts',
  'test/ops/shutdown.test.ts',
  'test/record/recorder.test.ts',
  'test/sim/server-cli.test.ts',
  'test/store/journal-aggregates.test.ts',
];
export const WHOLE_RUNS = [
  'test/backtest/backtest.test.ts',
  'test/backtest/column-cache.test.ts',
  'test/backtest/declared-exits.test.ts',
  'test/backtest/hyperopt.test.ts',
  'test/backtest/sweep.test.ts',
  'test/backtest/trust.test.ts',
  'test/backtest/validation.test.ts',
  'test/strategies/grid-memo.test.ts',
];

export default defineConfig({
  test: {
    pool: 'forks',
    // Three files at a time on 2 cores: the suite mostly waits on the processes, servers and databases it starts
    // (user + system CPU is about 1.1 cores of its wall time). Fresh clone, same tree: 748 s with two, 673 s with
    // three. Vitest's own default (cores - 1) ran it one file at a time on a 2-core machine: 1,110 s there.
    maxWorkers: '150%',
    // Whatever a test file started is killed when it ends, pass or fail.
    setupFiles: ['test/support/stop-children.ts'],
    // Vitest sets MODE=test (Vite's mode), which is the bot's paper/live switch: blank means the default.
    env: { MODE: '' },
    // `npm test` runs the three; `npm run test:fast` the first (docs/testing.md). A test waits for the event it
    // needs (test/support/until.ts), never for a guessed time: the timeouts below only end a test that hangs, and
    // are wide enough for a machine loaded many times over.
    projects: [
      {
        extends: true,
        test: {
          name: 'in-process',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/chaos/**', ...PROCESS_FILES, ...WHOLE_RUNS],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'processes',
          include: ['test/e2e/**/*.test.ts', ...PROCESS_FILES, ...WHOLE_RUNS],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
