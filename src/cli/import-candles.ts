/**
 * `bot import-candles [--symbol SYMBOL] [pair rules] [--out DIR] FILE.csv [FILE2.csv …]`: one-minute candle CSVs
 * to recordings (four tickers per candle) that carry the pairs' rules, for backtests and paper replays: one
 * recording of --symbol, or, without it, one per symbol the files' names hold.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { BotError } from '../errors.js';
import { PairConfigSchema } from '../wire/schemas.js';
import { isPlainDecimal } from '../market/decimal.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import type { PairConfig } from '../ports/venue-records.js';
import { type Assets, importCandles } from '../record/candles.js';
import { DEFAULT_PAIRS, simPairConfig } from '../sim/default-market.js';
import { assetIdFor } from '../sim/pair-market.js';
import { commandSpec, helpText, numberFlag, parseFlags, timeFlag } from './flags.js';
import { commandFailure } from './command-failure.js';

const RULES = 'Pair rules (written into the recording; backtests and paper trade the pair by them), from flags:';

export const SPEC = commandSpec({
  name: 'import-candles',
  usage: 'import-candles [--symbol SYMBOL] [--from ISO] [--to ISO] [--out DIR] [pair rules] FILE.csv [FILE2.csv …]',
  about: `Turns one-minute candle CSVs (open_time,open,high,low,close,volume) into recordings
DIR/SYMBOL-FIRSTDAY_LASTDAY.jsonl.gz (default DIR: data/recordings). Files of one symbol are one series, given in
time order. Without --symbol, each file's symbol is the one its name holds (binance-ETHUSDT-1m-2023.csv: ETHUSDT),
and each symbol becomes a recording of its own.`,
  flags: {
    symbol: {
      type: 'string',
      arg: 'SYMBOL',
      doc: "the pair the candles are of (default: each file's, from its name)",
    },
    from: {
      type: 'string',
      arg: 'ISO',
      doc: 'only candles opening at or after this are written (the ones before count in the 24-hour figures)',
    },
    to: { type: 'string', arg: 'ISO', doc: 'only candles opening before this are written' },
    out: {
      type: 'string',
      arg: 'DIR',
      default: 'data/recordings',
      doc: 'the folder of the recording (default data/recordings)',
    },
    base: {
      type: 'string',
      arg: 'CODE',
      doc: 'the base asset (default: split from the symbol, BTCUSDT -> BTC/USDT)',
      section: RULES,
    },
    quote: { type: 'string', arg: 'CODE', doc: 'the quote asset (default: split from the symbol)', section: RULES },
    'tick-size': {
      type: 'string',
      arg: 'T',
      doc: 'price step (required for a pair the project does not ship)',
      section: RULES,
    },
    'min-price': { type: 'string', arg: 'P', doc: 'lowest price (default: the tick size)', section: RULES },
    'max-price': { type: 'string', arg: 'P', doc: 'highest price (default: none)', section: RULES },
    'base-precision': {
      type: 'string',
      arg: 'N',
      doc: 'decimals of quantities (default: those of --step-size)',
      section: RULES,
    },
    'quote-precision': {
      type: 'string',
      arg: 'N',
      doc: 'decimals of prices (default: those of --tick-size)',
      section: RULES,
    },
    'min-qty': {
      type: 'string',
      arg: 'Q',
      doc: 'LOT_SIZE filter: least quantity, where the pair has one',
      section: RULES,
    },
    'step-size': {
      type: 'string',
      arg: 'S',
      doc: 'LOT_SIZE filter: quantity step, where the pair has one',
      section: RULES,
    },
    'min-notional': { type: 'string', arg: 'V', doc: 'MIN_NOTIONAL filter, where the pair has one', section: RULES },
    'maker-fee': {
      type: 'string',
      arg: 'R',
      doc: "the pair's maker fee ratio, where it differs from the backtest's",
      section: RULES,
    },
    'taker-fee': {
      type: 'string',
      arg: 'R',
      doc: "the pair's taker fee ratio, where it differs from the backtest's",
      section: RULES,
    },
    'base-id': {
      type: 'string',
      arg: 'N',
      doc: 'asset id of the base (default: assigned without clashes; there is no need to give it)',
      section: RULES,
    },
    'quote-id': { type: 'string', arg: 'N', doc: 'asset id of the quote (as --base-id)', section: RULES },
    'pair-config': {
      type: 'string',
      arg: 'FILE',
      doc: "or the whole pair from the exchange's config endpoint (GET /api/v3/spot/config): one entry, a list, or the whole answer, each symbol's entry taken; with no other rule flag",
      section: RULES,
    },
  },
  notes: 'The shipped pairs (BTCUSDT, BTCUSDC, ETHUSDT) default to their built-in rules.',
  positionals: true,
});

const RULE_FLAGS = [
  'tick-size',
  'min-price',
  'max-price',
  'base-precision',
  'quote-precision',
  'min-qty',
  'step-size',
  'min-notional',
  'maker-fee',
  'taker-fee',
] as const;

function usage(message: string): BotError {
  return new BotError('E_USAGE', `import-candles: ${message}`);
}

function idFlag(name: string, value: string | undefined): number | undefined {
  const n = numberFlag('import-candles', name, value);
  if (n !== undefined && (!Number.isInteger(n) || n < 0))
    throw usage(`--${name} must be a non-negative integer, got '${value}'`);
  return n;
}

function decimalFlag(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!isPlainDecimal(value) || value.startsWith('-'))
    throw usage(`--${name} must be a plain non-negative decimal, got '${value}'`);
  return value;
}

function precisionFlag(name: string, value: string | undefined): number | undefined {
  const n = numberFlag('import-candles', name, value);
  if (n !== undefined && !(Number.isInteger(n) && n >= 0 && n <= 18))
    throw usage(`--${name} must be an integer within [0, 18], got '${value}'`);
  return n;
}

/** Decimals of a plain decimal text (0.001 -> 3). */
function decimals(text: string): number {
  const dot = text.indexOf('.');
  return dot < 0 ? 0 : text.slice(dot + 1).replace(/0+$/, '').length;
}

