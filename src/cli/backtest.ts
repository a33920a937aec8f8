/**
 * `bot backtest`: the real engine and strategies against the simulated exchange's matching engine, in
 * process, on a virtual clock, over recordings. Each --config is its own backtest (own account, own engine)
 * unless --together runs them all in one engine on one account. --sweep runs a grid of params on worker
 * threads instead of one run.
 */
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { runJob, warmUpMs } from '../backtest/job.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from '../backtest/job-settings.js';
import { progressLine } from '../backtest/progress.js';
import { EXPORTS, type ExportKind, writeReport } from '../backtest/report-files.js';
import {
  holdoutTable,
  metricsTable,
  pairsTable,
  refusalLines,
  sweepTable,
  walkForwardTable,
} from '../backtest/results-table.js';
import { claimOutputFolder, inputsHash, type OutputKind } from '../backtest/output-folder.js';
import {
  checkCombinations,
  type ConfigSource,
  overrideKey,
  overrideAssignments,
  readConfigs,
  runInstances,
} from '../backtest/strategy-configs.js';
import { writeSweepReport } from '../backtest/sweep-files.js';
import {
  DEFAULT_RANKING,
  defaultWorkers,
  parseSweep,
  RANK_BY,
  type RankBy,
  type Ranking,
  runSweep,
  SweepPool,
  sweepLuck,
  sweepThreads,
  sweepGrid,
  type SweepProgress,
  type SweepResult,
  type SweepWorkers,
} from '../backtest/sweep.js';
import type { openQueueExecutor as OpenQueueExecutor } from '../backtest/queue/coordinator.js';
import { queueUrlFrom } from '../backtest/queue/queue-url.js';
import { columnCacheDir } from '../backtest/column-cache.js';
import { loadTicks, releaseColumns, type TickData } from '../backtest/tick-data.js';
import {
  type HoldoutRecord,
  runHoldout,
  runWalkForward,
  sweepFailures,
  type WalkForwardRecord,
} from '../backtest/validation-runs.js';
import { parseDuration, parseHoldout, type Span, type WalkWindow, walkForwardWindows } from '../backtest/validation.js';
import { recordingFiles } from '../record/recording-reader.js';
import { BotError } from '../errors.js';
import { dec, isPlainDecimal } from '../market/decimal.js';
import { stepOf } from '../sim/data-step.js';
import { parseCandlePath, parseParticipation } from '../sim/candle-path.js';
import { commandSpec, helpText, parseFlags, timeFlag } from './flags.js';
import { commandFailure } from './command-failure.js';
import { belowMinDsr, luckLines, minDsrFlag, minDsrRefusal } from '../backtest/luck/luck.js';
import { valueAt } from '../backtest/number-column.js';
import { researchImport } from '../ops/research-import.js';

const SWEEPS = 'Parameter sweeps:';
const WALK = 'Validation of a sweep (one of the two):';

/** The strategy files and the recordings a run is over (bot backtest's, bot check-strategy's). */
export const RUN_INPUT_FLAGS = {
  config: { type: 'string', multiple: true, arg: 'FILE', doc: 'a strategy file (repeatable; required)' },
  data: {
    type: 'string',
    multiple: true,
    arg: 'RECORDING',
    doc: 'recordings, comma-separated or repeated (required)',
  },
} as const;

