/**
 * `bot hyperopt`: a search over strategy file keys (params, risk, exits and each ROI row, protections) by a
 * sampler (TPE or random) in batches of backtests on the sweep's worker threads or the Redis queue, ranked by a
 * loss; resumable from its output folder; the best's --set flags and strategy file, and how much of it is luck.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { columnCacheDir } from '../backtest/column-cache.js';
import { hyperoptTable } from '../backtest/hyperopt/hyperopt-table.js';
import { writeHyperoptReport } from '../backtest/hyperopt/hyperopt-files.js';
import type { RankedTrial } from '../backtest/hyperopt/hyperopt-record.js';
import { LOSS_OBJECTIVE, LOSSES, type LossName, lossFunction } from '../backtest/hyperopt/loss.js';
import { SAMPLERS, type SamplerName } from '../backtest/hyperopt/sampler.js';
import {
  DEFAULT_BATCH,
  fileTrialLog,
  type HyperoptSettings,
  rankTrials,
  runSearch,
  type SearchJob,
  type SearchProgress,
  type Trial,
} from '../backtest/hyperopt/search.js';
import { parseSpace, spaceCorners } from '../backtest/hyperopt/space.js';
import { longestWarmUpMs, warmUpMs } from '../backtest/job.js';
import { belowMinDsr, luckLines, luckOf, minDsrFlag, minDsrRefusal } from '../backtest/luck/luck.js';
import { claimOutputFolder, inputsHash } from '../backtest/output-folder.js';
import { progressLine } from '../backtest/progress.js';
import { queueUrlFrom } from '../backtest/queue/queue-url.js';
import { holdoutTable, walkForwardTable } from '../backtest/results-table.js';
import {
  checkCombinations,
  configInput,
  instancesOf,
  overrideAssignments,
  readConfigs,
  runInstances,
} from '../backtest/strategy-configs.js';
import {
  defaultWorkers,
  runSweep,
  type SweepExecutor,
  SweepPool,
  type SweepResult,
  sweepThreads,
} from '../backtest/sweep.js';
import { loadTicks, type TickData } from '../backtest/tick-data.js';
import {
  type HoldoutRecord,
  runWalkForward,
  sweepFailures,
  type WalkForwardRecord,
} from '../backtest/validation-runs.js';
import { holdoutSplit, type Span } from '../backtest/validation.js';
import { BotError } from '../errors.js';
import { recordingFiles } from '../record/recording-reader.js';
import { commandSpec, helpText, parseFlags } from './flags.js';
import { commandFailure } from './command-failure.js';
import {
  SPEC as BACKTEST,
  checkSpan,
  hostPortFlag,
  intFlag,
  jobSettings,
  openQueue,
  runInputs,
  safeName,
  setFlags,
  spanOf,
  validationFlags,
} from './backtest.js';

const SEARCH = 'The search:';
const WHERE = 'Where the trials run, and validation:';
const SHARED = [
  'config',
  'data',
  'from',
  'to',
  'balance',
  'fee',
  'maker-fee',
  'taker-fee',
  'no-cache',
  'max-gap',
  'allow-partial',
  'fill-through-ticks',
  'latency-ms',
  'slippage-bps',
  'candle-path',
  'participation',
  'no-cancel',
  'every-tick',
  'together',
  'force',
  'strategies',
  'set',
] as const;
const base = BACKTEST.flags;

export const SPEC = commandSpec({
  name: 'hyperopt',
  usage: 'hyperopt --config FILE --data RECORDING[,RECORDING…] --space KEY=LO..HI [--space …] [flags]',
  about: `Searches strategy file keys for the values with the lowest loss: each trial is a backtest (the same engine
and fill model as bot backtest, whose flags for the data, span, fees and fill model it takes), run in batches
on worker threads or on a Redis queue, each batch proposed from the results of those before it.`,
  flags: {
    ...(Object.fromEntries(SHARED.map((k) => [k, base[k]])) as Pick<typeof base, (typeof SHARED)[number]>),
    out: {
      type: 'string',
      arg: 'DIR',
      doc: 'output folder (default backtests/<config>-<data>-hyperopt-<inputs hash>/)',
    },
    space: {
      type: 'string',
      multiple: true,
      arg: 'KEY=LO..HI',
      doc: 'a float (rounded to about a thousandth of the range); KEY=LO..HI:int an integer; KEY=LO..HI:log a float on a log scale; KEY=a,b,c a choice; A<B (<, <=, >, >=, !=; keys or numbers) a constraint no trial breaks. KEY: params.* (or a bare param name), risk.*, exits.* (stopLossPct, trailingStopPct, trailingActivationPct, a ROI row: exits.roi.60), protections.* (cooldownMinutes, losingTrades.count, …). Repeatable; required',
      section: SEARCH,
    },
    sampler: {
      type: 'string',
      arg: 'NAME',
      doc: 'tpe (default: a tree-structured Parzen estimator, 10 random trials first) or random',
      section: SEARCH,
    },
    epochs: {
      type: 'string',
      arg: 'N',
      doc: 'trials in all (default 100); a larger N with --resume continues a finished search',
      section: SEARCH,
    },
    batch: {
      type: 'string',
      arg: 'N',
      doc: `trials proposed at once (default ${DEFAULT_BATCH}): the results depend on it, never on the workers`,
      section: SEARCH,
    },
    seed: {
      type: 'string',
      arg: 'N',
      doc: 'the random stream (default 0): the same seed and inputs give byte-identical outputs',
      section: SEARCH,
    },
    loss: {
      type: 'string',
      arg: 'NAME',
      doc: 'sharpe (default), sortino, calmar, profit, max-drawdown (the smallest drawdown of a trial that did not lose money), profit-drawdown (return % minus max drawdown %), or strategy (the module’s hyperoptLoss(trial))',
      section: SEARCH,
    },
    'min-trades': {
      type: 'string',
      arg: 'N',
      doc: 'trials with fewer closed trades are listed, not ranked (default 1)',
      section: SEARCH,
    },
    'min-dsr': {
      type: 'string',
      arg: 'P',
      doc: 'print no --set flags (and write no best.json) for a best whose deflated Sharpe ratio is under P (0 to 1)',
      section: SEARCH,
    },
    resume: {
      type: 'boolean',
      doc: 'continue the search kept in the output folder (trials.jsonl): a killed run ends as an uninterrupted one would',
      section: SEARCH,
    },
    workers: { ...base.workers, doc: 'worker threads, at most the cores (default: every core)', section: WHERE },
    queue: { ...base.queue, section: WHERE },
    'serve-data': { ...base['serve-data'], section: WHERE },
    holdout: {
      type: 'string',
      arg: 'P%',
      doc: 'search on the first (100 - P) % of the data, run the ten best on the rest',
      section: WHERE,
    },
    'walk-forward': {
      type: 'string',
      arg: 'N',
      doc: 'a search in each of N train parts, its best run on the test part after it; stitched as a sweep’s',
      section: WHERE,
    },
    train: { ...base.train, section: WHERE },
    test: { ...base.test, section: WHERE },
  },
  notes: `Writes hyperopt.json, hyperopt.csv, hyperopt.html, best.json (the strategy file with the best values) and
trials.jsonl (every trial with its equity: what --resume reads); prints the best trials, how much of the best is
luck (deflated Sharpe ratio, probability of backtest overfitting) and the best's --set flags. Exits 1 when no
trial could be ranked.`,
});

function usage(message: string): BotError {
  return new BotError('E_USAGE', message);
}

export async function run(argv: string[]): Promise<number> {
  try {
    return await hyperopt(argv);
  } catch (err) {
    return commandFailure('hyperopt', err, { alsoNamed: 'backtest' });
  }
}

function choiceFlag<T extends string>(name: string, value: string | undefined, known: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(known as readonly string[]).includes(value))
    throw usage(`--${name} must be one of ${known.join(', ')}, got '${value}'`);
  return value as T;
}

/** Every trial that ran as a sweep's result (a walk-forward's train part chooses among them). */
function asResults(trials: readonly RankedTrial[], fixed: Readonly<Record<string, unknown>>): SweepResult[] {
  return trials
    .filter((t) => t.status !== 'refused' && t.metrics !== null && t.dataGaps !== null)
    .map((t) => ({
      rank: t.rank,
      status: t.status === 'ranked' ? 'ranked' : t.status === 'failed' ? 'failed' : 'too few trades',
      index: t.trial,
      overrides: { ...fixed, ...t.values },
      metrics: t.metrics!,
      ended: t.ended,
      equity: t.equity,
      returns: t.returns,
      dataGaps: t.dataGaps!,
    }));
}