type Values = Partial<Record<(typeof RULE_FLAGS)[number] | 'base' | 'quote' | 'base-id' | 'quote-id', string>>;

const QUOTE_SUFFIXES = ['USDT', 'USDC', 'BUSD', 'FDUSD', 'TUSD', 'USD', 'EUR', 'BTC', 'ETH', 'BNB'];

/**
 * Base and quote codes and ids of a symbol (BTCUSDT -> BTC/USDT, ids 1/2), each overridable. Ids not given
 * are assigned without clashes (sim/pair-market.ts assetIdFor): the built-in ids, else one derived from the code.
 */
export function assetsOf(symbol: string, overrides: Partial<Assets> = {}): Assets {
  let base = overrides.base;
  let quote = overrides.quote;
  if (base === undefined || quote === undefined) {
    const suffix = quote ?? QUOTE_SUFFIXES.find((q) => symbol.endsWith(q) && symbol.length > q.length);
    if (suffix === undefined || !symbol.endsWith(suffix)) {
      throw new BotError('E_USAGE', `cannot split symbol '${symbol}' into base and quote: give --base and --quote`);
    }
    quote = suffix;
    base ??= symbol.slice(0, -suffix.length);
  }
  const baseId = overrides.baseId ?? assetIdFor(base);
  const quoteId = overrides.quoteId ?? assetIdFor(quote);
  if (baseId === quoteId) throw new BotError('E_USAGE', `base and quote asset ids are both ${baseId}`);
  return { base, quote, baseId, quoteId };
}

