/**
 * `bot data export --format csv|arrow|parquet [--out FILE] RECORDING…`: recordings as one table for pandas,
 * polars or DuckDB (record/recording-export.ts). A progress bar on a terminal.
 */
import { statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { progressLine } from '../backtest/progress.js';
import { BotError } from '../errors.js';
import { EXPORT_COLUMNS, EXPORT_FORMATS, type ExportFormat, exportRecordings } from '../record/recording-export.js';
import { RECORDING_EXTENSION } from '../record/recording-format.js';
import { commandSpec, helpText, parseCommandFlags, timeFlag } from './flags.js';
import { commandFailure } from './command-failure.js';

export const SPEC = commandSpec({
  name: 'data export',
  usage: 'data export --format csv|arrow|parquet [--out FILE] [--from ISO] [--to ISO] RECORDING [RECORDING…]',
  about: `Writes recordings (files, or folders of them at any depth) as one table to open in pandas, polars or DuckDB:
a row per recorded ticker, columns ${EXPORT_COLUMNS.join(', ')} (the 24-hour
figures the recording carries; empty where it has none). Each symbol's files in time order, then the next symbol.`,
  flags: {
    format: {
      type: 'string',
      arg: 'FORMAT',
      doc: "csv: text, time in epoch milliseconds (pandas: pd.read_csv(F); pd.to_datetime(df.time, unit='ms')). arrow: Arrow IPC file (Feather v2), time a UTC timestamp, numbers float64 (pd.read_feather(F), pl.read_ipc(F), DuckDB: FROM 'F' once its arrow extension is loaded). parquet: Parquet, the same types (pd.read_parquet(F), pl.read_parquet(F), DuckDB: FROM 'F.parquet')",
    },
    out: {
      type: 'string',
      arg: 'FILE',
      doc: "where to write (default: the first recording's name with .csv, .arrow or .parquet, in the current folder); '-' writes CSV to standard output",
    },
    from: { type: 'string', arg: 'ISO', doc: 'only tickers with from <= time' },
    to: { type: 'string', arg: 'ISO', doc: 'only tickers with time < to' },
    'allow-partial': {
      type: 'boolean',
      doc: 'use the complete lines of a truncated or corrupt recording (a warning says where it stops)',
    },
  },
  positionals: true,
});

const EXTENSIONS: Record<ExportFormat, string> = { csv: '.csv', arrow: '.arrow', parquet: '.parquet' };

async function exportCommand(argv: string[]): Promise<number> {
  const parsed = parseCommandFlags(SPEC, argv);
  if (typeof parsed === 'number') return parsed;
  const { values, positionals } = parsed;
  const usage = (message: string) => new BotError('E_USAGE', `data export: ${message}`);
  try {
    const format = values.format as ExportFormat | undefined;
    if (format === undefined) throw usage(`--format is required (${EXPORT_FORMATS.join(', ')})`);
    if (!EXPORT_FORMATS.includes(format))
      throw usage(`--format must be one of ${EXPORT_FORMATS.join(', ')}, got '${values.format}'`);
    if (positionals.length === 0) throw usage('name at least one recording (a file or a folder)');
    if (values.out === '-' && format !== 'csv')
      throw usage(`--out - (standard output) is for csv only: ${format} is binary, give a file`);
    const from = timeFlag('data export', 'from', values.from);
    const to = timeFlag('data export', 'to', values.to);
    if (from !== undefined && to !== undefined && from >= to) throw usage('--from must be before --to');
    const out =
      values.out === '-'
        ? undefined
        : (values.out ?? `${basename(positionals[0]!).replace(/\.jsonl\.gz$|\.gz$|\/$/, '')}${EXTENSIONS[format]}`);
    if (out !== undefined && out.endsWith(RECORDING_EXTENSION))
      throw usage(`--out ${out} would look like a recording: give the file a ${EXTENSIONS[format]} name`);
    if (out !== undefined && statSync(dirname(out), { throwIfNoEntry: false })?.isDirectory() !== true)
      throw usage(`--out ${out}: there is no folder ${dirname(out)} to write it in`);
    const progress = out === undefined ? undefined : progressLine('export', 'bytes');
    const result = await exportRecordings(positionals, {
      format,
      out,
      from,
      to,
      allowPartial: values['allow-partial'] === true,
      warn: (message) => console.error(`data export: warning: ${message}`),
      onProgress: progress && ((done, total) => progress.update(done, total)),
    });
    progress?.end();
    if (out !== undefined)
      console.error(
        `data export: ${result.rows.toLocaleString('en-US')} rows of ${result.symbols.join(', ')} from ${result.files} file(s) to ${out}`,
      );
    return 0;
  } catch (err) {
    return commandFailure('data export', err, { usageHelp: helpText(SPEC) });
  }
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'export') return exportCommand(rest);
  if (sub === undefined || sub === '--help' || sub === '-h') {
    console.log(helpText(SPEC));
    return sub === undefined ? 2 : 0;
  }
  console.error(`data: unknown subcommand '${sub}' (data export)\n\n${helpText(SPEC)}`);
  return 2;
}