export const SPEC = commandSpec({
  name: 'backtest',
  usage: 'backtest --config FILE [--config FILE2 …] --data RECORDING[,RECORDING…] [flags]',
  about: `RECORDING: a recording file, or a folder: the recorder's --out folder (the strategies' symbols are taken from
it) or one symbol's folder of day files; day files outside --from/--to are not read. Pairs trade by the rules
the recordings carry (bot record and bot import-candles write them); the shipped samples use the built-in ones.

Runs the strategy files against recordings with the real engine on the simulated exchange (in process,
virtual clock, no network). Each --config is its own backtest unless --together.`,
  flags: {
    ...RUN_INPUT_FLAGS,
    from: { type: 'string', arg: 'ISO', doc: 'only ticks with from <= time' },
    to: { type: 'string', arg: 'ISO', doc: 'only ticks with time < to' },
    balance: {
      type: 'string',
      arg: 'A=N,B=M',
      doc: 'starting balances, any asset of the pairs (default: 10000 of each quote asset)',
    },
    fee: {
      type: 'string',
      arg: 'RATIO',
      doc: 'maker and taker fee (default 0.001; a pair whose rules carry fees keeps them)',
    },
    'maker-fee': { type: 'string', arg: 'RATIO', doc: 'the maker fee alone (over --fee)' },
    'taker-fee': { type: 'string', arg: 'RATIO', doc: 'the taker fee alone (over --fee)' },
    'no-cache': {
      type: 'boolean',
      doc: 'neither read nor write the column cache (COLUMN_CACHE_DIR, default data/cache/columns; COLUMN_CACHE_DIR=off turns it off for every run)',
    },
    'max-gap': {
      type: 'string',
      arg: 'LEN',
      doc: 'a longer stretch without a tick of a pair (90s, 5m, 2h) is a gap: listed in summary.json and the report, and the equity series takes no sample inside it (default 4 steps of the data, at least 60s: a missing one-minute candle is one)',
    },
    'allow-partial': {
      type: 'boolean',
      doc: 'read a truncated or corrupt recording up to where it breaks (the summary says how much was used) instead of stopping with the file and offset',
    },
    'fill-through-ticks': {
      type: 'string',
      arg: 'N',
      doc: 'ticks a resting limit must be traded through to fill (default 1; 0 = on touch)',
    },
    'latency-ms': {
      type: 'string',
      arg: 'N',
      doc: "data-time delay before an order reaches the simulated book (default: one step of the data, 15000 for imported candles): a MARKET order decided on a tick fills at a later tick's price, never at the one the strategy saw",
    },
    'slippage-bps': { type: 'string', arg: 'N', doc: 'taker slippage in basis points (default 0)' },
    'candle-path': {
      type: 'string',
      arg: 'NAME',
      doc: 'on data imported from candles, the path inside each candle (its high and low are seen, their order is not): shortest (default: an up candle dips first, a down candle rises first, the fewest crossings of resting orders), nearer-first (the extreme nearer the open first: the path before this choice), longest, high-first or low-first',
    },
    participation: {
      type: 'string',
      arg: 'P',
      doc: "fills take at most this share of the volume traded on each tick on candle data (a candle's volume in four equal parts), takers first, a MARKET order taking the rest on the following ticks; takers pay the square-root impact of their size on the 24-hour range and volume: 10% (default), 0.25, 5%…; 0 or off: neither",
    },
    'no-cancel': { type: 'boolean', doc: 'a venue without cancel (strategies that require it are refused)' },
    'every-tick': {
      type: 'boolean',
      doc: "every instance sees every recorded tick (default: each instance's schedule, as on paper, in the data's time, with the orders poll every 5 s and the refresh every minute as the daemon's defaults)",
    },
    together: { type: 'boolean', doc: 'all configs in one engine on one account (one quote asset)' },
    out: {
      type: 'string',
      arg: 'DIR',
      doc: "output folder (default backtests/<config>-<data>-<inputs hash>/; a sweep's backtests/<config>-<data>-sweep-<hash>/)",
    },
    force: {
      type: 'boolean',
      doc: "write into a folder that holds the outputs of other inputs (never a sweep into a single run's folder, nor the reverse)",
    },
    strategies: { type: 'string', arg: 'DIR', doc: "where strategy modules live (default: the project's strategies/)" },
    set: {
      type: 'string',
      multiple: true,
      arg: 'key=value',
      doc: 'run with a params path set to value (repeatable; the file is not changed)',
    },
    export: {
      type: 'string',
      multiple: true,
      arg: 'trades',
      doc: 'also write trades.csv (the closed trades, as in summary.json)',
    },
    sweep: {
      type: 'string',
      multiple: true,
      arg: 'key=a,b,c',
      doc: 'a params path (spacingPct, risk.maxOpenOrders, …); several make a grid',
      section: SWEEPS,
    },
    workers: {
      type: 'string',
      arg: 'N',
      doc: 'sweep worker threads, at most the cores (default: every core)',
      section: SWEEPS,
    },
    queue: {
      type: 'string',
      arg: 'redis://HOST:PORT',
      doc: "run the combinations as jobs on this Redis instead (SWEEP_QUEUE does the same; rediss:// for TLS, redis://:PASSWORD@HOST:PORT with a password): 'bot worker' processes on any machine run them; same outputs as a local run",
      section: SWEEPS,
    },
    'serve-data': {
      type: 'string',
      arg: 'HOST:PORT',
      doc: 'with --queue: serve the recordings to the workers over HTTP on this address (default: workers read them at the same path, e.g. a shared mount)',
      section: SWEEPS,
    },
    'rank-by': {
      type: 'string',
      arg: 'OBJECTIVE',
      doc: 'how a sweep ranks: return, sharpe, sortino, calmar, profit-factor or expectancy (default sharpe)',
      section: SWEEPS,
    },
    'min-trades': {
      type: 'string',
      arg: 'N',
      doc: 'sweep combinations with fewer closed trades are listed, not ranked (default 0)',
      section: SWEEPS,
    },
    'min-dsr': {
      type: 'string',
      arg: 'P',
      doc: 'print no --set flags for a best whose deflated Sharpe ratio is under P (0 to 1): every sweep reports it, and the probability of backtest overfitting, beside its best',
      section: SWEEPS,
    },
    holdout: {
      type: 'string',
      arg: 'P%',
      doc: 'a sweep ranks on the first (100 - P) % of the data and reports its best on the rest',
      section: WALK,
    },
    'walk-forward': {
      type: 'string',
      arg: 'N',
      doc: 'a sweep in N windows: each picks the best on its train part, runs it on its test part; the test parts are stitched (out-of-sample equity, walk-forward efficiency)',
      section: WALK,
    },
    train: {
      type: 'string',
      arg: 'LEN',
      doc: "the walk-forward's train length (7d, 36h, 90m, 2w); default: three test lengths",
      section: WALK,
    },
    test: {
      type: 'string',
      arg: 'LEN',
      doc: "the walk-forward's test length; default: the data in N + 3 equal test lengths",
      section: WALK,
    },
  },
  notes: `Writes summary.json, orders.csv, fills.csv, equity.csv, log.jsonl and report.html (a sweep: sweep.csv,
sweep.json and sweep.html). Exits 1, after writing them, when an instance ended early (a hook threw, it was
paused or refused at start).`,
});