async function hyperopt(argv: string[]): Promise<number> {
  const { values } = parseFlags(SPEC.name, argv, SPEC.flags);
  if (values.help) {
    console.log(helpText(SPEC));
    return 0;
  }
  const { configs, dataFiles, from, to } = runInputs('hyperopt', values);
  if ((values.space ?? []).length === 0) throw usage('--space is required (e.g. --space spacingPct=0.2..1.0)');
  const settings = jobSettings(values);
  const threads = intFlag('workers', values.workers, 1);
  const queue = queueUrlFrom(values.queue);
  if (queue && threads !== undefined) throw usage('--workers and --queue: one or the other');
  const serve = hostPortFlag('serve-data', values['serve-data']);
  if (serve && !queue) throw usage('--serve-data goes with --queue (or SWEEP_QUEUE)');
  const minDsr = minDsrFlag(values['min-dsr']);
  const loss = choiceFlag<LossName>('loss', values.loss, LOSSES, 'sharpe');
  const sampler = choiceFlag<SamplerName>('sampler', values.sampler, SAMPLERS, 'tpe');

  const read = await readConfigs(configs, values.strategies);
  const { sources } = read;
  const { instances, symbols } = await runInstances(read.instances, dataFiles);
  if (sources.length > 1 && values.together !== true)
    throw usage('hyperopt takes one --config (or several with --together): each trial is one run');
  const fixed = Object.fromEntries(setFlags(values.set ?? [], sources));
  const space = parseSpace(values.space ?? [], sources, fixed);
  const h: HyperoptSettings = {
    space,
    sampler,
    epochs: intFlag('epochs', values.epochs, 1) ?? 100,
    batch: intFlag('batch', values.batch, 1) ?? DEFAULT_BATCH,
    seed: intFlag('seed', values.seed, 0) ?? 0,
    loss,
    minTrades: intFlag('min-trades', values['min-trades'], 0) ?? 1,
  };
  // Each end of each range and each choice, before any data is read: a space the strategy file refuses at an end
  // is named now, not trial by trial.
  await checkCombinations(
    sources,
    space.dimensions.flatMap((d) =>
      (d.kind === 'choice' ? d.values : [d.lo, d.hi]).map((v) => ({
        ...fixed,
        [d.key]: d.kind !== 'choice' && d.text ? String(v) : v,
      })),
    ),
  );
  const lossFn = lossFunction(loss, instances[0]?.definition);
  const name = sources.map((s) => String(s.raw.name)).join('+');

  let pool: SweepPool | undefined;
  if (!queue) {
    const { threads: size, capped } = sweepThreads(threads, h.batch);
    if (capped)
      console.error(`hyperopt: --workers ${threads}: this machine has ${defaultWorkers()} cores; using ${size}`);
    pool = new SweepPool(size, sources, settings);
  }
  try {
    // The candles warm up on the data before --from as long as the longest lookback the space can draw asks (its
    // corners); a space with too many corners to try loads all of it. Each trial takes its own warm-up of that.
    const corners = spaceCorners(space, fixed);
    const loadFrom =
      from === undefined || corners === null
        ? undefined
        : from - Math.max(warmUpMs(instances), await longestWarmUpMs(sources, corners));
    const data = await loadTicks(await recordingFiles(dataFiles, symbols, { from: loadFrom, to }), {
      from: loadFrom,
      to,
      allowPartial: settings.allowPartial,
      cacheDir: values['no-cache'] === true ? undefined : columnCacheDir(),
    });
    checkSpan(data, from, to);
    const validation = validationFlags(values, data, settings);
    // Everything the trials depend on but --epochs: a longer search continues in the same folder.
    const hash = inputsHash({
      kind: 'hyperopt',
      configs: sources.map((s) => [s.sha256, s.module.sha256]),
      data: data.files.map((f) => f.sha256),
      settings,
      fixed,
      hyperopt: { ...h, epochs: undefined },
      validation: validation ?? null,
    });
    const dataName = data.files[0]!.name + (data.files.length > 1 ? `+${data.files.length - 1}` : '');
    const dir = values.out ?? path.join('backtests', safeName(`${name}-${dataName}-hyperopt-${hash}`));
    await claimOutputFolder(dir, 'hyperopt', hash, values.force === true);
    const resume = values.resume === true;
    const kept = await access(path.join(dir, 'trials.jsonl')).then(
      () => true,
      () => false,
    );
    if (kept && !resume && values.force !== true)
      throw new BotError(
        'E_OUTPUT_EXISTS',
        `${dir} holds the trials of this search (trials.jsonl): --resume to continue from them, or --force to start again`,
      );
    const queued = queue
      ? await openQueue({ url: queue, load: { from: loadFrom, to, allowPartial: settings.allowPartial }, serve })
      : undefined;
    const executor: SweepExecutor = queued ?? pool!;
    try {
      const job: SearchJob = { sources, data, settings, fixed, hyperopt: h, loss: lossFn };
      const search = async (window: Span | undefined, part: string, file: string) => {
        const log = await fileTrialLog(path.join(dir, file), resume);
        if (log.done.length > 0)
          console.error(`hyperopt: ${part}: ${log.done.length} trials kept in ${file}, resuming`);
        const line = progressLine(`hyperopt ${name}${part === '' ? '' : ` (${part})`}`, 'trials');
        try {
          return rankTrials(
            await runSearch({ ...job, ...(window ? { window } : {}) }, executor, log, (p) => shown(line, p)),
          );
        } finally {
          line?.end();
        }
      };
      let trials: RankedTrial[];
      let holdout: HoldoutRecord | undefined;
      let walkForward: WalkForwardRecord | undefined;
      if (validation?.kind === 'holdout') {
        const split = holdoutSplit(spanOf(data, settings), validation.percent);
        trials = await search(split.inSample, 'in-sample', 'trials.jsonl');
        holdout = await heldOut(job, executor, trials, split, validation.percent);
      } else if (validation?.kind === 'walk-forward') {
        const windows = validation.windows;
        let last: RankedTrial[] = [];
        const ranking = { rankBy: LOSS_OBJECTIVE[loss], minTrades: h.minTrades };
        ({ record: walkForward } = await runWalkForward(
          { sources, data, settings, combos: [], ranking },
          executor,
          windows,
          spanOf(data, settings),
          () => undefined,
          async (window) => {
            const i = windows.findIndex((w) => w.train.from === window.from && w.train.to === window.to);
            last = await search(
              window,
              `window ${i + 1} train`,
              i === windows.length - 1 ? 'trials.jsonl' : `trials-window-${i + 1}.jsonl`,
            );
            return asResults(last, fixed);
          },
        ));
        trials = last;
      } else trials = await search(undefined, '', 'trials.jsonl');
      return await report(dir, name, { sources, data, settings, fixed, h, trials, holdout, walkForward, minDsr });
    } finally {
      await queued?.close();
    }
  } finally {
    await pool?.close();
  }
}

