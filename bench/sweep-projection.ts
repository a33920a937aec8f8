/** bench:sweep's and bench:hyperopt's projection to issue 39's goal (1,000 runs over a year within 10 minutes). */

/** A year of one-minute candles of one pair, as the candle importer makes ticks of them (four a candle). */
export const YEAR_TICKS = 365 * 1440 * 4;

/**
 * Minutes that `runs` backtests over a year of one pair's one-minute candles would take, from `seconds` a run
 * over `ticks` ticks measured here: linear in the ticks (the replay is), which over-counts what a run costs
 * whatever its length (its start), so the projection errs long.
 */
export function projectToYear(seconds: number, ticks: number, runs: number): number {
  return (seconds * (YEAR_TICKS / ticks) * runs) / 60;
}
