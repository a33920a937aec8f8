/**
 * When V8 compiles a function with its optimising compiler (TurboFan): once the function has run a while, by a
 * measure each V8 names its own way. Left at V8's default, a `bot backtest` of the grid on the 10x recording
 * (Node 20) compiled about 255 functions, many of them lukewarm (start-up, a fill's path run 690 times, the
 * report), and the compiler's threads took about 0.75 of the process's 2.1 CPU s. With the threshold raised about
 * ninefold, only code that runs long is compiled: the compiler's threads took about 0.3 CPU s, and the process
 * 0.84 of the CPU in all for the same wall time (docs/benchmarks.md). On Node 22 (the image's), whose Maglev
 * compiles first, the same run took 0.91 of the CPU (9,000 to 27,000 alike, 81,000 worse).
 * Only the commands that replay set it (cli/commands.ts `replays`): Node documents a V8 flag changed after start as
 * a possible cause of unpredictable behaviour, and the daemon, long-lived and mostly idle, would gain nothing from
 * taking that risk with the account it trades.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * The flag that raises the threshold on this V8 (its major version, from process.versions.v8), or undefined where
 * none was measured: V8 answers a flag it does not know with an error line on stderr, so none is guessed.
 *   - V8 11 (Node 20, 21): `--interrupt-budget`, bytecode executed, 66 KB by default.
 *   - V8 12 (Node 22, 23, the image's): `--invocation-count-for-turbofan`, 3,000 by default (times the function's
 *     bytecode length; Maglev, its faster compiler, tiers up as before).
 */
export function tierUpFlag(v8: string = process.versions.v8): string | undefined {
  const major = Number.parseInt(v8, 10);
  if (major === 11) return '--interrupt-budget=600000';
  if (major === 12) return '--invocation-count-for-turbofan=27000';
  return undefined;
}

/**
 * Raises V8's tier-up threshold for the whole process (the flag is the process's: every thread and worker thread,
 * started before or after, reads it). Called by the command line before it loads a command that replays.
 */
export function tierUpLater(): void {
  const flag = tierUpFlag();
  if (flag !== undefined) setFlagsFromString(flag);
}
