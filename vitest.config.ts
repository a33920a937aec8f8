import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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

/**
 * The files that take the longest (seconds on a fresh clone, this 2-core machine: .tmp/vitest.json), longest first.
 * They start before every other file:
 * on a fresh clone Vitest has no durations and starts the larger files first, project by project (chaos,
 * in-process, processes), so a long file could start late and run on alone at the end. A file that takes half a
 * minute or more belongs here; test/lint/suite-projects.test.ts fails on a listed file that does not exist.
 */
export const LONG_FILES = [
  'test/e2e/declared-exits-kill.test.ts', // 140 s
  'test/chaos/faults.test.ts', // 61 s
  'test/chaos/crash.test.ts', // 52 s
  'test/backtest/queue.test.ts', // 50 s
  'test/e2e/exits-reload.test.ts', // 49 s
  'test/chaos/paper-restart.test.ts', // 34 s
  'test/e2e/notify.test.ts', // 30 s
];

/** Vitest's order (failed first, then the longest, or the largest when it knows no durations), LONG_FILES first. */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => {
      const i = LONG_FILES.indexOf(relative(spec.project.config.root, spec.moduleId));
      return i === -1 ? LONG_FILES.length : i;
    };
    // Array.prototype.sort is stable: the other files keep Vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    // Three files at a time on 2 cores: the suite mostly waits on the processes, servers and databases it starts
    // (user + system CPU is about 1.1 cores of its wall time with two). A number: Vitest caps a percentage at the
    // core count, so '150%' ran two. Vitest's own default (cores - 1) ran one file at a time here: 1,110 s.
    maxWorkers: Math.ceil(availableParallelism() * 1.5),
    sequence: { sequencer: LongFilesFirst },
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
