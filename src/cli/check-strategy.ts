/**
 * `bot check-strategy --config FILE --data RECORDING`: runs the strategy from several starts and on the data cut
 * at its decisions (backtest/strategy-check.ts) and says whether any indicator value or decision differs. Exit 0
 * when none does, 1 when one does (or the run fails), 2 on a bad flag.
 */
import { defaultBalances, warmUpMs } from '../backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../backtest/job-settings.js';
import { progressLine } from '../backtest/progress.js';
import { readConfigs, runInstances } from '../backtest/strategy-configs.js';
import { checkStrategy, DEFAULT_CHECK, type StrategyCheck } from '../backtest/strategy-check.js';
import { columnCacheDir } from '../backtest/column-cache.js';
import { loadTicks } from '../backtest/tick-data.js';
import { recordingFiles } from '../record/recording-reader.js';
import { BotError } from '../errors.js';
import { intFlag, RUN_INPUT_FLAGS, runInputs } from './backtest.js';
import { commandSpec, parseCommandFlags } from './flags.js';
import { commandFailure } from './command-failure.js';

export const SPEC = commandSpec({
  name: 'check-strategy',
  usage: 'check-strategy --config FILE [--config FILE2 …] --data RECORDING[,RECORDING…] [flags]',
  about: `Checks that a strategy's results do not depend on where a run starts nor on data after its decisions
(as Freqtrade's recursive-analysis and lookahead-analysis do). Backtests the strategy files together (the
default fill model) from the first moment the data hold their whole warm-up (or --from), then from --starts later
starts, each moved on to a moment the first run held nothing: every indicator value they read must agree with the
first run's for the same candle (within --tolerance of the value's size), and their first order with its first
order after that start. Then on the data cut just after --cuts of its decisions: every order up to the decision
and every indicator value must be the first run's exactly. Exit 0 when nothing differs, 1 when something does.`,
  flags: {
    ...RUN_INPUT_FLAGS,
    from: { type: 'string', arg: 'ISO', doc: 'the first run starts here (default: once the data hold the warm-up)' },
    to: { type: 'string', arg: 'ISO', doc: 'only ticks with time < to' },
    starts: { type: 'string', arg: 'N', doc: `runs from later starts (default ${DEFAULT_CHECK.starts})` },
    cuts: { type: 'string', arg: 'N', doc: `runs on the data cut after a decision (default ${DEFAULT_CHECK.cuts})` },
    tolerance: {
      type: 'string',
      arg: 'RATIO',
      doc: `how far a later start's indicator value may be from the first run's, a share of the value's size (default ${DEFAULT_CHECK.tolerance})`,
    },
    strategies: { type: 'string', arg: 'DIR', doc: "where strategy modules live (default: the project's strategies/)" },
  },
});

const LISTED = 10;

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  try {
    return await check(flags.values);
  } catch (err) {
    return commandFailure('check-strategy', err, { alsoNamed: 'backtest' });
  }
}

type Values = Exclude<ReturnType<typeof parseCommandFlags<typeof SPEC.flags>>, number>['values'];

async function check(values: Values): Promise<number> {
  const { configs, dataFiles, from, to } = runInputs('check-strategy', values);
  const tolerance = values.tolerance === undefined ? DEFAULT_CHECK.tolerance : Number(values.tolerance);
  if (!(tolerance >= 0 && tolerance < 1))
    throw new BotError('E_USAGE', `--tolerance must be a ratio within [0, 1), got '${String(values.tolerance)}'`);
  const options = {
    starts: intFlag('starts', values.starts, 1) ?? DEFAULT_CHECK.starts,
    cuts: intFlag('cuts', values.cuts, 0) ?? DEFAULT_CHECK.cuts,
    tolerance,
  };
  const read = await readConfigs(configs, values.strategies);
  const { instances, symbols } = await runInstances(read.instances, dataFiles);
  const warm = warmUpMs(instances);
  const loadFrom = from === undefined ? undefined : from - warm;
  const data = await loadTicks(await recordingFiles(dataFiles, symbols, { from: loadFrom, to }), {
    from: loadFrom,
    to,
    cacheDir: columnCacheDir(),
  });
  const progress = progressLine('check-strategy', 'runs');
  const result = await checkStrategy(
    instances,
    data,
    { ...DEFAULT_JOB_SETTINGS, balances: defaultBalances(instances, data), start: from },
    { ...options, onProgress: (done, total, what) => progress?.update(done, total, what) },
  );
  progress?.end();
  for (const line of report(result, instances.map((i) => i.config.name).join(', '))) console.log(line);
  return result.indicators.length + result.decisions.length === 0 ? 0 : 1;
}

const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');
const shown = (v: unknown) =>
  v === null || v === undefined ? 'not ready' : typeof v === 'number' ? String(v) : JSON.stringify(v);

/** What the check found, for a terminal. */
export function report(check: StrategyCheck, names: string): string[] {
  const hours = (check.warmUpMs / 3_600_000).toFixed(1);
  const lines = [
    `check-strategy: ${names}: warm-up ${hours} h (its indicators converged, its candles, and a day)`,
    `  first run: ${iso(check.reference.from)} to ${iso(check.reference.to)}, ${check.reference.decisions} orders`,
    `  later starts: ${check.starts
      .map((s) => (s.flat ? iso(s.from) : `${iso(s.from)} (indicators only: the first run is never flat after)`))
      .join(', ')}`,
    `  cuts after decisions at: ${check.cuts.length === 0 ? 'none (no decision)' : check.cuts.map(iso).join(', ')}`,
    `  compared: ${check.compared.values} indicator values, ${check.compared.decisions} decisions`,
  ];
  for (const d of check.indicators.slice(0, LISTED))
    lines.push(
      `  DIFFERS: ${d.instance} ${d.indicator} of the candle at ${iso(d.candle)}: ${shown(d.reference)} in the first run, ` +
        `${shown(d.found)} in the run ${d.kind === 'start' ? 'from' : 'cut at'} ${iso(d.run)}`,
    );
  for (const d of check.decisions.slice(0, LISTED))
    lines.push(
      `  DIFFERS: decision ${d.kind === 'start' ? 'after the start' : 'up to the cut'} ${iso(d.run)}: ` +
        `${d.reference ?? 'none'} in the first run, ${d.found ?? 'none'} in the run ${d.kind === 'start' ? 'from' : 'cut at'} it`,
    );
  const more = Math.max(0, check.indicators.length - LISTED) + Math.max(0, check.decisions.length - LISTED);
  if (more > 0) lines.push(`  … and ${more} more`);
  const differing = check.indicators.length + check.decisions.length;
  lines.push(
    differing === 0
      ? 'OK: no indicator value or decision depends on where the run starts or on data after it'
      : `FAILED: ${differing} differences: ${
          check.decisions.some((d) => d.kind === 'cut') || check.indicators.some((d) => d.kind === 'cut')
            ? 'something decided at a moment came from data after it (a look ahead), '
            : ''
        }${
          check.indicators.some((d) => d.kind === 'start') || check.decisions.some((d) => d.kind === 'start')
            ? 'the result depends on where the run starts (a warm-up too short, or state kept from the start)'
            : ''
        }`,
  );
  return lines;
}
