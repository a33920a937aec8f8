/**
 * Cron expressions evaluated as a pure function of time: `next(after)` is the first match strictly after an
 * epoch-ms instant, in UTC. Parsing and matching are croner's (no dependencies, seconds field, a function of
 * a given instant rather than of the wall clock, which node-cron could not do); schedules that repeat every
 * hour (any seconds and minutes, every hour, day, month and weekday: all the bot's schedules) are answered
 * from a table of the hour's offsets, because a backtest asks for millions of firings.
 */
import { Cron } from 'croner';

const HOUR_MS = 3_600_000;
/**
 * UTC as an offset of 0 minutes, not as the time zone 'UTC': the same instants (UTC has no daylight saving; the
 * tests hold the two equal), but croner reads a named zone through Intl.DateTimeFormat, whose first use maps
 * ICU's data and builds its formatters: about 8 MB more resident memory in every process that evaluates a
 * schedule (the daemon, each backtest), and a formatter call per evaluation.
 */
const OPTIONS = { utcOffset: 0, paused: true } as const;

/** The problem with an expression (5 or 6 fields: [second] minute hour day month weekday), or undefined. */
export function cronProblem(expression: string): string | undefined {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length < 5 || fields.length > 6) return `expected 5 or 6 fields but got ${fields.length}`;
  try {
    new Cron(expression, OPTIONS);
    return undefined;
  } catch (err) {
    return (err instanceof Error ? err.message : String(err)).replace(/^CronPattern: /, '');
  }
}

/** Sorted instants (ms) of `pattern`'s matches in [from, from + span). */
function matchesWithin(pattern: string, from: number, span: number): number[] {
  const cron = new Cron(pattern, OPTIONS);
  const out: number[] = [];
  for (let at = cron.nextRun(new Date(from - 1)); at !== null && at.getTime() < from + span; at = cron.nextRun(at))
    out.push(at.getTime() - from);
  return out;
}

export class CronSchedule {
  private readonly cron: Cron;
  /** Offsets (ms) of the matches within any hour, ascending, when the expression repeats every hour. */
  readonly hourly: readonly number[] | undefined;
  /**
   * The last answer from the table and its index in it: a schedule is mostly asked for the match after the one
   * it gave last (a backtest's jobs, the timers), which is then the next entry, without a search.
   */
  private lastNext = NaN;
  private lastIndex = 0;

  /** Throws an Error naming the problem (callers say which file or variable it came from). */
  constructor(readonly expression: string) {
    const problem = cronProblem(expression);
    if (problem !== undefined) throw new Error(`invalid cron expression ${JSON.stringify(expression)}: ${problem}`);
    this.cron = new Cron(expression, OPTIONS);
    const fields = expression.trim().split(/\s+/);
    const [second, minute, ...rest] = fields.length === 6 ? fields : ['0', ...fields];
    if (rest.every((f) => f === '*')) {
      const seconds = matchesWithin(`${second} * * * * *`, 0, 60_000);
      const minutes = matchesWithin(`0 ${minute} * * * *`, 0, HOUR_MS);
      this.hourly = minutes.flatMap((m) => seconds.map((s) => m + s));
    }
  }

  /** The first match strictly after `after` (epoch ms); Infinity when there is none. */
  next(after: number): number {
    const hourly = this.hourly;
    if (hourly === undefined) {
      const at = this.cron.nextRun(new Date(Math.floor(after / 1000) * 1000 + 999));
      return at === null ? Infinity : at.getTime();
    }
    if (hourly.length === 0) return Infinity;
    const hour = Math.floor(after / HOUR_MS) * HOUR_MS;
    const offset = after - hour;
    let lo: number;
    if (after === this.lastNext) lo = this.lastIndex + 1;
    else {
      lo = 0;
      let hi = hourly.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((hourly[mid] as number) <= offset) lo = mid + 1;
        else hi = mid;
      }
    }
    let next: number;
    if (lo < hourly.length) next = hour + (hourly[lo] as number);
    else {
      lo = 0;
      next = hour + HOUR_MS + (hourly[0] as number);
    }
    this.lastNext = next;
    this.lastIndex = lo;
    return next;
  }

  /** The time between two consecutive matches after `after` (ms), Infinity when there are not two. */
  intervalAfter(after: number): number {
    const first = this.next(after);
    return this.next(first) - first;
  }
}