function shown(line: ReturnType<typeof progressLine>, p: SearchProgress): void {
  if (!line) return;
  const inBatch = p.batch && p.batch.ticksTotal > 0 ? p.batch.ticks / p.batch.ticksTotal : 0;
  const batchSize = p.batch?.runsTotal ?? 0;
  const best = p.best ? `best ${p.best.loss} (trial ${p.best.trial + 1})` : 'no best yet';
  line.update(Math.min(p.epochs, p.trials + inBatch * batchSize), p.epochs, best);
}

/** The ten best of the in-sample search on the held-out part. */
async function heldOut(
  job: SearchJob,
  executor: SweepExecutor,
  trials: readonly RankedTrial[],
  split: { inSample: Span; outOfSample: Span },
  percent: number,
): Promise<HoldoutRecord> {
  const best = trials.filter((t) => t.rank !== null).slice(0, 10);
  const outs = await runSweep(
    {
      sources: job.sources,
      data: job.data,
      settings: job.settings,
      combos: best.map((t) => ({ ...job.fixed, ...t.values })),
      window: split.outOfSample,
      ranking: { rankBy: LOSS_OBJECTIVE[job.hyperopt.loss], minTrades: job.hyperopt.minTrades },
    },
    executor,
  );
  const byIndex = new Map(outs.map((r) => [r.index, r]));
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    percent,
    inSample: { from: iso(split.inSample.from), to: iso(split.inSample.to) },
    outOfSample: { from: iso(split.outOfSample.from), to: iso(split.outOfSample.to) },
    results: best.map((t, i) => {
      const o = byIndex.get(i) as SweepResult;
      return {
        index: t.trial,
        overrides: { ...job.fixed, ...t.values },
        inSample: { rank: t.rank, status: t.status, metrics: t.metrics! },
        outOfSample: { rank: o.rank, status: o.status, metrics: o.metrics, equity: o.equity, ended: o.ended },
      };
    }),
  };
}