function usage(message: string): BotError {
  return new BotError('E_USAGE', `backtest: ${message}`);
}

const isoOf = (ms: number) => new Date(ms).toISOString();

/**
 * --from/--to asking for more than the data hold is refused, naming the flag and where the data start or end
 * (a span reported as asked for would not be the one tested). A step or a minute of slack: --from at the data's
 * first candle's open, --to at the end of its last one.
 */
export function checkSpan(data: TickData, from: number | undefined, to: number | undefined): void {
  const { time } = data.columns;
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < data.length; i++) {
    const t = valueAt(time, i);
    if (t < first) first = t;
    if (t > last) last = t;
  }
  if (data.length === 0) return;
  const slack = Math.max(2 * dataStep(data), 60_000);
  const files = data.files.map((f) => f.name).join(', ');
  const span = `(the data read span ${isoOf(first)} to ${isoOf(last)})`;
  if (from !== undefined && first > from + slack)
    throw usage(
      `--from ${isoOf(from)} asks for more than the data hold: ${files} have no tick from then until ` +
        `${isoOf(first)} ${span}; give a --from within the data, or leave it out`,
    );
  if (to !== undefined && last < to - slack)
    throw usage(
      `--to ${isoOf(to)} asks for more than the data hold: ${files} have no tick after ${isoOf(last)} ` +
        `${span}; give a --to within the data, or leave it out`,
    );
}

/** What a run is over (bot backtest's and bot hyperopt's): strategy files, recordings, and the span asked for. */
export function runInputs(
  command: 'backtest' | 'hyperopt' | 'check-strategy',
  values: { config?: string[]; data?: string[]; from?: string; to?: string },
): { configs: string[]; dataFiles: string[]; from: number | undefined; to: number | undefined } {
  const configs = values.config ?? [];
  const dataFiles = (values.data ?? []).flatMap((d) => d.split(',')).filter((d) => d !== '');
  if (configs.length === 0) throw usage('--config is required (a strategy file, e.g. config/grid-btcusdt.json)');
  if (dataFiles.length === 0)
    throw usage('--data is required (a recording, e.g. data/samples/BTCUSDT-2023-03-01_21.jsonl.gz)');
  const from = timeFlag(command, 'from', values.from);
  const to = timeFlag(command, 'to', values.to);
  if (from !== undefined && to !== undefined && from >= to) throw usage(`--from must be before --to`);
  return { configs, dataFiles, from, to };
}