/** The pair's configuration from the rule flags; undefined when none is given for a shipped pair. */
export function pairFromFlags(symbol: string, values: Values): PairConfig | undefined {
  const given = RULE_FLAGS.filter((f) => values[f] !== undefined);
  const shipped = DEFAULT_PAIRS.find((p) => p.symbol === symbol);
  if (given.length === 0 && values.base === undefined && values.quote === undefined && shipped) return shipped;
  const tick = decimalFlag('tick-size', values['tick-size']);
  if (tick === undefined || Number(tick) <= 0)
    throw usage(
      `${symbol} is not a pair the project ships: give its rules (at least --tick-size and --base-precision ` +
        'or --step-size), or --pair-config FILE',
    );
  const step = decimalFlag('step-size', values['step-size']);
  const basePrecision =
    precisionFlag('base-precision', values['base-precision']) ?? (step === undefined ? undefined : decimals(step));
  if (basePrecision === undefined) throw usage('--base-precision (or --step-size) is required with --tick-size');
  const assets = assetsOf(symbol, {
    base: values.base,
    quote: values.quote,
    baseId: idFlag('base-id', values['base-id']),
    quoteId: idFlag('quote-id', values['quote-id']),
  });
  if (`${assets.base}${assets.quote}` !== symbol)
    throw usage(`--base ${assets.base} and --quote ${assets.quote} do not make the symbol ${symbol}`);
  const minQty = decimalFlag('min-qty', values['min-qty']);
  const minNotional = decimalFlag('min-notional', values['min-notional']);
  const config = simPairConfig(
    { code: assets.base, id: assets.baseId },
    { code: assets.quote, id: assets.quoteId },
    {
      tickSize: Number(tick),
      minPrice: Number(decimalFlag('min-price', values['min-price']) ?? tick),
      maxPrice: Number(decimalFlag('max-price', values['max-price']) ?? 0),
      baseAssetPrecision: basePrecision,
      quotePrecision: precisionFlag('quote-precision', values['quote-precision']) ?? decimals(tick),
      ...(minQty === undefined ? {} : { minQty }),
      ...(step === undefined ? {} : { stepSize: step }),
      ...(minNotional === undefined ? {} : { minNotional }),
    },
  );
  const fees = feesOf(values);
  return { ...config, ...fees };
}

function feesOf(values: Values): { makerFee?: number; takerFee?: number } {
  const out: { makerFee?: number; takerFee?: number } = {};
  for (const [flag, key] of [
    ['maker-fee', 'makerFee'],
    ['taker-fee', 'takerFee'],
  ] as const) {
    const v = decimalFlag(flag, values[flag]);
    if (v === undefined) continue;
    if (Number(v) > 1) throw usage(`--${flag} must be a ratio within [0, 1], got '${v}'`);
    out[key] = Number(v);
  }
  return out;
}

/**
 * `--pair-config FILE`: the config endpoint's entries (one, a list, or its whole answer `{status, data}`), each
 * checked as the bot checks the exchange's; `symbols`' entries by symbol (a shipped pair may have none).
 */
export async function pairsFromFile(file: string, symbols: readonly string[]): Promise<Map<string, PairConfig>> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw usage(`--pair-config ${file}: cannot read (${err.code ?? err.message})`);
  });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usage(`--pair-config ${file}: not JSON (${(err as Error).message})`);
  }
  const data = value !== null && typeof value === 'object' && 'data' in value ? value.data : value;
  const entries: unknown[] = Array.isArray(data) ? data : [data];
  const out = new Map<string, PairConfig>();
  entries.forEach((entry, i) => {
    const at = Array.isArray(data) ? `[${i}]` : '';
    const parsed = PairConfigSchema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw usage(`--pair-config ${file}: at ${at}${issue?.path.join('.') || '(top)'}: ${issue?.message ?? 'invalid'}`);
    }
    const config = parsed.data;
    try {
      pairRulesFrom(config);
    } catch (err) {
      throw usage(`--pair-config ${file}: ${config.symbol}: ${(err as Error).message}`);
    }
    out.set(config.symbol, config);
  });
  const absent = symbols.filter((s) => !out.has(s) && !DEFAULT_PAIRS.some((p) => p.symbol === s));
  if (absent.length > 0)
    throw usage(
      `--pair-config ${file} holds no entry for ${absent.join(', ')} (it has ${[...out.keys()].join(', ') || 'none'})`,
    );
  return out;
}

