/** The output folder of a sweep: sweep.csv, sweep.json and sweep.html. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { JobSettings } from './job-settings.js';
import { csv } from './report-files.js';
import { dataLines, moduleLine, settingsLine } from './report-html.js';
import { type ConfigSource, overrideText } from './strategy-configs.js';
import { MACHINE_PRECISION, type Metrics } from './summary.js';
import { type Ranking, rankingText, type SweepAxis, type SweepResult } from './sweep.js';
import { sweepHtml } from './sweep-html.js';
import type { HoldoutRecord, WalkForwardRecord } from './validation-runs.js';
import type { LuckRecord } from './luck/luck.js';
import type { RecordingFile } from './tick-data.js';

export interface SweepRecord {
  /** The unit's name (its strategy files' instance names). */
  name: string;
  sources: readonly ConfigSource[];
  data: readonly RecordingFile[];
  settings: JobSettings;
  axes: readonly SweepAxis[];
  /** Every combination run, --set keys included. */
  combos: readonly Record<string, unknown>[];
  ranking: Ranking;
  /** Ranked (with --holdout: on the in-sample part; with --walk-forward: on the last window's train part). */
  results: readonly SweepResult[];
  holdout?: HoldoutRecord;
  walkForward?: WalkForwardRecord;
  /** How much of the best is luck (sweepLuck), over the ranked results' combinations. */
  luck: LuckRecord | null;
}

export function sweepCsv(results: readonly SweepResult[], keys: readonly string[]): string {
  const metricKeys: (keyof Metrics)[] = [
    'totalReturnPct',
    'sharpe',
    'sortino',
    'maxDrawdownPct',
    'winRatePct',
    'profitFactor',
    'fills',
    'roundTrips',
    'expectancy',
    'calmar',
    'feesQuote',
    'exposurePct',
    'finalEquity',
  ];
  return csv(
    ['rank', 'status', 'index', ...keys, ...metricKeys, 'ended'],
    results.map((r) => [
      r.rank ?? undefined,
      r.status,
      r.index,
      ...keys.map((k) => overrideText(r.overrides[k])),
      ...metricKeys.map((k) => {
        const v = r.metrics[k];
        return v === null || typeof v === 'object' ? '' : v;
      }),
      r.ended.join('; '),
    ]),
  );
}

/** Writes sweep.csv, sweep.json and sweep.html into `dir` (created when missing). */
export async function writeSweepReport(dir: string, sweep: SweepRecord): Promise<void> {
  const { sources, data, settings, axes, combos, results } = sweep;
  const keys = axes.map((a) => a.key);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'sweep.csv'), sweepCsv(results, keys));
  const record = {
    precision: MACHINE_PRECISION,
    configs: sources.map((s) => ({ file: s.file, sha256: s.sha256, module: s.module })),
    data,
    settings,
    axes,
    rankBy: sweep.ranking.rankBy,
    minTrades: sweep.ranking.minTrades,
    ranking: rankingText(sweep.ranking),
    luck: sweep.luck,
    // The gaps in the data the ranked runs replayed (every combination replays the same ticks).
    maxGapMs: results[0]?.dataGaps.maxGapMs ?? null,
    gaps: results[0]?.dataGaps.gaps ?? [],
    results: results.map(({ rank, status, index, overrides, metrics, ended }) => ({
      rank,
      status,
      index,
      overrides,
      metrics,
      ended,
    })),
    ...(sweep.holdout ? { holdout: sweep.holdout } : {}),
    ...(sweep.walkForward ? { walkForward: sweep.walkForward } : {}),
  };
  await writeFile(path.join(dir, 'sweep.json'), `${JSON.stringify(record, null, 2)}\n`);
  const inputs = [
    ...sources.flatMap((s) => [`config ${s.file} (sha256 ${s.sha256.slice(0, 12)}…)`, moduleLine(s.module)]),
    ...dataLines(data),
    ...(settings.from !== undefined || settings.to !== undefined
      ? [`period ${settings.from ?? 'start'} to ${settings.to ?? 'end'}`]
      : []),
    settingsLine(settings),
    ...Object.entries(combos[0] ?? {})
      .filter(([k]) => !keys.includes(k))
      .map(([k, v]) => `set ${k} = ${overrideText(v)}`),
    `${combos.length} combinations of ${keys.join(', ')}`,
  ];
  const title = `Sweep ${sweep.name} on ${data.map((f) => f.name).join(', ')}`;
  await writeFile(
    path.join(dir, 'sweep.html'),
    await sweepHtml({
      title,
      inputs,
      axes,
      sampleMs: settings.sampleMs,
      ranking: sweep.ranking,
      results,
      holdout: sweep.holdout,
      walkForward: sweep.walkForward,
      luck: sweep.luck,
    }),
  );
}
