/**
 * `bot record --symbols A,B [--every 5s] [--out DIR]`: polls the exchange's market watch and appends every new
 * ticker to DIR/SYMBOL/YYYY-MM-DD.jsonl.gz until SIGINT/SIGTERM, which flush and close the files.
 */
import { loadEnv, parseEnv } from '../app/env.js';
import { clientOptionsFromEnv } from '../exchange/client-options.js';
import { BotError, describeError } from '../errors.js';
import { ExchangeClient } from '../exchange/client.js';
import { createLogger } from '../ops/logger.js';
import { Recorder, marketWatchFetcher, runEvery } from '../record/recorder.js';
import { commandSpec, helpText, parseFlags } from './flags.js';

export const SPEC = commandSpec({
  name: 'record',
  usage: 'record --symbols SYMBOL[,SYMBOL…] [--every 5s] [--out DIR] [--base-url URL]',
  about: `Polls the market watch every interval (aligned to the clock) and appends each new 24-hour ticker, every key
kept, to DIR/SYMBOL/YYYY-MM-DD.jsonl.gz (UTC day of the ticker), with each symbol's pair configuration (read
every minute; a change is recorded when it happens), so that a backtest or paper replay trades the pair by its
own rules. A failed poll is logged and retried at the next tick. Stop with Ctrl-C (SIGINT) or SIGTERM.
Reads EXCHANGE_BASE_URL (or --base-url) and the other EXCHANGE_* settings from the environment or .env.`,
  flags: {
    symbols: { type: 'string', arg: 'SYMBOL,…', doc: 'the pairs to record (required)' },
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

export async function run(argv: string[]): Promise<number> {
  try {
    const { values } = parseFlags(SPEC.name, argv, SPEC.flags);
    if (values.help) {
      console.log(helpText(SPEC));
      return 0;
    }
    const symbols = parseSymbols(values.symbols);
    const everyMs = parseInterval(values.every);
    const env = loadEnv();
    const baseUrl = values['base-url'];
    const options = clientOptionsFromEnv(
      baseUrl === undefined ? env : parseEnv({ ...process.env, EXCHANGE_BASE_URL: baseUrl }),
    );
    const logger = createLogger({ fd: 2 });
    const client = new ExchangeClient({ ...options, logger });
    const recorder = new Recorder({
      symbols,
      dir: values.out,
      fetchTickers: marketWatchFetcher(client),
      fetchPairConfigs: () => client.pairConfig(),
      logger,
      origin: new URL(options.baseUrl).origin,
    });
    const tty = process.stderr.isTTY === true;
    const timer = runEvery(everyMs, async () => {
      await recorder.poll();
      if (!tty) return;
      const { written, failedPolls, lastTickerTime } = recorder.status;
      const last = lastTickerTime === undefined ? 'none yet' : new Date(lastTickerTime).toISOString();
      process.stderr.write(`\r\x1b[Krecord: ${written} tickers written, last ${last}, failed polls ${failedPolls}`);
    });
    logger.info({ symbols, everyMs, out: values.out }, 'recorder started');
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
    console.error(`record: ${describeError(err)}`);
    return err instanceof BotError && err.code === 'E_USAGE' ? 2 : 1;
  }
}