/** The symbol a candle file's name holds (binance-ETHUSDT-1m-20230402.csv: ETHUSDT): one part that splits as a pair. */
export function symbolInName(file: string): string | undefined {
  const parts = basename(file)
    .split(/[-_.\s]+/)
    .filter((part) => /^[A-Z0-9]{4,20}$/.test(part) && /[A-Z]/.test(part));
  const pairs = parts.filter((part) => QUOTE_SUFFIXES.some((q) => part.endsWith(q) && part.length > q.length));
  return pairs.length === 1 ? pairs[0] : undefined;
}

/** The files of each symbol, in the order given: --symbol's, or each file's by its name. */
function filesBySymbol(symbol: string | undefined, files: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const file of files) {
    const s = symbol ?? symbolInName(file);
    if (s === undefined)
      throw usage(`cannot tell the symbol of ${file} from its name (no one part like ETHUSDT): give --symbol`);
    out.set(s, [...(out.get(s) ?? []), file]);
  }
  return out;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags(SPEC.name, argv, SPEC.flags, true);
  if (values.help) {
    console.log(helpText(SPEC));
    return 0;
  }
  if (positionals.length === 0) {
    console.error(`import-candles: at least one CSV file is required\n\n${helpText(SPEC)}`);
    return 2;
  }
  const tty = process.stderr.isTTY === true;
  try {
    const ruleValues = values as Values;
    const file = values['pair-config'];
    if (
      file !== undefined &&
      [...RULE_FLAGS, 'base', 'quote', 'base-id', 'quote-id'].some((f) => ruleValues[f as keyof Values] !== undefined)
    )
      throw usage('--pair-config gives the whole pair: no other rule flag goes with it');
    const from = timeFlag('import-candles', 'from', values.from);
    const to = timeFlag('import-candles', 'to', values.to);
    const bySymbol = filesBySymbol(values.symbol, positionals);
    if (bySymbol.size > 1 && RULE_FLAGS.some((f) => ruleValues[f] !== undefined))
      throw usage(
        `the files are of ${[...bySymbol.keys()].join(', ')}: rule flags describe one pair, give each pair's with --pair-config FILE`,
      );
    const fromFile = file === undefined ? undefined : await pairsFromFile(file, [...bySymbol.keys()]);
    for (const [symbol, files] of bySymbol) {
      const pair =
        fromFile === undefined
          ? pairFromFlags(symbol, ruleValues)
          : (fromFile.get(symbol) ?? DEFAULT_PAIRS.find((p) => p.symbol === symbol));
      const started = performance.now();
      const result = await importCandles({
        symbol,
        files,
        outDir: values.out,
        pair,
        from,
        to,
        assets: assetsOf(symbol, {
          base: pair?.baseAsset,
          quote: pair?.quoteAsset,
          baseId: pair?.baseAssetId ?? undefined,
          quoteId: pair?.quoteAssetId ?? undefined,
        }),
        onProgress: tty
          ? (done, total) => {
              const rate = Math.round(done / Math.max((performance.now() - started) / 1000, 1e-3));
              process.stderr.write(`\rimport-candles: ${symbol} ${done}/${total} candles (${rate}/s)`);
            }
          : undefined,
      });
      if (tty) process.stderr.write('\n');
      console.log(
        `${result.file}: ${result.candles} candles, ${result.tickers} tickers, ` +
          `${new Date(result.from).toISOString()} to ${new Date(result.to).toISOString()}`,
      );
    }
    return 0;
  } catch (err) {
    if (tty) process.stderr.write('\n');
    return commandFailure('import-candles', err);
  }
}
