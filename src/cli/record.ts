/**
 * `bot record --symbols A,B | --all | --quote Q [--top N] [--every 5s] [--out DIR]`: polls the exchange's market
 * watch and appends every new ticker to DIR/SYMBOL/YYYY-MM-DD.jsonl.gz until SIGINT/SIGTERM, which flush and close
 * the files. --all, --quote and --top choose the pairs on the market watch once, at start.
 */
import { loadEnv, parseEnv } from '../app/env.js';
import { clientOptionsFromEnv } from '../exchange/client-options.js';
import { BotError } from '../errors.js';
import { ExchangeClient } from '../exchange/client.js';
import { createLogger } from '../ops/logger.js';
import { Recorder, marketWatchFetcher, runEvery } from '../record/recorder.js';
import { type PairFigures, PairListSchema, resolvePairList } from '../config/pair-list.js';
import { commandSpec, helpText, numberFlag, parseFlags } from './flags.js';
import { commandFailure } from './command-failure.js';
import { marketFigures } from './pair-list-view.js';

export const SPEC = commandSpec({
  name: 'record',
  usage:
    'record (--symbols SYMBOL[,SYMBOL…] | --all | --quote ASSET [--top N]) [--every 5s] [--out DIR] [--base-url URL]',
  about: `Polls the market watch every interval (aligned to the clock) and appends each new 24-hour ticker, every key
kept, to DIR/SYMBOL/YYYY-MM-DD.jsonl.gz (UTC day of the ticker), with each symbol's pair configuration (read
every minute; a change is recorded when it happens), so that a backtest or paper replay trades the pair by its
own rules. Whatever the number of pairs, a poll is one market-watch request. --all, --quote and --top choose the
pairs on the market watch once, at start (a pair listed later is not added). A failed poll is logged and retried
at the next tick. Stop with Ctrl-C (SIGINT) or SIGTERM.
Reads EXCHANGE_BASE_URL (or --base-url) and the other EXCHANGE_* settings from the environment or .env.`,
  flags: {
    symbols: { type: 'string', arg: 'SYMBOL,…', doc: 'the pairs to record' },
    all: { type: 'boolean', doc: 'record every pair the market watch lists at start' },
    quote: {
      type: 'string',
      arg: 'ASSET',
      doc: 'record the pairs of this quote asset (USDT) with a price and a 24-hour quote volume at start',
    },
    top: {
      type: 'string',
      arg: 'N',
      doc: 'with --quote: only its N pairs of highest 24-hour quote volume at start (as a pairlist ranks them)',
    },
    every: { type: 'string', arg: 'INTERVAL', default: '5s', doc: 'how often to poll: 500ms, 5s, 1m, … (default 5s)' },
    out: { type: 'string', arg: 'DIR', default: 'data/recordings', doc: 'the folder (default data/recordings)' },
    'base-url': { type: 'string', arg: 'URL', doc: "the exchange's origin, over EXCHANGE_BASE_URL" },
  },
});

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** `5s`, `500ms`, `1m`, `1h`, or a bare number of seconds. */
export function parseInterval(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = match ? Number(match[1]) * UNITS[match[2] ?? 's']! : NaN;
  if (!(ms >= 100) || !Number.isFinite(ms)) {
    throw new BotError('E_USAGE', `--every must be an interval of 100ms or more like 5s, 500ms or 1m, got '${text}'`);
  }
  return Math.round(ms);
}

function parseSymbols(text: string | undefined): string[] {
  const symbols = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = symbols.find((s) => !/^[A-Z0-9]{2,20}$/.test(s));
  if (symbols.length === 0 || bad !== undefined) {
    throw new BotError(
      'E_USAGE',
      `--symbols must list exchange symbols like BTCUSDT,ETHUSDT${bad === undefined ? '' : `, got '${bad}'`}`,
    );
  }
  return [...new Set(symbols)];
}

/** What the flags say to record: pairs by name, or a choice made on the market watch at start. */
export type RecordChoice = { symbols: string[] } | { all: true } | { quote: string; top?: number | undefined };

