/**
 * A command's `run(argv)` in process with what it printed: each run's console.log and console.error lines go to
 * that run's own lists, followed through its awaits (AsyncLocalStorage), never to whichever test happens to be
 * capturing at the time. So a run that outlives its test (timed out, still printing) writes into its own lists,
 * and no test reads another's output. Lines printed outside any run go to the console as usual.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface Printed {
  out: string[];
  err: string[];
}

const printed = new AsyncLocalStorage<Printed>();
let routed = false;

/** Sends console.log and console.error to the running command's lists, once for the process. */
function routeConsole(): void {
  if (routed) return;
  routed = true;
  const { log, error } = console;
  console.log = (...a: unknown[]) => {
    const to = printed.getStore();
    if (to === undefined) log(...a);
    else to.out.push(a.join(' '));
  };
  console.error = (...a: unknown[]) => {
    const to = printed.getStore();
    if (to === undefined) error(...a);
    else to.err.push(a.join(' '));
  };
}

/** A command's `run(argv)` in process: its exit code and the lines it wrote to stdout and stderr. */
export async function capture(
  command: (argv: string[]) => Promise<number>,
  args: string[],
): Promise<{ code: number; out: string[]; err: string[] }> {
  routeConsole();
  const lines: Printed = { out: [], err: [] };
  const code = await printed.run(lines, () => command(args));
  return { code, ...lines };
}
