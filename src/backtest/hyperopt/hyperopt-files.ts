/**
 * A hyperopt's output folder: hyperopt.json (every trial: its values, status, loss, metrics, failures; the
 * best; the luck figures), hyperopt.csv (one row a trial), hyperopt.html, and best.json (the strategy file with
 * the best values set, unless --min-dsr refused them). trials.jsonl, the search's own log, is there too.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { csv } from '../report-files.js';
import { dataLines, moduleLine, settingsLine } from '../report-html.js';
import { overrideAssignments, overrideText } from '../strategy-configs.js';
import { MACHINE_PRECISION, type Metrics } from '../summary.js';
import { hyperoptHtml } from './hyperopt-html.js';
import { type HyperoptRecord, type RankedTrial, rankingLine } from './hyperopt-record.js';
import { dimensionText } from './space.js';

const METRICS: (keyof Metrics)[] = [
  'totalReturnPct',
  'sharpe',
  'sortino',
  'calmar',
  'maxDrawdownPct',
  'winRatePct',
  'profitFactor',
  'roundTrips',
  'fills',
  'feesQuote',
  'finalEquity',
];

export function hyperoptCsv(trials: readonly RankedTrial[], keys: readonly string[]): string {
  const byTrial = [...trials].sort((a, b) => a.trial - b.trial);
  return csv(
    ['trial', 'batch', 'rank', 'status', 'loss', ...keys, ...METRICS, 'ended', 'problem'],
    byTrial.map((t) => [
      t.trial,
      t.batch,
      t.rank ?? undefined,
      t.status,
      t.loss ?? undefined,
      ...keys.map((k) => overrideText(t.values[k])),
      ...METRICS.map((k) => {
        const v = t.metrics?.[k];
        return v === null || v === undefined || typeof v === 'object' ? '' : v;
      }),
      t.ended.join('; '),
      t.problem ?? '',
    ]),
  );
}

/** Writes hyperopt.json, hyperopt.csv, hyperopt.html and best.json into `dir`. */
export async function writeHyperoptReport(dir: string, r: HyperoptRecord): Promise<void> {
  const keys = r.hyperopt.space.dimensions.map((d) => d.key);
  await mkdir(dir, { recursive: true });
  const best = r.trials.find((t) => t.rank === 1);
  const record = {
    precision: MACHINE_PRECISION,
    configs: r.sources.map((s) => ({ file: s.file, sha256: s.sha256, module: s.module })),
    data: r.data,
    settings: r.settings,
    set: r.fixed,
    space: r.hyperopt.space.dimensions.map(dimensionText),
    constraints: r.hyperopt.space.constraints.map((c) => c.text),
    sampler: r.hyperopt.sampler,
    seed: r.hyperopt.seed,
    batch: r.hyperopt.batch,
    epochs: r.hyperopt.epochs,
    loss: r.hyperopt.loss,
    minTrades: r.hyperopt.minTrades,
    ranking: rankingLine(r.hyperopt),
    best: best
      ? { trial: best.trial, values: best.values, loss: best.loss, metrics: best.metrics, sets: r.sets }
      : null,
    luck: r.luck,
    trials: [...r.trials]
      .sort((a, b) => a.trial - b.trial)
      .map((t) => ({
        trial: t.trial,
        batch: t.batch,
        rank: t.rank,
        status: t.status,
        values: t.values,
        loss: t.loss,
        metrics: t.metrics,
        ended: t.ended,
        problem: t.problem,
      })),
    ...(r.holdout ? { holdout: r.holdout } : {}),
    ...(r.walkForward ? { walkForward: r.walkForward } : {}),
  };
  await writeFile(path.join(dir, 'hyperopt.json'), `${JSON.stringify(record, null, 2)}\n`);
  await writeFile(path.join(dir, 'hyperopt.csv'), hyperoptCsv(r.trials, keys));
  if (r.bestFile !== null) await writeFile(path.join(dir, 'best.json'), `${JSON.stringify(r.bestFile, null, 2)}\n`);
  const inputs = [
    ...r.sources.flatMap((s) => [`config ${s.file} (sha256 ${s.sha256.slice(0, 12)}…)`, moduleLine(s.module)]),
    ...dataLines(r.data),
    ...(r.settings.from !== undefined || r.settings.to !== undefined
      ? [`period ${r.settings.from ?? 'start'} to ${r.settings.to ?? 'end'}`]
      : []),
    settingsLine(r.settings),
    ...overrideAssignments(r.fixed).map((a) => `set ${a}`),
    `space ${record.space.join(' ')}${record.constraints.length > 0 ? `, keeping ${record.constraints.join(', ')}` : ''}`,
    `${r.trials.length} trials of the ${r.hyperopt.sampler} sampler in batches of ${r.hyperopt.batch}, seed ${r.hyperopt.seed}; loss ${r.hyperopt.loss}`,
  ];
  await writeFile(
    path.join(dir, 'hyperopt.html'),
    await hyperoptHtml({
      title: `Hyperopt ${r.name} on ${r.data.map((f) => f.name).join(', ')}`,
      inputs,
      record: r,
    }),
  );
}