/** The job settings the run flags give (bot backtest's and bot hyperopt's), defaults for those not given. */
export function jobSettings(values: {
  balance?: string;
  fee?: string;
  'maker-fee'?: string;
  'taker-fee'?: string;
  'allow-partial'?: boolean;
  'fill-through-ticks'?: string;
  'latency-ms'?: string;
  'slippage-bps'?: string;
  'max-gap'?: string;
  'candle-path'?: string;
  participation?: string;
  'no-cancel'?: boolean;
  'every-tick'?: boolean;
  from?: string;
  to?: string;
}): JobSettings {
  return {
    ...DEFAULT_JOB_SETTINGS,
    balances: balanceFlag(values.balance),
    makerFee: feeFlag('maker-fee', values['maker-fee']) ?? feeFlag('fee', values.fee) ?? DEFAULT_JOB_SETTINGS.makerFee,
    takerFee: feeFlag('taker-fee', values['taker-fee']) ?? feeFlag('fee', values.fee) ?? DEFAULT_JOB_SETTINGS.takerFee,
    allowPartial: values['allow-partial'] === true,
    fillThroughTicks:
      intFlag('fill-through-ticks', values['fill-through-ticks'], 0) ?? DEFAULT_JOB_SETTINGS.fillThroughTicks,
    latencyMs: intFlag('latency-ms', values['latency-ms'], 0) ?? DEFAULT_JOB_SETTINGS.latencyMs,
    slippageBps: bpsFlag(values['slippage-bps']) ?? DEFAULT_JOB_SETTINGS.slippageBps,
    maxGapMs:
      values['max-gap'] === undefined ? undefined : parseDuration(values['max-gap'], '--max-gap', '90s, 5m or 2h'),
    candlePath:
      values['candle-path'] === undefined ? DEFAULT_JOB_SETTINGS.candlePath : parseCandlePath(values['candle-path']),
    participation:
      values.participation === undefined
        ? DEFAULT_JOB_SETTINGS.participation
        : parseParticipation(values.participation, '--participation'),
    cancel: values['no-cancel'] !== true,
    everyTick: values['every-tick'] === true,
    from: values.from,
    to: values.to,
  };
}