/** The pairs to record from the flags; any other combination is a usage error naming the flags. */
export function recordChoice(values: {
  symbols?: string | undefined;
  all?: boolean | undefined;
  quote?: string | undefined;
  top?: string | undefined;
}): RecordChoice {
  const given = (['symbols', 'all', 'quote'] as const).filter(
    (name) => values[name] !== undefined && values[name] !== false,
  );
  if (given.length > 1)
    throw new BotError('E_USAGE', `${given.map((g) => `--${g}`).join(' and ')} cannot be combined: give one`);
  if (values.top !== undefined && values.quote === undefined)
    throw new BotError(
      'E_USAGE',
      `--top ranks by 24-hour quote volume, which compares the pairs of one quote asset: give --quote too (--quote USDT --top ${values.top})`,
    );
  if (values.symbols !== undefined) return { symbols: parseSymbols(values.symbols) };
  if (values.all === true) return { all: true };
  if (values.quote === undefined)
    throw new BotError(
      'E_USAGE',
      'give the pairs to record: --symbols BTCUSDT,ETHUSDT, --all, or --quote USDT [--top N]',
    );
  if (!/^[A-Z0-9]{2,10}$/.test(values.quote))
    throw new BotError('E_USAGE', `--quote must be an asset code such as USDT, got '${values.quote}'`);
  const top = numberFlag('record', 'top', values.top);
  if (top !== undefined && !(Number.isInteger(top) && top >= 1))
    throw new BotError('E_USAGE', `--top must be a whole number of pairs, 1 or more, got '${values.top}'`);
  return { quote: values.quote, top };
}

/**
 * The pairs a choice made on the market watch stands for (`where` names the market watch in errors): --all every
 * pair it lists; --quote the pairs a strategy file's pairlist of that quote resolves to (with a price and a
 * 24-hour quote volume), ranked by quote volume and cut to --top. Nothing matching is a usage error.
 */
export function symbolsOnMarket(choice: RecordChoice, figures: readonly PairFigures[], where: string): string[] {
  if ('symbols' in choice) return choice.symbols;
  if ('all' in choice) {
    if (figures.length === 0) throw new BotError('E_USAGE', `--all: the market watch of ${where} lists no pair`);
    return [...new Set(figures.map((f) => f.symbol))];
  }
  const list = PairListSchema.parse({ quote: choice.quote, top: choice.top });
  const symbols = resolvePairList(list, figures).listed.map((p) => p.symbol);
  if (symbols.length === 0) {
    const quotes = [...new Set(figures.flatMap((f) => (f.quoteAsset === undefined ? [] : [f.quoteAsset])))].sort();
    throw new BotError(
      'E_USAGE',
      `--quote ${choice.quote} matches no pair with a price and a 24-hour quote volume on the market watch of ${where}` +
        (quotes.length > 0 ? ` (its quote assets: ${quotes.join(', ')})` : ''),
    );
  }
  return symbols;
}

export async function run(argv: string[]): Promise<number> {
  try {
    const { values } = parseFlags(SPEC.name, argv, SPEC.flags);
    if (values.help) {
      console.log(helpText(SPEC));
      return 0;
    }
    const choice = recordChoice(values);
    const everyMs = parseInterval(values.every);
    const env = loadEnv();
    const baseUrl = values['base-url'];
    const options = clientOptionsFromEnv(
      baseUrl === undefined ? env : parseEnv({ ...process.env, EXCHANGE_BASE_URL: baseUrl }),
    );
    const logger = createLogger({ fd: 2 });
    const client = new ExchangeClient({ ...options, logger });
    const origin = new URL(options.baseUrl).origin;
    let symbols: string[];
    try {
      symbols = 'symbols' in choice ? choice.symbols : symbolsOnMarket(choice, await marketFigures(client), origin);
    } catch (err) {
      await client.close();
      throw err;
    }
    const recorder = new Recorder({
      symbols,
      dir: values.out,
      fetchTickers: marketWatchFetcher(client),
      fetchPairConfigs: () => client.pairConfig(),
      logger,
      origin,
    });
    const tty = process.stderr.isTTY === true;
    const timer = runEvery(everyMs, async () => {
      await recorder.poll();
      if (!tty) return;
      const { written, failedPolls, lastTickerTime } = recorder.status;
      const last = lastTickerTime === undefined ? 'none yet' : new Date(lastTickerTime).toISOString();
      process.stderr.write(`\r\x1b[Krecord: ${written} tickers written, last ${last}, failed polls ${failedPolls}`);
    });
    logger.info({ pairs: symbols.length, symbols, everyMs, out: values.out }, 'recorder started');
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    if (tty) process.stderr.write('\n');
    await timer.stop();
    await recorder.close();
    await client.close();
    logger.info({ signal, ...recorder.status }, 'recorder stopped; files flushed and closed');
    return 0;
  } catch (err) {
    return commandFailure('record', err, { service: true });
  }
}
