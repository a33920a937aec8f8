/** The Clock port: the only source of time for the engine and strategies (wall clock live, virtual in backtests). */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
