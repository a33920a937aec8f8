/** The tables printed on stdout: metrics side by side for the runs of one call, and a sweep's ranking. */
import type { RefusalGroup } from './run-log.js';
import type { HoldoutRecord, WalkForwardRecord } from './validation-runs.js';
import type { BacktestSummary, Metrics, ScalarMetric } from './summary.js';
import { D } from '../market/decimal.js';
import { roundedText } from '../market/display.js';
import { overrideText } from './strategy-configs.js';
import { OBJECTIVE_METRIC, objective, type Ranking, type SweepResult } from './sweep.js';

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
  ['expectancy', 'expectancy (quote)'],
  ['cagrPct', 'CAGR %'],
  ['calmar', 'Calmar'],
  ['feesQuote', 'fees (quote)'],
  ['exposurePct', 'exposure %'],
  ['finalEquity', 'final equity'],
];

function text(value: Metrics[ScalarMetric]): string {
  return value === null ? 'n/a' : String(value);
}

/** Amounts of the quote asset: printed to its precision (summary.json keeps every digit). */
const MONEY: ReadonlySet<ScalarMetric> = new Set(['expectancy', 'feesQuote', 'finalEquity']);

const YEAR_MS = 365 * 86_400_000;

/** One column per run, then what a reader must know to read them: conventions, short spans, data problems. */
export function metricsTable(runs: readonly { name: string; summary: BacktestSummary }[]): string {
  const cell = (s: BacktestSummary, key: ScalarMetric) => {
    const value = s.metrics[key];
    return MONEY.has(key) && value !== null ? roundedText(String(value), s.period.quotePrecision) : text(value);
  };
  const table = textTable([
    ['', ...runs.map((r) => r.name)],
    ...ROWS.map(([key, label]) => [label, ...runs.map((r) => cell(r.summary, key))]),
  ]);
  return [table, ...runNotes(runs)].join('\n');
}

/** A run's pairs, one row each (closed trades, their PnL, exposure), when it traded more than one instance. */
export function pairsTable(name: string, summary: BacktestSummary): string | undefined {
  if (summary.pairs.length < 2) return undefined;
  const money = (v: string) => roundedText(v, summary.period.quotePrecision);
  return textTable([
    [name, 'closed trades', 'win rate %', 'PnL closed', 'exposure %'],
    ...summary.pairs.map((p) => [p.instance, String(p.trades), text(p.winRatePct), money(p.pnl), p.exposurePct]),
    [
      'total',
      String(summary.metrics.roundTrips),
      text(summary.metrics.winRatePct),
      money(summary.pairs.reduce((sum, p) => sum.plus(p.pnl), new D(0)).toFixed()),
      summary.metrics.exposurePct,
    ],
  ]);
}

/** How to read a run's ratios: Sharpe's and Sortino's conventions, and a CAGR of less than a year's data. */
export function readingNotes(summary: BacktestSummary): string[] {
  const { sampleMs } = summary.inputs;
  const notes = [
    `Sharpe and Sortino: the equity's simple returns every ${sampleMs / 60_000} minutes of data time, annualised ` +
      `by sqrt(${Math.round(YEAR_MS / sampleMs)} periods a year, 365-day years), risk-free rate 0; Sharpe's ` +
      "deviation is the sample's (n - 1), Sortino's the downside deviation over every return.",
  ];
  const spanMs = Date.parse(summary.period.to) - Date.parse(summary.period.from);
  if (spanMs < YEAR_MS)
    notes.push(
      `CAGR and Calmar compound ${(spanMs / 86_400_000).toFixed(2)} days of data into a year: a rate at which ` +
        'this run would have grown, not a forecast.',
    );
  return notes;
}

