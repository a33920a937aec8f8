/**
 * When V8 compiles a function with its optimising compiler (TurboFan). Each function has an interrupt budget, in
 * bytecode executed; V8 considers compiling it after spending the budget a few times over. At V8's default (66 KB
 * on Node 20, 132 KB on Node 22) a `bot backtest` of the grid on the 10x recording compiled about 255 functions,
 * many of them lukewarm (start-up, a fill's path run 690 times, the report), and the compiler's threads took about
 * 0.75 of the process's 2.1 CPU s. With the budget at INTERRUPT_BUDGET only code that runs long is compiled: the
 * compiler's threads took about 0.3 CPU s, the process 0.84 of the CPU in all and the same wall time (docs/benchmarks.md,
 * "V8's tier-up budget"). A daemon, long-lived and mostly idle, compiles what it runs a little later.
 */
import { setFlagsFromString } from 'node:v8';

/** The budget set: about nine times Node 20's default, four and a half times Node 22's. */
export const INTERRUPT_BUDGET = 600_000;

/**
 * Raises V8's tier-up budget for the whole process (the flag is the process's: every thread and worker thread,
 * started before or after, reads it). A flag that V8 does not know is ignored, so a later Node that renames it
 * runs at V8's default. Called where a process starts its work: the command line before it loads a command, and
 * the function that starts a sweep's threads (for a sweep run from elsewhere: the bench, a test).
 */
export function tierUpLater(): void {
  setFlagsFromString(`--interrupt-budget=${INTERRUPT_BUDGET}`);
}
