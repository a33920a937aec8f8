/**
 * Which recordings a paper run replays: PAPER_DATA's files and directories, or the shipped samples, narrowed to
 * the configured symbols. Every configured symbol must have data: a strategy that never sees a price sits idle.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { BotError, ConfigError } from '../errors.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import type { PairConfig } from '../ports/venue-records.js';
import { RecordedPairs } from '../record/recorded-pairs.js';
import { RecordingError } from '../record/recording-format.js';
import { listRecordingFiles, readRecordingHeader } from '../record/recording-reader.js';
import { scanRecording } from '../record/recording-scanner.js';
import { projectRoot } from './installation.js';

/** data/samples/ at the project root, wherever the daemon is started from, from the sources or a build. */
export const SAMPLES_DIR: string = join(projectRoot(), 'data', 'samples') + sep;

/** The symbol of a recording file: its header's, else the layout's (SYMBOL-….jsonl.gz or SYMBOL/day.jsonl.gz). */
async function symbolOf(file: string, symbols: readonly string[]): Promise<string | undefined> {
  const header = await readRecordingHeader(file);
  if (header) return header.symbol;
  const name = basename(file);
  return symbols.find((s) => name.startsWith(`${s}-`) || basename(dirname(file)) === s);
}

/**
 * The recording files for `symbols` (PAPER_DATA's list, default the samples). Directories are searched in both
 * layouts; a file named directly is used when it holds a configured symbol. Throws a ConfigError naming every
 * missing source and every symbol without data.
 */
export async function paperDataFiles(
  sources: readonly string[] | undefined,
  symbols: readonly string[],
): Promise<string[]> {
  const problems: string[] = [];
  const files = new Set<string>();
  const covered = new Set<string>();
  for (const source of sources ?? [SAMPLES_DIR]) {
    let isDir: boolean;
    try {
      isDir = (await stat(source)).isDirectory();
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      problems.push(
        `PAPER_DATA: expected a recording file or a directory of them, found nothing at ${source} (${why})`,
      );
      continue;
    }
    if (isDir) {
      for (const symbol of symbols) {
        const found = await listRecordingFiles(source, symbol);
        if (found.length > 0) covered.add(symbol);
        for (const f of found) files.add(f);
      }
      continue;
    }
    const symbol = await symbolOf(source, symbols);
    if (symbol !== undefined && symbols.includes(symbol)) {
      covered.add(symbol);
      files.add(source);
    }
  }
  const where = sources === undefined ? SAMPLES_DIR : sources.join(', ');
  for (const symbol of symbols) {
    if (!covered.has(symbol) && problems.length === 0)
      problems.push(
        `PAPER_DATA: expected a recording of ${symbol} (configured), found none in ${where}; ` +
          'make one with `bot record` or `bot import-candles`',
      );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return [...files];
}

/** What one symbol's recordings hold: its first and last recorded times and how many tickers. */
export interface RecordedSpan {
  symbol: string;
  from: number;
  to: number;
  tickers: number;
}

/** What the messages call the recordings and the setting that replays a broken one's complete lines. */
export interface DataNames {
  /** `PAPER_DATA` (the daemon), `--data` (bot sim). */
  data: string;
  /** How to allow it: `PAPER_ALLOW_PARTIAL=true`, `--allow-partial`. */
  allow: string;
}

const PAPER_NAMES: DataNames = { data: 'PAPER_DATA', allow: 'PAPER_ALLOW_PARTIAL=true' };

/** What the recordings of a replay hold: each symbol's span, and the pair rules they carry. */
export interface CheckedData {
  /** Each symbol's span, in name order. */
  spans: RecordedSpan[];
  /**
   * Each symbol's pair configuration as recorded: the first one read (a file's header, else its first pairConfig
   * line, as the recorder writes one when the configuration comes after the file began). Symbols whose files
   * carry none are absent: the built-in pairs may stand in (sim/pair-market.ts).
   */
  pairs: Map<string, PairConfig>;
}

/**
 * Reads every recording once before the replay starts (the backtest's byte scanner): a truncated or corrupt
 * file stops the start with one line naming it, the line and the compressed byte where it breaks, unless
 * `allowPartial` (PAPER_ALLOW_PARTIAL=true, bot sim's --allow-partial: one warning, and the complete lines before
 * the break are replayed). A malformed line is always an error naming the file and the line. A pair whose
 * recorded configuration changes is replayed by the first one, with one warning, as a backtest is.
 */
export async function checkPaperData(
  files: readonly string[],
  allowPartial: boolean,
  warn: (message: string) => void,
  names: DataNames = PAPER_NAMES,
): Promise<CheckedData> {
  const spans = new Map<string, RecordedSpan>();
  const pairs = new RecordedPairs((m) => warn(`${names.data}: ${m}`), 'the replay');
  for (const file of files) {
    const local: RecordedSpan[] = [];
    let result: Awaited<ReturnType<typeof scanRecording>>;
    try {
      result = await scanRecording(file, {
        symbol: (first) => {
          const span = spans.get(first.s) ?? { symbol: first.s, from: Infinity, to: -Infinity, tickers: 0 };
          spans.set(first.s, span);
          return local.push(span) - 1;
        },
        push: (s, time) => {
          const span = local[s] as RecordedSpan;
          if (time < span.from) span.from = time;
          if (time > span.to) span.to = time;
          span.tickers++;
        },
      });
    } catch (err) {
      if (err instanceof BotError) throw new BotError(err.code, `${names.data}: ${err.message}`, { cause: err });
      throw err;
    }
    if (result.header?.pair) pairs.seen(result.header.pair, file, undefined);
    for (const p of result.pairs) pairs.seen(p.config, file, p.t);
    const broken = result.broken;
    if (broken === undefined) continue;
    const where = new RecordingError(broken.reason, {
      file,
      line: broken.lines + 1,
      ...(broken.byte === undefined ? {} : { byte: broken.byte }),
    }).message;
    if (!allowPartial)
      throw new BotError(
        'E_RECORDING',
        `${names.data}: ${where}; the ${broken.lines} lines before it are complete ` +
          `(${names.allow} replays them; a file still being written, as the recorder writes today, ends so)`,
      );
    warn(`${names.data}: ${where}: replaying the ${broken.lines} complete lines before it (${names.allow})`);
  }
  return {
    spans: [...spans.values()].sort((a, b) => (a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0)),
    pairs: pairs.bySymbol,
  };
}

/**
 * What a paper run replays, for its start line: the recordings' time range and each pair with its assets, tick
 * and where its rules come from (the recording's own, or the built-in ones for a recording that carries none).
 */
export function replayDescription(
  spans: readonly RecordedSpan[],
  pairs: readonly PairConfig[],
  recorded: ReadonlySet<string>,
): string {
  const iso = (ms: number) => new Date(ms).toISOString();
  const from = Math.min(...spans.map((s) => s.from));
  const to = Math.max(...spans.map((s) => s.to));
  const pairText = spans.map((s) => {
    const config = pairs.find((p) => p.symbol === s.symbol);
    if (!config) return s.symbol;
    const rules = recorded.has(s.symbol) ? 'rules from the recording' : 'built-in rules';
    return `${s.symbol} (${config.baseAsset}/${config.quoteAsset}, tick ${pairRulesFrom(config).tickSize.toFixed()}, ${rules}, ${s.tickers} tickers)`;
  });
  return `data ${iso(from)} to ${iso(to)}; pairs ${pairText.join(', ')}`;
}