/** The notes under the metrics: how to read them, partial data, gaps. */
function runNotes(runs: readonly { name: string; summary: BacktestSummary }[]): string[] {
  const first = runs[0]?.summary;
  if (first === undefined) return [];
  const notes = readingNotes(first);
  const many = runs.length > 1;
  for (const { name, summary } of runs) {
    const who = many ? `${name}: ` : '';
    for (const d of summary.inputs.data.filter((f) => f.partial !== undefined))
      notes.push(
        `${who}PARTIAL DATA: ${d.path} was read only up to line ${(d.partial?.lines ?? 0) + 1} ` +
          `(${d.partial?.reason}; --allow-partial)`,
      );
    if (summary.gaps.length > 0) {
      const longest = summary.gaps.reduce((a, b) => (b.ms > a.ms ? b : a));
      notes.push(
        `${who}GAPS: ${summary.gaps.length} stretch(es) without a price longer than ${summary.maxGapMs / 1000} s ` +
          `(--max-gap), the longest ${(longest.ms / 60_000).toFixed(1)} min of ${longest.symbol} from ` +
          `${longest.from} (summary.json gaps, report.html); the equity series takes no sample inside them`,
      );
    }
  }
  return notes;
}

/** The metric columns of a ranking besides the objective's (the objective comes first, never twice). */
const RANKING_METRICS: [ScalarMetric, string][] = [
  ['totalReturnPct', 'return %'],
  ['sharpe', 'Sharpe'],
  ['maxDrawdownPct', 'max DD %'],
  ['winRatePct', 'win %'],
];

/** The ranking's columns, for the printed table and the sweep page: header, then one row per result. */
export function rankingRows(
  results: readonly SweepResult[],
  keys: readonly string[],
  ranking: Ranking,
  ended: (r: SweepResult) => string,
): string[][] {
  const metric = OBJECTIVE_METRIC[ranking.rankBy];
  const columns = RANKING_METRICS.filter(([key]) => key !== metric);
  const head = ['rank', ...keys, ranking.rankBy, ...columns.map(([, label]) => label), 'trades', 'fills'];
  return [
    head,
    ...results.map((r) => [
      r.rank === null ? r.status : String(r.rank),
      ...keys.map((k) => overrideText(r.overrides[k])),
      text(objective(r.metrics, ranking.rankBy)),
      ...columns.map(([key]) => text(r.metrics[key])),
      String(r.metrics.roundTrips),
      String(r.metrics.fills),
      ended(r),
    ]),
  ];
}

/** The ranking: ranked first, then the combinations not ranked with their status (failed, too few trades). */
export function sweepTable(results: readonly SweepResult[], keys: readonly string[], ranking: Ranking): string {
  const early = results.some((r) => r.ended.length > 0);
  const [head, ...rows] = rankingRows(results, keys, ranking, (r) =>
    r.ended.length > 0 ? String(r.ended.length) : '',
  );
  return textTable(early ? [[...head!, 'ended early'], ...rows] : [head!, ...rows.map((r) => r.slice(0, -1))]);
}

/** Holdout: the in-sample ranking's best ten beside their results on the held-out part. */
export function holdoutTable(h: HoldoutRecord, keys: readonly string[], ranking: Ranking): string {
  const rows = h.results.filter((r) => r.inSample.rank !== null).slice(0, 10);
  return `holdout: ranked on ${h.inSample.from} to ${h.inSample.to}, held out ${h.outOfSample.from} to ${h.outOfSample.to}\n${textTable(
    [
      [
        'in-sample rank',
        ...keys,
        `${ranking.rankBy} in`,
        `${ranking.rankBy} out`,
        'return % in',
        'return % out',
        'out rank',
      ],
      ...rows.map((r) => [
        String(r.inSample.rank),
        ...keys.map((k) => overrideText(r.overrides[k])),
        text(objective(r.inSample.metrics, ranking.rankBy)),
        text(objective(r.outOfSample.metrics, ranking.rankBy)),
        r.inSample.metrics.totalReturnPct,
        r.outOfSample.metrics.totalReturnPct,
        r.outOfSample.rank === null ? r.outOfSample.status : String(r.outOfSample.rank),
      ]),
    ],
  )}`;
}

