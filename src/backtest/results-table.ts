/** The tables printed on stdout: metrics side by side for the runs of one call, and a sweep's ranking. */
import type { Metrics, ScalarMetric } from './summary.js';
import { overrideText } from './strategy-configs.js';
import type { SweepResult } from './sweep.js';

export function textTable(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  return rows
    .map((row) =>
      row.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join('  '),
    )
    .join('\n');
}

const ROWS: [ScalarMetric, string][] = [
  ['totalReturnPct', 'total return %'],
  ['buyAndHoldPct', 'buy and hold %'],
  ['maxDrawdownPct', 'max drawdown %'],
  ['sharpe', 'Sharpe'],
  ['sortino', 'Sortino'],
  ['winRatePct', 'win rate %'],
  ['profitFactor', 'profit factor'],
  ['fills', 'trades (fills)'],
  ['roundTrips', 'round trips'],
  ['feesQuote', 'fees (quote)'],
  ['exposurePct', 'exposure %'],
  ['finalEquity', 'final equity'],
];

function text(value: Metrics[ScalarMetric]): string {
  return value === null ? 'n/a' : String(value);
}

/** One column per run. */
export function metricsTable(runs: readonly { name: string; metrics: Metrics }[]): string {
  return textTable([
    ['', ...runs.map((r) => r.name)],
    ...ROWS.map(([key, label]) => [label, ...runs.map((r) => text(r.metrics[key]))]),
  ]);
}

/** The ranking; an `ended` column (how many instances stopped early) only when some combination had one. */
export function sweepTable(results: readonly SweepResult[], keys: readonly string[]): string {
  const early = results.some((r) => r.ended.length > 0);
  return textTable([
    ['rank', ...keys, 'return %', 'Sharpe', 'max DD %', 'win %', 'fills', ...(early ? ['ended early'] : [])],
    ...results.map((r) => [
      String(r.rank),
      ...keys.map((k) => overrideText(r.overrides[k])),
      r.metrics.totalReturnPct,
      text(r.metrics.sharpe),
      r.metrics.maxDrawdownPct,
      text(r.metrics.winRatePct),
      String(r.metrics.fills),
      ...(early ? [r.ended.length > 0 ? String(r.ended.length) : ''] : []),
    ]),
  ]);
}
