/**
 * Every process a test starts is stopped by the test run, whatever the test's outcome: spawners register their
 * children here, and the setup file (test/support/stop-children.ts) kills whatever is still running after each
 * test file and when the worker exits. A test that fails half-way cannot leave a daemon trading in the background.
 */
import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
const groups = new Set<ChildProcess>();

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

/** Registers `child` (and, with `group`, its whole process group: spawned with detached: true) for the clean-up. */
export function trackChild<T extends ChildProcess>(child: T, options: { group?: boolean } = {}): T {
  live.add(child);
  if (options.group) groups.add(child);
  child.once('exit', () => live.delete(child)); // its group, if any, stays registered
  return child;
}

/** SIGKILLs every registered child still running (its group too when registered so); returns how many. */
export function killTrackedChildren(): number {
  let killed = 0;
  for (const child of live) {
    if (!running(child) || child.pid === undefined) continue;
    child.kill('SIGKILL');
    killed++;
  }
  // A group outlives its leader (an orphaned bot under a killed npm): it goes whether the leader runs or not.
  for (const child of groups) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
      killed++;
    } catch {
      // No process left in the group.
    }
  }
  live.clear();
  groups.clear();
  return killed;
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
