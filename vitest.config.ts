import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Real collaborators (HTTP servers on loopback, SQLite files, the daemon) need more than the default.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // A file per core: the suite mostly waits on the processes, servers and databases it starts. Vitest's own
    // default (cores - 1) ran it one file at a time on a 2-core machine: 1,110 s there, 548 s with two.
    maxWorkers: '100%',
    // Whatever a test file started is killed when it ends, pass or fail.
    setupFiles: ['test/support/stop-children.ts'],
    // Vitest sets MODE=test (Vite's mode), which is the bot's paper/live switch: blank means the default.
    env: { MODE: '' },
  },
});
