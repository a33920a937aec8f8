/**
 * `bot exchange <call> [flags]`: one exchange endpoint by hand, through the same signed client the daemon
 * uses. Prints the parsed `data` as JSON on stdout; on failure one line on stderr and exit 2 (usage) or 1.
 */
import { BotError, describeError } from '../errors.js';
import { loadEnv } from '../app/env.js';
import { clientOptionsFromEnv } from '../exchange/client-options.js';
import { ExchangeClient } from '../exchange/client.js';
import { OrderTypeSchema, SideSchema } from '../wire/schemas.js';
import type { HistoryQuery, OrderRequest } from '../ports/venue.js';
import { createLogger } from '../ops/logger.js';
import { commandSpec, type Flags, helpText, numberFlag, parseFlags } from './flags.js';

const FLAGS = {
  type: { type: 'string', arg: '0|2', doc: 'balance: the wallet type (0 spot, 2 futures)' },
  currency: { type: 'string', arg: 'ID', doc: 'balance: one asset by its id' },
  symbol: { type: 'string', arg: 'SYMBOL', doc: 'the pair (history, trades, order, cancel, config, tickers)' },
  side: { type: 'string', arg: 'BUY|SELL', doc: 'history, trades: only this side; order: the side' },
  page: { type: 'string', arg: 'N', doc: 'history, trades: the page' },
  'page-size': { type: 'string', arg: 'N', doc: 'history, trades: records per page' },
  'time-from': { type: 'string', arg: 'ISO8601', doc: 'history, trades: from this time' },
  'time-to': { type: 'string', arg: 'ISO8601', doc: 'history, trades: up to this time' },
  'hide-canceled': { type: 'boolean', doc: 'history, trades: leave cancelled orders out' },
  pair: { type: 'string', arg: 'SYMBOL', doc: 'open: only this pair' },
  'order-type': { type: 'string', arg: 'TYPE', doc: 'order: LIMIT, MARKET, STOP_LIMIT or OCO' },
  quantity: { type: 'string', arg: 'DECIMAL', doc: 'order: the base quantity (plain decimal, sent verbatim)' },
  price: { type: 'string', arg: 'DECIMAL', doc: 'order: the limit price' },
  'stop-price': { type: 'string', arg: 'DECIMAL', doc: 'order: the stop price (STOP_LIMIT, OCO)' },
  'limit-price': { type: 'string', arg: 'DECIMAL', doc: "order: the stop leg's limit price (STOP_LIMIT, OCO)" },
  'quote-qty': { type: 'string', arg: 'DECIMAL', doc: 'order: the quote amount (with --use-quote-qty)' },
  'use-quote-qty': { type: 'boolean', doc: 'order: spend --quote-qty instead of --quantity' },
  id: { type: 'string', arg: 'DISPLAYING_ID', doc: "cancel: the order's id" },
} as const satisfies Flags;

type FlagName = keyof typeof FLAGS;
type Values = { [K in FlagName]?: (typeof FLAGS)[K]['type'] extends 'boolean' ? boolean : string };

const HISTORY_FLAGS: FlagName[] = ['symbol', 'side', 'hide-canceled', 'page', 'page-size', 'time-from', 'time-to'];

const CALLS: Record<string, { flags: FlagName[]; args: string; about: string }> = {
  balance: {
    flags: ['type', 'currency'],
    args: '[--type 0|2] [--currency ID]',
    about: 'wallet balances (type 0 spot, 2 futures)',
  },
  history: { flags: HISTORY_FLAGS, args: '[filters]', about: 'order history' },
  trades: { flags: HISTORY_FLAGS, args: '[filters]', about: 'trade history, one record per fill' },
  open: { flags: ['pair'], args: '[--pair SYMBOL]', about: 'open orders' },
  order: {
    flags: [
      'symbol',
      'side',
      'order-type',
      'quantity',
      'price',
      'stop-price',
      'limit-price',
      'quote-qty',
      'use-quote-qty',
    ],
    args: '--symbol S --side BUY|SELL --order-type T [amounts]',
    about: 'place an order (T: LIMIT, MARKET, STOP_LIMIT, OCO)',
  },
  cancel: { flags: ['symbol', 'id'], args: '--symbol S --id DISPLAYING_ID', about: 'cancel an order' },
  config: { flags: ['symbol'], args: '[--symbol S]', about: 'pair configuration (public)' },
  tickers: { flags: ['symbol'], args: '[--symbol S]', about: '24-hour tickers (public)' },
};

