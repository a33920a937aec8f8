/**
 * `bot check-config [files or dirs…]`: validate strategy files offline (no network, no API keys) and say
 * which instance each one defines, or list every problem found, one per line on stderr.
 */
import { loadStrategyFiles } from '../config/loader.js';
import { BotError, ConfigError } from '../errors.js';
import type { PairConfig } from '../ports/venue-records.js';
import { readRecordingBatches, readRecordingHeader, recordingFiles } from '../record/recording-reader.js';
import { DEFAULT_PAIRS } from '../sim/default-market.js';
import { missingRulesMessage } from '../sim/pair-market.js';
import { commandSpec, parseCommandFlags, timeFlag } from './flags.js';
import { figuresOnData, figuresOnMarket, pairListLines } from './pair-list-view.js';
import { type PairFigures, resolvePairList } from '../config/pair-list.js';
import { PAIR_LIST_TEMPLATE } from '../config/strategy-file.js';

export const SPEC = commandSpec({
  name: 'check-config',
  usage: 'check-config [--strategies DIR] [--data RECORDING[,RECORDING…]] [--at TIME] [--market URL] [file|dir …]',
  about: `Validates strategy files (default: every *.json in config/): the file schema, the schedule, the strategy
module in strategies/ and its params, unique instance names. A file's pairlist is resolved on --data (at --at,
default the data's end) or on the market watch of --market right now: its pairs, ranked, and why each other pair
of its quote asset was left out. Exit 0 when all are valid, 1 otherwise.`,
  flags: {
    strategies: { type: 'string', arg: 'DIR', doc: "where strategy modules live (default: the project's strategies/)" },
    data: {
      type: 'string',
      multiple: true,
      arg: 'RECORDING',
      doc: "also check each file's symbol against these recordings (files or folders, as bot backtest takes them): it must have a recording, and pair rules (recorded, or built in); a pairlist is resolved on them",
    },
    at: {
      type: 'string',
      arg: 'TIME',
      doc: 'with --data: resolve pair lists on the recordings as they stood at this ISO 8601 time (default: their end)',
    },
    market: {
      type: 'string',
      arg: 'URL',
      doc: "resolve pair lists on this exchange's market watch now (public requests, no keys)",
    },
  },
  positionals: true,
});

/** Where `symbol`'s pair rules come from in `data`, or the problem that stops a replay of it. */
async function dataCheck(symbol: string, data: readonly string[]): Promise<{ ok?: string; problem?: string }> {
  let files: string[];
  try {
    files = await recordingFiles(data, [symbol]);
  } catch (err) {
    return { problem: err instanceof BotError ? err.message : String(err) };
  }
  let any = false;
  /** Files that may carry the rules as a pairConfig line (format 2, or no header), as a replay reads them. */
  const lineCarriers: string[] = [];
  for (const file of files) {
    let header;
    try {
      header = await readRecordingHeader(file);
    } catch (err) {
      return { problem: err instanceof BotError ? err.message : String(err) };
    }
    if (header !== undefined && header.symbol !== symbol) continue;
    any = true;
    if (header?.pair) return { ok: `pair rules recorded in ${file}` };
    if (header === undefined || header.version >= 2) lineCarriers.push(file);
  }
  if (!any) return { problem: `no recording of ${symbol} in --data ${data.join(',')}` };
  try {
    for (const file of lineCarriers)
      if (await hasPairLine(file, symbol)) return { ok: `pair rules recorded in ${file}` };
  } catch (err) {
    return { problem: err instanceof BotError ? err.message : String(err) };
  }
  if (DEFAULT_PAIRS.some((p) => p.symbol === symbol)) return { ok: 'built-in pair rules' };
  return { problem: missingRulesMessage(symbol, data.join(', ')) };
}

/** Whether `file` carries a pairConfig line for `symbol` (the recorder's, when the rules came after the file began). */
async function hasPairLine(file: string, symbol: string): Promise<boolean> {
  let found = false;
  const onPairConfig = (config: PairConfig) => {
    found ||= config.symbol === symbol;
  };
  for await (const _ of readRecordingBatches(file, { onPairConfig, allowPartial: true, warn: () => undefined }))
    if (found) break;
  return found;
}

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const sources = flags.positionals.length > 0 ? flags.positionals : 'config';
  try {
    const instances = await loadStrategyFiles(sources, { strategiesDir: flags.values.strategies });
    const data = (flags.values.data ?? []).flatMap((d) => d.split(',')).filter((d) => d !== '');
    const at = timeFlag('check-config', 'at', flags.values.at);
    if (at !== undefined && data.length === 0) {
      console.error('check-config: --at goes with --data');
      return 2;
    }
    let market: PairFigures[] | undefined;
    let failed = false;
    for (const { file, config } of instances) {
      const disabled = config.enabled ? '' : ' [disabled]';
      const list = config.pairlist;
      if (config.symbol === PAIR_LIST_TEMPLATE && list !== undefined) {
        console.log(
          `ok: ${file} (${config.name} → ${config.strategy} on the pairlist of ${list.quote}, refreshed ${list.refresh})${disabled}`,
        );
        if (data.length > 0) {
          const { figures, at: when } = await figuresOnData(list, data, at);
          const where = `${data.join(',')} at ${new Date(when).toISOString()}`;
          for (const line of pairListLines(list, resolvePairList(list, figures), where)) console.log(line);
        }
        if (flags.values.market !== undefined) {
          market ??= await figuresOnMarket(flags.values.market);
          const where = `${flags.values.market} now`;
          for (const line of pairListLines(list, resolvePairList(list, market), where)) console.log(line);
        }
        if (data.length === 0 && flags.values.market === undefined)
          console.log('  its pairs are chosen at run time: --data or --market shows them');
        continue;
      }
      const check = data.length > 0 ? await dataCheck(config.symbol, data) : {};
      if (check.problem !== undefined) {
        console.error(`${file}: symbol ${config.symbol}: ${check.problem}`);
        failed = true;
        continue;
      }
      const rules = check.ok === undefined ? '' : `; ${check.ok}`;
      console.log(`ok: ${file} (${config.name} → ${config.strategy} on ${config.symbol}${rules})${disabled}`);
    }
    return failed ? 1 : 0;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) console.error(problem);
    return 1;
  }
}
