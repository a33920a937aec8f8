/**
 * The Clock port: the one source of time for everything that reads or waits on the bot's time (engine,
 * strategies, scheduler, risk's daily reset, notifier, recorder, the simulated exchange). Implementations
 * (src/clocks/): the wall clock (live, paper on live prices), the replay clock (paper on recordings: the
 * data's time at PAPER_SPEED) and the virtual clock (backtests and tests, stepped by whoever drives it).
 */
export interface Timer {
  /** Stops it firing again; idempotent. */
  cancel(): void;
}

export interface Clock {
  /** Epoch milliseconds in this clock's time. */
  now(): number;
  /** Calls `fire` once, when `ms` of this clock's time have passed. */
  setTimer(fire: () => unknown, ms: number): Timer;
  /** Resolves after `ms` of this clock's time, or as soon as `signal` aborts (without an error). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Calls `fire(due)` each time this clock's time crosses a match of the cron expression (UTC, optional
   * seconds field), `due` being the match. Matches a late wake-up crossed together fire once on the wall clock
   * (the virtual and replay clocks fire each, and await a promise `fire` returns before their time moves on).
   * Throws a ConfigError on an invalid expression.
   */
  cron(expression: string, fire: (due: number) => unknown): Timer;
  /** This clock's milliseconds per wall-clock millisecond (1 live, PAPER_SPEED on a replay; undefined: stepped). */
  readonly pace: number | undefined;
  /**
   * Whether its time waits for the work a firing returned before it moves on (the virtual clock, and the replay
   * clock, whose pace is a ceiling): what a job does is then done at the job's time, as a backtest does it. The
   * wall clock does not wait.
   */
  readonly awaitsFirings: boolean;
}

/** What a part that only reads the time needs of a clock. */
export type ClockReading = Pick<Clock, 'now'>;

/** What a part that reads the time and sleeps needs of a clock (the notifier). */
export type Timers = Pick<Clock, 'now' | 'sleep'>;
