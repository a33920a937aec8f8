/**
 * What a backtest says while it runs: the engine's and the strategies' log as JSON lines stamped with the
 * data's time (the virtual clock), for log.jsonl; every refused intent counted by instance, side and reason;
 * every hook error with the strategy file and line it came from. One logger per run, in memory: the lines are
 * kept up to MAX_LOG_LINES (the counts and errors are always complete).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import type { Clock } from '../ports/clock.js';

/** Lines of log.jsonl kept in memory; beyond it lines are counted, not kept (refusals stay counted). */
export const MAX_LOG_LINES = 200_000;

export interface RefusalGroup {
  instance: string;
  side: string;
  reason: string;
  count: number;
}

export interface HookError {
  instance: string;
  /** When, in the data's time. */
  time: number;
  message: string;
  /** `file:line:column` in the strategy module, when the stack passes through it. */
  at: string | undefined;
}

interface LogObject {
  intent?: { side?: unknown };
  reason?: unknown;
  err?: unknown;
  at?: string;
}

/** The strategy module frame of an error's stack (or its cause's): `file:line:column`, the file as given. */
export function strategyFrame(err: unknown, moduleFiles: readonly string[]): string | undefined {
  const wanted = new Map(moduleFiles.map((f) => [path.resolve(f), f]));
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    for (const m of (e.stack ?? '').matchAll(/(?:\(|\s)((?:file:\/\/)?\/[^\s():]+):(\d+):(\d+)\)?/g)) {
      const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
      const given = wanted.get(file);
      if (given !== undefined) return `${given}:${m[2]}:${m[3]}`;
    }
  }
  return undefined;
}

export class RunLog {
  readonly logger: Logger;
  readonly lines: string[] = [];
  /** Lines written beyond MAX_LOG_LINES (not kept). */
  dropped = 0;
  readonly hookErrors: HookError[] = [];
  private readonly refused = new Map<string, RefusalGroup>();

  /** `moduleFiles`: the strategy modules run, to find a hook error's line; `keepLines` false: count only. */
  constructor(clock: Clock, moduleFiles: readonly string[], keepLines = true) {
    const sink = {
      write: (line: string): void => {
        if (!keepLines) return;
        if (this.lines.length < MAX_LOG_LINES) this.lines.push(line.endsWith('\n') ? line.slice(0, -1) : line);
        else this.dropped++;
      },
    };
    const count = (instance: string, side: string, reason: string) => this.countRefusal(instance, side, reason);
    const hookErrors = this.hookErrors;
    this.logger = pino(
      {
        level: 'debug',
        base: undefined,
        formatters: { level: (label) => ({ level: label }) },
        timestamp: () => `,"time":"${new Date(clock.now()).toISOString()}"`,
        hooks: {
          logMethod(args, method) {
            const object = args[0] as LogObject | string;
            // Only a refusal or an error needs the line's instance: reading the bindings parses them (pino).
            if (
              typeof object === 'object' &&
              object !== null &&
              ((typeof object.reason === 'string' && object.intent !== undefined) || object.err instanceof Error)
            ) {
              const bound = (this.bindings() as { instance?: unknown }).instance;
              const instance = typeof bound === 'string' ? bound : '';
              const side = object.intent?.side;
              if (typeof object.reason === 'string' && object.intent !== undefined)
                count(instance, typeof side === 'string' ? side : '', object.reason);
              if (object.err instanceof Error) {
                const at = strategyFrame(object.err, moduleFiles);
                if (at !== undefined) object.at = at;
                if (object.err.name === 'StrategyError')
                  hookErrors.push({ instance, time: clock.now(), message: object.err.message, at });
              }
            }
            method.apply(this, args);
          },
        },
      },
      sink,
    );
  }

  private countRefusal(instance: string, side: string, reason: string): void {
    const key = `${instance}\n${side}\n${reason}`;
    const group = this.refused.get(key);
    if (group) group.count++;
    else this.refused.set(key, { instance, side, reason, count: 1 });
  }

  /** Refused intents grouped by instance, side and reason: most frequent first, then by instance, side, reason. */
  refusals(): RefusalGroup[] {
    return [...this.refused.values()].sort(
      (a, b) =>
        b.count - a.count ||
        a.instance.localeCompare(b.instance) ||
        a.side.localeCompare(b.side) ||
        a.reason.localeCompare(b.reason),
    );
  }

  /** log.jsonl's text: the lines kept, and a last line saying how many were not, if any. */
  jsonl(): string {
    const tail =
      this.dropped > 0
        ? [
            JSON.stringify({
              level: 'warn',
              msg: `log truncated: ${this.dropped} more lines not kept (${MAX_LOG_LINES} kept)`,
            }),
          ]
        : [];
    const all = [...this.lines, ...tail];
    return all.length === 0 ? '' : `${all.join('\n')}\n`;
  }
}
