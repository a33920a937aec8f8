/**
 * Process-level shutdown: SIGTERM/SIGINT/SIGHUP run the orderly stop once and exit 0; a second signal exits at once;
 * the parent process going away (npm killed with SIGKILL or SIGHUP, which it does not forward) runs it too;
 * an uncaught exception or unhandled rejection is logged and runs the same orderly stop, exiting 1. The stop
 * is bounded, so a hung close can never keep the process alive forever. SQLite commits are atomic, so even a
 * forced exit leaves no half-written state, only work not yet done (which the restart reconciles).
 */
import type { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { exitProcess, type Logger } from './logger.js';

export interface ShutdownOptions {
  logger: Logger;
  /** The orderly stop: schedulers, engine, servers, database. */
  stop: (reason: string) => Promise<void>;
  /** The whole orderly stop may take this long before the process exits anyway (default 30 s). */
  timeoutMs?: number;
  /** For tests: where signals and process errors come from, and how to exit. */
  process?: EventEmitter;
  exit?: (code: number) => void;
  /**
   * Watch the parent process and stop in order once it is gone (an orphan is adopted by init or a subreaper, so
   * its parent pid changes). Checked every `intervalMs`; `parentPid` (tests) reads the current parent pid.
   */
  watchParent?: { intervalMs?: number; parentPid?: () => number | undefined };
}

export interface Shutdown {
  /** Aborted when a shutdown was asked for (a start-up retry loop stops waiting). */
  readonly signal: AbortSignal;
  /** Runs the orderly stop (once) and exits with `code`. */
  trigger(reason: string, code: number): Promise<void>;
  /** Removes the handlers (tests). */
  dispose(): void;
}

const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Exit code when a second signal cuts the orderly stop short: 128 + the signal's number, as shells do. */
const FORCED_CODE: Record<(typeof SIGNALS)[number], number> = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 };

/**
 * This process's parent pid as the kernel says now (process.ppid is read once at start-up): from /proc on
 * Linux; elsewhere undefined while the original parent still exists, 1 once it is gone.
 */
export function currentParentPid(original = process.ppid): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The command name in parentheses may hold spaces; the fields after it are fixed: state, then ppid.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    try {
      process.kill(original, 0);
      return original;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 1 : original;
    }
  }
}

export function installShutdown(options: ShutdownOptions): Shutdown {
  const { logger } = options;
  const proc = options.process ?? process;
  const exit = options.exit ?? ((code: number) => exitProcess(logger, code, 2_000));
  // A second signal means now: no waiting for the log sink either.
  const exitNow = options.exit ?? ((code: number) => exitProcess(logger, code, 0));
  const timeoutMs = options.timeoutMs ?? 30_000;
  const controller = new AbortController();
  let stopping: Promise<void> | undefined;

  const trigger = (reason: string, code: number): Promise<void> => {
    if (stopping) return stopping;
    controller.abort(new Error(reason));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<number>((resolve) => {
      timer = setTimeout(() => resolve(1), timeoutMs);
      timer.unref();
    });
    const orderly = options.stop(reason).then(
      () => code,
      (err: unknown) => {
        logger.error({ err }, 'shutdown: the orderly stop failed');
        return 1;
      },
    );
    stopping = Promise.race([orderly, deadline]).then((exitCode) => {
      clearTimeout(timer);
      if (exitCode !== code) logger.error(`shutdown: not clean within ${timeoutMs} ms or failed: exiting ${exitCode}`);
      exit(exitCode);
    });
    return stopping;
  };

  const onSignal = (signal: (typeof SIGNALS)[number]) => () => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now without waiting for the orderly stop`);
      exitNow(FORCED_CODE[signal]);
      return;
    }
    logger.info(`${signal} received: stopping (send it again to exit at once)`);
    void trigger(signal, 0);
  };
  const onError = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, `${kind}: stopping the bot`);
    void trigger(kind, 1);
  };

  const handlers: [string, (arg: unknown) => void][] = [
    ...SIGNALS.map((s): [string, (arg: unknown) => void] => [s, onSignal(s)]),
    ['uncaughtException', onError('uncaught exception')],
    ['unhandledRejection', onError('unhandled promise rejection')],
  ];
  for (const [event, handler] of handlers) proc.on(event, handler);
  let parentTimer: NodeJS.Timeout | undefined;
  if (options.watchParent) {
    const read = options.watchParent.parentPid ?? (() => currentParentPid());
    // The parent this process was started by (process.ppid is read at start-up, before a parent could go).
    const parent = options.watchParent.parentPid ? read() : process.ppid;
    // PID 1 (a container's init, systemd) has no parent to lose; one that cannot be read cannot be watched.
    if (parent !== undefined && parent > 1) {
      parentTimer = setInterval(() => {
        const now = read();
        if (now === undefined || now === parent || stopping) return;
        clearInterval(parentTimer);
        logger.warn(`the parent process (pid ${parent}) is gone: stopping`);
        void trigger('parent process exited', 0);
      }, options.watchParent.intervalMs ?? 500);
      parentTimer.unref();
    }
  }
  return {
    signal: controller.signal,
    trigger,
    dispose: () => {
      clearInterval(parentTimer);
      for (const [event, handler] of handlers) proc.off(event, handler);
    },
  };
}