/** Walk-forward: each window's pick, its in-sample and out-of-sample results, then the stitched figures. */
export function walkForwardTable(w: WalkForwardRecord, keys: readonly string[], ranking: Ranking): string {
  const table = textTable([
    ['window', 'test from', 'test to', ...keys, `${ranking.rankBy} in`, `${ranking.rankBy} out`, 'return % out'],
    ...w.windows.map((x, i) => [
      String(i + 1),
      x.test.from,
      x.test.to,
      ...keys.map((k) => (x.chosen ? overrideText(x.chosen.overrides[k]) : '-')),
      x.chosen ? text(objective(x.chosen.inSample, ranking.rankBy)) : 'none ranked',
      x.outOfSample ? text(objective(x.outOfSample, ranking.rankBy)) : x.outcome.toUpperCase(),
      x.outOfSample ? x.outOfSample.totalReturnPct : '-',
    ]),
  ]);
  const notes = w.windows.flatMap((x, i) => windowNotes(x, i + 1, ranking));
  if (w.untested)
    notes.push(
      `not tested: ${w.untested.from} to ${w.untested.to}, after the last test part (the windows do not reach the ` +
        `data's end; --walk-forward N, --train and --test choose them)`,
    );
  const { stitched } = w;
  const complete = stitched.complete
    ? ''
    : ` (INCOMPLETE: ${stitched.windowsTested} of ${w.windows.length} windows tested to their end)`;
  return (
    `walk-forward:\n${table}\n${notes.join('\n')}${notes.length > 0 ? '\n' : ''}` +
    `stitched out-of-sample${complete}: return ${stitched.returnPct} %, max drawdown ${stitched.maxDrawdownPct} %, ` +
    `walk-forward efficiency ${efficiencyText(w)}`
  );
}

/** The efficiency, or n/a with its reason. */
export function efficiencyText(w: WalkForwardRecord): string {
  return w.efficiency ?? w.efficiencyNote ?? 'n/a';
}

/** What a reader of one window's row must be told: a failure, no pick, a pick that lost in-sample too. */
function windowNotes(x: WalkForwardRecord['windows'][number], n: number, ranking: Ranking): string[] {
  const notes: string[] = [];
  if (x.trainFailures.length > 0)
    notes.push(`window ${n}: ${x.trainFailures.length} combination(s) FAILED on the train part (never picked)`);
  if (x.outcome !== 'tested') notes.push(`window ${n} ${x.outcome.toUpperCase()}: ${x.ended[0] ?? ''}`);
  const inSample = x.chosen && objective(x.chosen.inSample, ranking.rankBy);
  const floor = ranking.rankBy === 'profit-factor' ? 1 : 0;
  if (x.chosen && inSample !== null && inSample !== undefined && Number(inSample) < floor)
    notes.push(
      `window ${n}: the pick's in-sample ${ranking.rankBy} is ${inSample} (below ${floor}): it is the least bad ` +
        'combination on the train part, not a good one',
    );
  return notes;
}

/** How many refusal groups the printed table and the report list before summing up the rest. */
export const REFUSAL_LINES = 10;

/** "refused 120,959 SELL intents of grid-btcusdt: <reason>", most frequent first; the rest summed up. */
export function refusalLines(refusals: readonly RefusalGroup[], max = REFUSAL_LINES): string[] {
  const lines = refusals
    .slice(0, max)
    .map(
      (r) =>
        `refused ${r.count.toLocaleString('en-US')} ${r.side} intent${r.count === 1 ? '' : 's'} of ${r.instance}: ${r.reason}`,
    );
  const rest = refusals.slice(max);
  if (rest.length > 0) {
    const count = rest.reduce((n, r) => n + r.count, 0);
    lines.push(`refused ${count.toLocaleString('en-US')} more intents for ${rest.length} other reasons (log.jsonl)`);
  }
  return lines;
}
