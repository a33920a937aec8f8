/**
 * Waiting for the event a test needs (a line, a row, a file, a port) on a loaded machine: `until` checks again
 * and again until the event has happened, and gives up only when it can no longer happen (the process it
 * depends on exited: `giveUp`), never after a guessed time. A wait for something that never comes is ended by
 * the test's own timeout, the hang guard of its project (vitest.config.ts); the wait stops with it.
 */
import type { ChildProcess } from 'node:child_process';
import { TestRunner } from 'vitest';

export interface UntilOptions {
  /** Why the event can no longer come (a process it needs exited), else undefined: the wait fails at once. */
  giveUp?: () => string | undefined;
  /** Context for the failure (a process's last lines). */
  tail?: () => string;
  /** How often to check (ms); default 50. */
  every?: number;
}

/**
 * Resolves with the first value `check` gives that is not undefined or false. A check that throws counts as not
 * yet (its last error is named if the wait gives up).
 */
export async function until<T>(
  what: string,
  check: () => T | undefined | false | Promise<T | undefined | false>,
  options: UntilOptions = {},
): Promise<T> {
  let lastError: unknown;
  const ended = TestRunner.getCurrentTest()?.context.signal;
  const failure = (why: string) => {
    const last = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
    const tail = options.tail?.() ?? '';
    return new Error(`${why} waiting for ${what}${last}${tail === '' ? '' : `\n${tail}`}`);
  };
  for (;;) {
    if (ended?.aborted === true) {
      // The test's timeout has already been reported: what it was waiting for goes beside it, on stderr.
      const err = failure('the test ended');
      process.stderr.write(`${err.message}\n`);
      throw err;
    }
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      lastError = undefined;
    } catch (err) {
      lastError = err;
    }
    const why = options.giveUp?.();
    if (why !== undefined) throw failure(why);
    await new Promise((resolve) => setTimeout(resolve, options.every ?? 50));
  }
}

/** giveUp for a wait on what a child process does: it has exited. */
export function whenExited(child: ChildProcess, name = 'the process'): () => string | undefined {
  return () =>
    child.exitCode !== null || child.signalCode !== null
      ? `${name} exited (${child.signalCode ?? `code ${child.exitCode}`})`
      : undefined;
}

/**
 * giveUp after `ms`: only for scripts that run outside vitest (bench/, the container test), which have no test
 * timeout to end a wait that never ends. A test waits for its event, not for a guess of how long it takes.
 */
export function deadline(ms: number): () => string | undefined {
  const end = Date.now() + ms;
  return () => (Date.now() > end ? `${ms} ms passed` : undefined);
}
