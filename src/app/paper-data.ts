/**
 * Which recordings a paper run replays: PAPER_DATA's files and directories, or the shipped samples, narrowed to
 * the configured symbols. Every configured symbol must have data: a strategy that never sees a price sits idle.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, join, sep } from 'node:path';
import { ConfigError } from '../errors.js';
import { listRecordingFiles, readRecordingHeader } from '../record/recording-reader.js';
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