export function intFlag(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < min)
    throw usage(`--${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}

/** `HOST:PORT` (an IPv6 host in brackets); port 0 takes a free one. */
export function hostPortFlag(name: string, value: string | undefined): { host: string; port: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\[[^\]]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  const port = m ? Number(m[2]) : NaN;
  if (!m || port > 65535) throw usage(`--${name} must be HOST:PORT (e.g. 0.0.0.0:8700), got '${value}'`);
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}

/** Any asset the replayed pairs name (the run checks them against the pairs once the data are read). */
function balanceFlag(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const part of value.split(',')) {
    const [asset, amount, extra] = part.split('=').map((s) => s.trim());
    if (!asset || amount === undefined || extra !== undefined || !isPlainDecimal(amount) || amount.startsWith('-'))
      throw usage(`--balance expects ASSET=AMOUNT[,ASSET=AMOUNT…] with plain decimals, got '${part}'`);
    out[asset] = dec(amount).toFixed();
  }
  return out;
}

function feeFlag(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isPlainDecimal(value) || value.startsWith('-') || dec(value).gt(1))
    throw usage(`--${name} must be a decimal ratio within [0, 1], got '${value}'`);
  return dec(value).toFixed();
}

function bpsFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isPlainDecimal(value) || value.startsWith('-') || dec(value).gt(10000))
    throw usage(`--slippage-bps must be a plain decimal within [0, 10000], got '${value}'`);
  return dec(value).toFixed();
}

export function safeName(text: string): string {
  return text.replace(/[^A-Za-z0-9._+-]+/g, '_');
}

interface Unit {
  name: string;
  sources: ConfigSource[];
}

export async function run(argv: string[]): Promise<number> {
  try {
    return await backtest(argv);
  } catch (err) {
    return commandFailure('backtest', err);
  }
}

async function backtest(argv: string[]): Promise<number> {
  const { values } = parseFlags(SPEC.name, argv, SPEC.flags);
  if (values.help) {
    console.log(helpText(SPEC));
    return 0;
  }
  const { configs, dataFiles, from, to } = runInputs('backtest', values);
  const settings = jobSettings(values);
  const threads = intFlag('workers', values.workers, 1);
  const queue = queueUrlFrom(values.queue);
  if (queue && threads !== undefined) throw usage('--workers and --queue: one or the other');
  const serve = hostPortFlag('serve-data', values['serve-data']);
  if (serve && !queue) throw usage('--serve-data goes with --queue (or SWEEP_QUEUE)');
  const exports = exportFlags(values.export ?? []);
  const rankBy = values['rank-by'] ?? DEFAULT_RANKING.rankBy;
  if (!(RANK_BY as readonly string[]).includes(rankBy))
    throw usage(`--rank-by must be one of ${RANK_BY.join(', ')}, got '${rankBy}'`);
  const ranking: Ranking = {
    rankBy: rankBy as RankBy,
    minTrades: intFlag('min-trades', values['min-trades'], 0) ?? DEFAULT_RANKING.minTrades,
  };
  const sweeps = values.sweep ?? [];
  const minDsr = minDsrFlag(values['min-dsr']);
  if (minDsr !== undefined && sweeps.length === 0) throw usage('--min-dsr goes with --sweep');

  const read = await readConfigs(configs, values.strategies);
  const { sources } = read;
  const { instances, symbols } = await runInstances(read.instances, dataFiles);
  const units: Unit[] =
    values.together === true
      ? [{ name: sources.map((s) => String(s.raw.name)).join('+'), sources }]
      : sources.map((s) => ({ name: String(s.raw.name), sources: [s] }));
  if (sweeps.length > 0 && units.length > 1)
    throw usage('--sweep takes one --config (or several with --together): each combination is one run');
  const axes = sweeps.map((s) => parseSweep(s, sources));
  const sets = setFlags(values.set ?? [], sources);
  const fixed = Object.fromEntries(sets);
  const seen = new Map<string, string>();
  for (const [key, flag] of [
    ...sets.map(([k]) => [k, '--set'] as const),
    ...axes.map((a) => [a.key, '--sweep'] as const),
  ]) {
    const earlier = seen.get(overrideKey(key));
    if (earlier !== undefined) throw usage(`${key} is given twice (${earlier} and ${flag} ${key})`);
    seen.set(overrideKey(key), `${flag} ${key}`);
  }
  const combos = sweepGrid(axes).map((c) => ({ ...fixed, ...c }));
  // The files as read were checked by readConfigs; only overrides need checking again.
  const combosWarmUpMs = sets.length > 0 || axes.length > 0 ? await checkCombinations(sources, combos) : 0;

  // A sweep's worker threads start now: they load the code and the strategies while the data is read.
  let pool: SweepPool | undefined;
  if (axes.length > 0 && !queue) {
    const { threads: size, capped } = sweepThreads(threads, combos.length);
    if (capped)
      console.error(`backtest: --workers ${threads}: this machine has ${defaultWorkers()} cores; using ${size}`);
    pool = new SweepPool(size, units[0]!.sources, settings);
  }
  try {
    // The strategies' candles warm up on the data before --from (the backtest trades from --from on), as long
    // as the longest combination's periods ask.
    const loadFrom = from === undefined ? undefined : from - Math.max(warmUpMs(instances), combosWarmUpMs);
    const data = await loadTicks(await recordingFiles(dataFiles, symbols, { from: loadFrom, to }), {
      from: loadFrom,
      to,
      allowPartial: settings.allowPartial,
      cacheDir: values['no-cache'] === true ? undefined : columnCacheDir(),
    });
    checkSpan(data, from, to);
    const dataName = data.files[0]!.name + (data.files.length > 1 ? `+${data.files.length - 1}` : '');
    // A run with --set gets a folder of its own, not the plain run's.
    const setName = overrideAssignments(fixed)
      .map((a) => `-${a}`)
      .join('');
    // The folder's name and marker carry a hash of everything the outputs depend on (output-folder.ts).
    const hashOf = (unit: Unit, kind: OutputKind) =>
      inputsHash({
        kind,
        configs: unit.sources.map((s) => [s.sha256, s.module.sha256]),
        data: data.files.map((f) => f.sha256),
        settings,
        fixed,
        axes: kind === 'sweep' ? axes : [],
        // What a sweep ranks by and where it splits the data change its results.
        ...(kind === 'sweep' ? { ranking, validation: validation ?? null } : {}),
      });
    const outDir = (unit: Unit, hash: string) =>
      values.out === undefined
        ? path.join(
            'backtests',
            safeName(`${unit.name}-${dataName}${setName}${axes.length > 0 ? '-sweep' : ''}-${hash}`),
          )
        : units.length > 1
          ? path.join(values.out, safeName(unit.name))
          : values.out;
    const force = values.force === true;
    const claimed = async (unit: Unit, kind: OutputKind) => {
      const hash = hashOf(unit, kind);
      const dir = outDir(unit, hash);
      await claimOutputFolder(dir, kind, hash, force);
      return dir;
    };

    const validation = validationFlags(values, data, settings);
    if (validation && axes.length === 0)
      throw usage(`--${validation.kind} takes a --sweep: it chooses among combinations`);
    if (axes.length > 0) {
      const dir = await claimed(units[0]!, 'sweep');
      const executor = queue
        ? await openQueue({
            url: queue,
            load: { from: loadFrom, to, allowPartial: settings.allowPartial },
            serve,
          })
        : undefined;
      try {
        return await sweep(
          units[0]!,
          data,
          settings,
          axes,
          combos,
          executor ?? pool!,
          ranking,
          validation,
          dir,
          minDsr,
        );
      } finally {
        await executor?.close();
      }
    }

    const dirs: string[] = [];
    for (const unit of units) dirs.push(await claimed(unit, 'run'));
    const results: Parameters<typeof metricsTable>[0][number][] = [];
    const refused: string[] = [];
    const failed: string[] = [];
    for (const unit of units) {
      const progress = progressLine(`backtest ${unit.name}`, 'ticks');
      // One run at a time on this thread, and no worker has the data: it walks the candle path in place.
      const { run, summary } = await runJob(unit.sources, data, settings, fixed, {
        onProgress: progress?.update,
        inPlace: true,
      }).finally(() => progress?.end());
      // After the last run nothing reads the ticks: the columns (41 MB on 1.2M ticks) and the run's garbage go
      // before the report is built, which otherwise set the peak (its strings promoted on top of the replay's).
      if (unit === units[units.length - 1]) {
        releaseColumns(data);
        collectGarbage();
      }
      const dir = dirs[units.indexOf(unit)] as string;
      await writeReport(dir, run, summary, exports);
      failed.push(...summary.endedEarly);
      refused.push(...refusalLines(summary.refusals));
      results.push({ name: unit.name, summary });
      console.error(`backtest: ${unit.name}: ${summary.period.ticks} ticks, report in ${dir}`);
    }
    console.log(metricsTable(results));
    for (const { name, summary } of results) {
      const pairs = pairsTable(name, summary);
      if (pairs !== undefined) console.log(`\n${pairs}`);
    }
    if (refused.length > 0) console.log(`\n${refused.join('\n')}`);
    if (failed.length === 0) return 0;
    // Loud, last, and a failure: results of a run whose strategy broke are not results.
    for (const line of failed) console.error(`backtest: FAILED: ${line}`);
    return 1;
  } finally {
    await pool?.close();
  }
}

/**
 * A full garbage collection, now. V8 frees the old generation's garbage, and SharedArrayBuffers no longer
 * referenced, only at a full collection, which it starts when the old generation reaches a limit. The collector
 * comes from a fresh context while --expose-gc is set (as jest's leak detector gets it): the flag is only read
 * when a context is made, and no global of this one changes.
 */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * The queue's executor, its client (BullMQ, ioredis) loaded only for a queued sweep: loaded up front it took a
 * fifth of a plain backtest's memory before the data.
 */
export async function openQueue(options: Parameters<typeof OpenQueueExecutor>[0]) {
  const { openQueueExecutor } = await researchImport(
    'a sweep on a queue (--queue, SWEEP_QUEUE)',
    () => import('../backtest/queue/coordinator.js'),
  );
  return openQueueExecutor(options);
}

/** `--export trades[,…]`: what to add to the output folder. */
function exportFlags(specs: readonly string[]): ExportKind[] {
  const kinds = specs.flatMap((s) => s.split(',')).map((s) => s.trim());
  for (const k of kinds)
    if (!(EXPORTS as readonly string[]).includes(k))
      throw usage(`--export: unknown export '${k}' (known: ${EXPORTS.join(', ')})`);
  return [...new Set(kinds)] as ExportKind[];
}

async function sweep(
  unit: Unit,
  data: TickData,
  settings: JobSettings,
  axes: ReturnType<typeof parseSweep>[],
  combos: Record<string, unknown>[],
  workers: SweepWorkers,
  ranking: Ranking,
  validation: Validation | undefined,
  dir: string,
  minDsr: number | undefined,
): Promise<number> {
  let line: ReturnType<typeof progressLine> | undefined;
  // Threads report ticks as they replay; a queue reports combinations done, running and failed.
  const queued = !(typeof workers === 'number' || workers instanceof SweepPool);
  const phase = (name: string) => {
    line?.end();
    line = progressLine(`sweep ${unit.name}${name === '' ? '' : ` (${name})`}`, queued ? 'runs' : 'ticks');
    const shown = line;
    return (
      shown &&
      ((p: SweepProgress) =>
        queued
          ? shown.update(p.runs, p.runsTotal, `${p.running ?? 0} running, ${p.failed ?? 0} failed`)
          : shown.update(p.ticks, p.ticksTotal, `${p.runs}/${p.runsTotal} runs`))
    );
  };
  const job = { sources: unit.sources, data, settings, combos, ranking };
  let results: SweepResult[];
  let holdout: HoldoutRecord | undefined;
  let walkForward: WalkForwardRecord | undefined;
  try {
    if (validation?.kind === 'holdout') {
      ({ inSample: results, record: holdout } = await runHoldout(
        job,
        workers,
        spanOf(data, settings),
        validation.percent,
        phase,
      ));
    } else if (validation?.kind === 'walk-forward') {
      ({ lastTrain: results, record: walkForward } = await runWalkForward(
        job,
        workers,
        validation.windows,
        spanOf(data, settings),
        phase,
      ));
    } else results = await runSweep(job, workers, phase(''));
  } finally {
    line?.end();
  }
  const keys = axes.map((a) => a.key);
  const luck = sweepLuck(results, settings.sampleMs);
  await writeSweepReport(dir, {
    name: unit.name,
    sources: unit.sources,
    data: data.files,
    settings,
    axes,
    combos,
    ranking,
    results,
    holdout,
    walkForward,
    luck,
  });
  console.error(`backtest: ${combos.length} combinations, results in ${dir}`);
  const title = rankingTitle(holdout, walkForward);
  console.log(`${title === undefined ? '' : `${title}\n`}${sweepTable(results, keys, ranking)}`);
  if (holdout) console.log(`\n${holdoutTable(holdout, keys, ranking)}`);
  if (walkForward) console.log(`\n${walkForwardTable(walkForward, keys, ranking)}`);
  if (luck) console.log(`\n${luckLines(luck).join('\n')}`);
  const best = results.find((r) => r.rank === 1);
  if (best && luck && belowMinDsr(luck, minDsr)) {
    console.error(`backtest: ${minDsrRefusal(luck, minDsr!)}`);
  } else if (best) {
    const sets = overrideAssignments(best.overrides).map((a) => `--set ${a}`);
    console.error(`backtest: for the full report of the best, run it alone with ${sets.join(' ')}`);
  } else console.error(`backtest: no combination could be ranked (failed, or fewer than ${ranking.minTrades} trades)`);
  // Every failure of every part (a walk-forward's train and test parts, a holdout's held-out part), loud and last.
  const failures = sweepFailures(results, holdout, walkForward);
  const failed = results.filter((r) => r.status === 'failed');
  for (const f of failures.filter((f) => f.part !== '')) {
    const where = overrideAssignments(f.overrides, keys).join(' ');
    console.error(`backtest: FAILED: ${f.part}: ${where}: ${f.ended[0]}`);
  }
  if (walkForward && !walkForward.stitched.complete)
    console.error(`backtest: FAILED: the stitched out-of-sample result is incomplete (${walkForward.efficiencyNote})`);
  if (failed.length > 0 && !walkForward) {
    const first = failed[0]!;
    const where = overrideAssignments(first.overrides, keys).join(' ');
    console.error(
      `backtest: FAILED: in ${failed.length} of ${combos.length} combinations an instance ended early (not ranked; ` +
        `column 'ended' of sweep.csv); the first, ${where}: ${first.ended[0]}`,
    );
  }
  return failures.length === 0 && (walkForward?.stitched.complete ?? true) ? 0 : 1;
}

/** What the printed ranking ranks when it is not the whole data: the in-sample part, or the last train part. */
function rankingTitle(holdout?: HoldoutRecord, walkForward?: WalkForwardRecord): string | undefined {
  if (holdout) return `ranking on the in-sample part, ${holdout.inSample.from} to ${holdout.inSample.to}`;
  const last = walkForward?.windows[walkForward.windows.length - 1];
  if (!walkForward || !last) return undefined;
  return (
    `window ${walkForward.windows.length} train: ranking on the last window's train part, ${last.train.from} to ` +
    `${last.train.to} (each window's pick is in the walk-forward table)`
  );
}

