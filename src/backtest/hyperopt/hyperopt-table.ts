/** A hyperopt's printed table: the best trials by loss, then how many were not ranked and why. */
import { textTable } from '../results-table.js';
import { overrideText } from '../strategy-configs.js';
import type { RankedTrial } from './hyperopt-record.js';

/** How many of the best trials the table lists. */
export const TABLE_ROWS = 10;

/** The best `rows` ranked trials, a line each: their values, loss and headline metrics (the page's table too). */
export function bestTrialsTable(
  trials: readonly RankedTrial[],
  keys: readonly string[],
  lossHeader: string,
  rows: number,
): string {
  const text = (v: string | null | undefined) => v ?? 'n/a';
  return textTable([
    ['rank', 'trial', ...keys, lossHeader, 'return %', 'Sharpe', 'max DD %', 'trades'],
    ...trials
      .filter((t) => t.rank !== null)
      .slice(0, rows)
      .map((t) => [
        String(t.rank),
        String(t.trial + 1),
        ...keys.map((k) => overrideText(t.values[k])),
        t.loss === null ? 'n/a' : String(t.loss),
        text(t.metrics?.totalReturnPct),
        text(t.metrics?.sharpe),
        text(t.metrics?.maxDrawdownPct),
        String(t.metrics?.roundTrips ?? ''),
      ]),
  ]);
}

export function hyperoptTable(trials: readonly RankedTrial[], keys: readonly string[], loss: string): string {
  const ranked = trials.filter((t) => t.rank !== null);
  const table = bestTrialsTable(trials, keys, `${loss} loss`, TABLE_ROWS);
  const count = (s: RankedTrial['status']) => trials.filter((t) => t.status === s).length;
  const rest = [
    ['failed', count('failed')],
    ['too few trades', count('too few trades')],
    ['refused by the strategy file', count('refused')],
  ]
    .filter(([, n]) => (n as number) > 0)
    .map(([what, n]) => `${n} ${what}`);
  const shown = Math.min(TABLE_ROWS, ranked.length);
  return `${ranked.length} of ${trials.length} trials ranked${rest.length > 0 ? ` (not ranked: ${rest.join(', ')})` : ''}; the best ${shown}:\n${table}`;
}