export const SPEC = commandSpec({
  name: 'exchange',
  usage: 'exchange <call> [flags]',
  about: `calls:
${Object.entries(CALLS)
  .map(([name, c]) => `  ${`${name} ${c.args}`.padEnd(59)}${c.about}`)
  .join('\n')}

Reads EXCHANGE_BASE_URL, EXCHANGE_API_KEY and EXCHANGE_API_SECRET from the environment or .env.`,
  flags: FLAGS,
  notes: "Prints the answer's data as JSON; on failure one line on stderr, exit 2 for usage errors, 1 otherwise.",
  positionals: true,
});

function usageError(message: string): BotError {
  return new BotError('E_USAGE', `exchange: ${message}`);
}

function required(values: Values, name: 'symbol' | 'side' | 'order-type' | 'id'): string {
  const value = values[name];
  if (value === undefined) throw usageError(`--${name} is required`);
  return value;
}

function integerFlag(values: Values, name: 'type' | 'currency' | 'page' | 'page-size'): number | undefined {
  const n = numberFlag('exchange', name, values[name]);
  if (n !== undefined && !Number.isSafeInteger(n))
    throw usageError(`--${name} must be an integer, got '${values[name]}'`);
  return n;
}

function side(value: string): 'BUY' | 'SELL' {
  const parsed = SideSchema.safeParse(value.toUpperCase());
  if (!parsed.success) throw usageError(`--side must be BUY or SELL, got '${value}'`);
  return parsed.data;
}

function historyQuery(values: Values): HistoryQuery {
  return {
    symbol: values.symbol,
    side: values.side === undefined ? undefined : side(values.side),
    hideCanceled: values['hide-canceled'],
    page: integerFlag(values, 'page'),
    pageSize: integerFlag(values, 'page-size'),
    timeFrom: values['time-from'],
    timeTo: values['time-to'],
  };
}

function orderRequest(values: Values): OrderRequest {
  const typeText = required(values, 'order-type');
  const type = OrderTypeSchema.safeParse(typeText.toUpperCase());
  if (!type.success) throw usageError(`--order-type must be LIMIT, MARKET, STOP_LIMIT or OCO, got '${typeText}'`);
  return {
    symbol: required(values, 'symbol'),
    side: side(required(values, 'side')),
    type: type.data,
    quantity: values.quantity,
    price: values.price,
    stopPrice: values['stop-price'],
    limitPrice: values['limit-price'],
    quoteOrderQty: values['quote-qty'],
    useQuoteQty: values['use-quote-qty'],
  };
}

async function call(client: ExchangeClient, name: string, values: Values): Promise<unknown> {
  switch (name) {
    case 'balance':
      return client.balance({ type: integerFlag(values, 'type'), currency: integerFlag(values, 'currency') });
    case 'history':
      return client.orderHistory(historyQuery(values));
    case 'trades':
      return client.tradeHistory(historyQuery(values));
    case 'open':
      return client.openOrders(values.pair);
    case 'order':
      return client.createOrder(orderRequest(values));
    case 'cancel': {
      if (!client.cancelOrder)
        throw new BotError('E_UNSUPPORTED', 'exchange: cancel is turned off (EXCHANGE_CANCEL=false)');
      return client.cancelOrder(required(values, 'symbol'), required(values, 'id'));
    }
    case 'config':
      return client.pairConfig(values.symbol);
    default:
      return client.marketWatchEntries(values.symbol);
  }
}

/** Mistakes in what the user typed, caught before any request: exit 2. */
const USAGE_CODES = new Set(['E_USAGE', 'E_INVALID_REQUEST']);

export async function run(argv: string[]): Promise<number> {
  try {
    const { values: parsed, positionals } = parseFlags(SPEC.name, argv, SPEC.flags, true);
    const values = parsed as Values & { help?: boolean };
    if (values.help) {
      console.log(helpText(SPEC));
      return 0;
    }
    const [name, ...extra] = positionals;
    if (name === undefined) throw usageError(`which call? one of ${Object.keys(CALLS).join(', ')} (see --help)`);
    const spec = CALLS[name];
    if (!spec) throw usageError(`unknown call '${name}', expected one of ${Object.keys(CALLS).join(', ')}`);
    if (extra.length > 0) throw usageError(`unexpected argument '${extra[0]}'`);
    const stray = (Object.keys(values) as FlagName[]).find((flag) => flag in FLAGS && !spec.flags.includes(flag));
    if (stray !== undefined) throw usageError(`--${stray} does not apply to '${name}'`);

    const env = loadEnv();
    const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
    const client = new ExchangeClient({
      ...clientOptionsFromEnv(env),
      ...(debug ? { logger: createLogger({ fd: 2 }) } : {}),
    });
    try {
      const data = await call(client, name, values);
      console.log(JSON.stringify(data, null, 2));
      return 0;
    } finally {
      await client.close();
    }
  } catch (err) {
    console.error(describeError(err));
    return err instanceof BotError && USAGE_CODES.has(err.code) ? 2 : 1;
  }
}