interface Outcome {
  sources: SearchJob['sources'];
  data: TickData;
  settings: SearchJob['settings'];
  fixed: Readonly<Record<string, unknown>>;
  h: HyperoptSettings;
  trials: RankedTrial[];
  holdout: HoldoutRecord | undefined;
  walkForward: WalkForwardRecord | undefined;
  minDsr: number | undefined;
}

async function report(dir: string, name: string, o: Outcome): Promise<number> {
  const { trials, h } = o;
  // The luck of the best among every distinct trial that ran (a value drawn twice is one trial).
  const distinct = new Map<string, Trial>();
  for (const t of [...trials].sort((a, b) => a.trial - b.trial))
    if (t.status !== 'refused' && !distinct.has(JSON.stringify(t.values))) distinct.set(JSON.stringify(t.values), t);
  const ran = [...distinct.values()];
  const best = trials.find((t) => t.rank === 1);
  const at = best === undefined ? -1 : ran.findIndex((t) => JSON.stringify(t.values) === JSON.stringify(best.values));
  const luck = luckOf(ran, at < 0 ? undefined : at, o.settings.sampleMs);
  const refused = best !== undefined && luck !== null && belowMinDsr(luck, o.minDsr);
  const overrides = best ? { ...o.fixed, ...best.values } : undefined;
  const sets = overrides && !refused ? overrideAssignments(overrides).map((a) => `--set ${a}`) : null;
  const source = o.sources[0]!;
  const bestFile =
    overrides && !refused && o.sources.length === 1
      ? configInput(source, await instancesOf(source, overrides), overrides).config
      : null;
  await writeHyperoptReport(dir, {
    name,
    sources: o.sources,
    data: o.data.files,
    settings: o.settings,
    fixed: o.fixed,
    hyperopt: h,
    trials,
    luck,
    sets,
    bestFile,
    holdout: o.holdout,
    walkForward: o.walkForward,
  });
  const keys = h.space.dimensions.map((d) => d.key);
  console.error(`hyperopt: ${trials.length} trials, results in ${dir}`);
  console.log(hyperoptTable(trials, keys, h.loss));
  const ranking = { rankBy: LOSS_OBJECTIVE[h.loss], minTrades: h.minTrades };
  if (o.holdout) console.log(`\n${holdoutTable(o.holdout, keys, ranking)}`);
  if (o.walkForward) console.log(`\n${walkForwardTable(o.walkForward, keys, ranking)}`);
  if (luck) console.log(`\n${luckLines(luck).join('\n')}`);
  // A best that fails on the held-out part is a failure of the search, named as a sweep's holdout names it.
  const heldOut = o.holdout ? sweepFailures([], o.holdout) : [];
  for (const f of heldOut)
    console.error(`hyperopt: FAILED: ${f.part}: ${overrideAssignments(f.overrides, keys).join(' ')}: ${f.ended[0]}`);
  if (!best) {
    console.error(`hyperopt: no trial could be ranked (failed, refused, or fewer than ${h.minTrades} closed trades)`);
    return 1;
  }
  if (refused) console.error(`hyperopt: ${minDsrRefusal(luck, o.minDsr as number)}`);
  else {
    console.log(`\nbest: ${sets!.join(' ')}`);
    if (bestFile !== null)
      console.error(`hyperopt: the strategy file with these values: ${path.join(dir, 'best.json')}`);
  }
  return heldOut.length > 0 || (o.walkForward && !o.walkForward.stitched.complete) ? 1 : 0;
}