export type Validation = { kind: 'holdout'; percent: number } | { kind: 'walk-forward'; windows: WalkWindow[] };

/** The usual time between two ticks of the data (sim/data-step.ts), from its first ticks. */
function dataStep(data: TickData): number {
  const time = data.columns.time;
  return stepOf(Array.from({ length: Math.min(data.length, 4096) }, (_, i) => valueAt(time, i)));
}

/**
 * The data's span: its first tick to one step of the data past its last, where the data stop (on candle data the
 * end of the last candle: 4 days of candles span 4 days).
 */
export function spanOf(data: TickData, settings: Pick<JobSettings, 'from' | 'to'>): Span {
  const time = data.columns.time;
  const first = valueAt(time, 0);
  const end = valueAt(time, data.length - 1) + Math.max(1, dataStep(data));
  // The data before --from were read for the strategies' warm-up: they are not part of the span tested.
  const from = settings.from === undefined ? first : Math.max(first, Date.parse(settings.from));
  return { from, to: settings.to === undefined ? end : Math.min(end, Date.parse(settings.to)) };
}

export function validationFlags(
  values: { holdout?: string; 'walk-forward'?: string; train?: string; test?: string },
  data: TickData,
  settings: Pick<JobSettings, 'from' | 'to'>,
): Validation | undefined {
  const { holdout, train, test } = values;
  const walk = values['walk-forward'];
  if (holdout !== undefined && walk !== undefined) throw usage('--holdout and --walk-forward: one or the other');
  if ((train !== undefined || test !== undefined) && walk === undefined)
    throw usage('--train and --test go with --walk-forward N');
  if ((train === undefined) !== (test === undefined)) throw usage('--train and --test: both, or neither');
  if (holdout !== undefined) return { kind: 'holdout', percent: parseHoldout(holdout) };
  if (walk === undefined) return undefined;
  const n = intFlag('walk-forward', walk, 1)!;
  const lengths =
    train === undefined || test === undefined
      ? undefined
      : { train: parseDuration(train, '--train'), test: parseDuration(test, '--test') };
  return { kind: 'walk-forward', windows: walkForwardWindows(spanOf(data, settings), n, lengths) };
}

/** `--set key=value` flags as [key, value] (typed as --sweep types them; one value each). */
export function setFlags(specs: readonly string[], sources: readonly ConfigSource[]): [string, unknown][] {
  return specs.map((spec) => {
    const { key, values } = parseSweep(spec, sources, '--set');
    if (values.length !== 1) throw usage(`--set ${key}: one value (several are a --sweep), found '${spec}'`);
    return [key, values[0]];
  });
}
