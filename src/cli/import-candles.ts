/**
 * `bot import-candles --symbol BTCUSDT [--out DIR] FILE.csv [FILE2.csv …]`: one-minute candle CSVs to one
 * recording (four tickers per candle), for backtests and paper replays.
 */
import { BotError } from '../errors.js';
import { importCandles } from '../record/candles.js';
import { numberFlag, parseFlags } from './flags.js';

const HELP = `usage: bot import-candles --symbol SYMBOL [--out DIR] [--base CODE --quote CODE] [--base-id N --quote-id N] FILE.csv [FILE2.csv …]

Turns one-minute candle CSVs (open_time,open,high,low,close,volume) into one recording
DIR/SYMBOL-FIRSTDAY_LASTDAY.jsonl.gz (default DIR: data/recordings). Files are one series, given in time order.
Base/quote codes come from the symbol (BTCUSDT -> BTC/USDT); asset ids default to BTC 1, USDT 2, USDC 3.`;

function idFlag(name: string, value: string | undefined): number | undefined {
  const n = numberFlag('import-candles', name, value);
  if (n !== undefined && (!Number.isInteger(n) || n < 0)) {
    throw new BotError('E_USAGE', `import-candles: --${name} must be a non-negative integer, got '${value}'`);
  }
  return n;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    'import-candles',
    argv,
    {
      symbol: { type: 'string' },
      out: { type: 'string', default: 'data/recordings' },
      base: { type: 'string' },
      quote: { type: 'string' },
      'base-id': { type: 'string' },
      'quote-id': { type: 'string' },
    },
    true,
  );
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  if (values.symbol === undefined || positionals.length === 0) {
    console.error(`import-candles: --symbol and at least one CSV file are required\n\n${HELP}`);
    return 2;
  }
  const tty = process.stderr.isTTY === true;
  const started = performance.now();
  try {
    const result = await importCandles({
      symbol: values.symbol,
      files: positionals,
      outDir: values.out,
      assets: {
        base: values.base,
        quote: values.quote,
        baseId: idFlag('base-id', values['base-id']),
        quoteId: idFlag('quote-id', values['quote-id']),
      },
      onProgress: tty
        ? (done, total) => {
            const rate = Math.round(done / Math.max((performance.now() - started) / 1000, 1e-3));
            process.stderr.write(`\rimport-candles: ${done}/${total} candles (${rate}/s)`);
          }
        : undefined,
    });
    if (tty) process.stderr.write('\n');
    console.log(
      `${result.file}: ${result.candles} candles, ${result.tickers} tickers, ` +
        `${new Date(result.from).toISOString()} to ${new Date(result.to).toISOString()}`,
    );
    return 0;
  } catch (err) {
    if (tty) process.stderr.write('\n');
    if (err instanceof BotError) {
      console.error(`import-candles: ${err.message}`);
      return err.code === 'E_USAGE' ? 2 : 1;
    }
    throw err;
  }
}
