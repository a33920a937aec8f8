/**
 * The operator's actions against a running daemon, from a shell: `bot pause|resume|exit|cancel|stop-buy|
 * kill-switch|reload|force-entry`, each one request to the control API (/api/v1, the same actions as the
 * page and the chat), so that `docker exec`, `kubectl exec` and scripts need no hand-written HTTP. The address
 * is the daemon's own (API_HOST, API_PORT; a wildcard host is reached on loopback) unless --url names one; the
 * token is API_TOKEN (or API_TOKEN_FILE) unless --token-file names a file. No flag takes the token itself: a
 * command line is seen by every user of the machine (ps) and kept in shell histories.
 * Exit 0 when the daemon did it (or found it already done), 1 when it refused or could not be reached, 2 on a
 * usage error. One line says what happened; --json prints the daemon's answer instead.
 */
import { readFileSync } from 'node:fs';
import { BotError } from '../errors.js';
import { commandEnv } from './command-env.js';
import { type CommandModule, commandSpec, type CommandSpec, type Flags, helpText, parseCommandFlags } from './flags.js';
import { listenerUrl } from './healthcheck.js';

const CONNECTION: Flags = {
  url: {
    type: 'string',
    arg: 'URL',
    doc: "the daemon's control API (default: http://API_HOST:API_PORT, a wildcard host on 127.0.0.1)",
  },
  'token-file': {
    type: 'string',
    arg: 'FILE',
    doc: 'a file holding the API token (default: API_TOKEN, or the file API_TOKEN_FILE names)',
  },
  json: { type: 'boolean', doc: "print the daemon's JSON answer instead of a line" },
};

/** The parsed flags. */
type Values = Readonly<Record<string, unknown>>;

/** One request an operator command makes: from its positionals and flags, or a usage error (thrown). */
interface Request {
  method: 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: Record<string, unknown>;
  /** What the line says it acted on: `pause grid-usdt/ETHUSDT: paused`. */
  subject: string;
}

interface OperatorCommand {
  spec: CommandSpec;
  /** How many positionals it takes. */
  args: number;
  request(args: string[], values: Values): Request;
}

const usage = (name: string, message: string) => new BotError('E_USAGE', `${name}: ${message}`);

const onOff = (name: string, arg: string): boolean => {
  if (arg === 'on' || arg === 'off') return arg === 'on';
  throw usage(name, `expected on or off, got '${arg}'`);
};

/** A price or amount flag: a positive decimal, kept as text (the daemon rounds it onto the pair's grid). */
function decimalFlag(name: string, flag: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (!/^\d{1,20}(\.\d{1,20})?$/.test(value) || Number(value) <= 0)
    throw usage(name, `--${flag} must be a positive decimal such as 20150.5, got '${value}'`);
  return value;
}

const instancePath = (name: string, action: string) => `/instances/${encodeURIComponent(name)}/${action}`;

const spec = (name: string, usageLine: string, about: string, flags: Flags = {}) =>
  commandSpec({
    name,
    usage: `${usageLine} [--url URL] [--token-file FILE] [--json]`,
    about,
    flags: { ...flags, ...CONNECTION },
    positionals: true,
  });

/** A brake's switch: `NAME on|off`, PUT /NAME {on}. */
function onOffCommand(name: 'stop-buy' | 'kill-switch', about: string): OperatorCommand {
  return {
    spec: spec(name, `${name} on|off`, about),
    args: 1,
    request: ([arg]) => ({ method: 'PUT', path: `/${name}`, body: { on: onOff(name, arg!) }, subject: name }),
  };
}

export const OPERATOR_COMMANDS = {
  pause: {
    spec: spec(
      'pause',
      'pause NAME [--cancel-orders]',
      `Pauses the instance NAME of the running daemon: its strategy decides nothing until resumed; its orders stay
(unless --cancel-orders), and its declared exits and protections still run. The pause holds across restarts.`,
      { 'cancel-orders': { type: 'boolean', doc: "cancel its open orders too (a declared exit's stop stays)" } },
    ),
    args: 1,
    request: ([name], values) => ({
      method: 'POST',
      path: instancePath(name!, 'pause'),
      body: values['cancel-orders'] === true ? { cancelOrders: true } : {},
      subject: `pause ${name!}`,
    }),
  },
  resume: {
    spec: spec('resume', 'resume NAME', 'Resumes the paused instance NAME of the running daemon.'),
    args: 1,
    request: ([name]) => ({ method: 'POST', path: instancePath(name!, 'resume'), subject: `resume ${name!}` }),
  },
  exit: {
    spec: spec(
      'exit',
      'exit NAME [--price P]',
      `Gets the instance NAME out of its position: pauses it, cancels its open orders and sells what it holds
less dust, at MARKET, or as a LIMIT at --price. Says what it sent; asked again, it sends nothing more.`,
      { price: { type: 'string', arg: 'P', doc: 'sell with a LIMIT at this price (default: MARKET)' } },
    ),
    args: 1,
    request: ([name], values) => {
      const price = decimalFlag('exit', 'price', values.price);
      return {
        method: 'POST',
        path: instancePath(name!, 'exit'),
        body: price === undefined ? { type: 'market' } : { type: 'limit', price },
        subject: `exit ${name!}`,
      };
    },
  },
  'force-entry': {
    spec: spec(
      'force-entry',
      'force-entry NAME [--price P] [--quote-amount Q]',
      `Opens a position for the instance NAME now (Freqtrade's forcebuy): a BUY at MARKET, or a LIMIT at --price,
spending --quote-amount of the quote asset (default: the instance's params.quoteAmount). It goes through every
brake a strategy's entry meets (kill switch, stop-buy, circuit breaker, protections, risk limits, balance), and
the instance's declared exits (stop-loss, ROI, trailing stop) take the position as they take the strategy's.`,
      {
        price: { type: 'string', arg: 'P', doc: 'buy with a LIMIT at this price (default: MARKET)' },
        'quote-amount': {
          type: 'string',
          arg: 'Q',
          doc: "how much of the quote asset to spend (default: the instance's params.quoteAmount)",
        },
      },
    ),
    args: 1,
    request: ([name], values) => {
      const price = decimalFlag('force-entry', 'price', values.price);
      const quoteAmount = decimalFlag('force-entry', 'quote-amount', values['quote-amount']);
      return {
        method: 'POST',
        path: instancePath(name!, 'entry'),
        body: {
          ...(price === undefined ? { type: 'market' } : { type: 'limit', price }),
          ...(quoteAmount === undefined ? {} : { quoteAmount }),
        },
        subject: `force-entry ${name!}`,
      };
    },
  },
  cancel: {
    spec: spec('cancel', 'cancel ORDER', "Cancels one open order, named by the journal's id (a-5) or the exchange's."),
    args: 1,
    request: ([id]) => ({ method: 'DELETE', path: `/orders/${encodeURIComponent(id!)}`, subject: `cancel ${id!}` }),
  },
  'stop-buy': onOffCommand(
    'stop-buy',
    'Stop-buy on: no new BUY orders (exits and protective SELLs still go out); off: entries allowed again.',
  ),
  'kill-switch': onOffCommand(
    'kill-switch',
    'The kill switch (KILL_SWITCH_FILE) on: no new orders at all; off: orders allowed again.',
  ),
  reload: {
    spec: spec(
      'reload',
      'reload',
      `Reloads the strategy files (params, risk, exits, protections) into the running instances. An invalid file,
or one that adds, removes or moves an instance, changes nothing and says why.`,
    ),
    args: 0,
    request: () => ({ method: 'POST', path: '/reload', body: {}, subject: 'reload' }),
  },
} satisfies Record<string, OperatorCommand>;

/** The daemon's answer to an action: what it did, or its error. */
interface Answer {
  ok?: boolean;
  outcome?: string;
  error?: { code?: string; message?: string; problems?: string[]; issues?: { field: string; message: string }[] };
}

/** Where and how to reach the daemon, from the flags and the environment; a number is an exit code. */
async function connection(name: string, values: Values) {
  const env = await commandEnv();
  if (env === 1) return 1;
  let token = env.API_TOKEN;
  const tokenFile = values['token-file'];
  if (typeof tokenFile === 'string') {
    try {
      token = readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      throw new BotError(
        'E_CONFIG',
        `${name}: --token-file ${tokenFile}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    if (token === '') throw new BotError('E_CONFIG', `${name}: --token-file ${tokenFile} is empty`);
  }
  const url = values.url;
  if (typeof url === 'string') {
    if (!/^https?:\/\/[^/]+\/?$/.test(url))
      throw usage(name, `--url must be the daemon's address such as http://127.0.0.1:8080, got '${url}'`);
    return { base: url.replace(/\/$/, ''), token };
  }
  if (env.API_PORT === 0)
    throw new BotError('E_CONFIG', `${name}: the control API is off (API_PORT=0): set API_PORT, or give --url`);
  return { base: listenerUrl(env.API_HOST, env.API_PORT), token };
}

async function operatorCommand(command: OperatorCommand, argv: string[]): Promise<number> {
  const { spec: s } = command;
  const flags = parseCommandFlags(s, argv);
  if (typeof flags === 'number') return flags;
  const { values, positionals } = flags;
  try {
    if (positionals.length !== command.args)
      throw usage(s.name, `expected ${s.usage.split(' [--url')[0]}, got ${positionals.length} argument(s)`);
    const request = command.request(positionals, values);
    const reach = await connection(s.name, values);
    if (reach === 1) return 1;
    const url = `${reach.base}/api/v1${request.path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: request.method,
        headers: {
          ...(reach.token === undefined ? {} : { authorization: `Bearer ${reach.token}` }),
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal: AbortSignal.timeout(120_000),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const why = (err as Error).name === 'TimeoutError' ? 'no answer within 120 s' : (cause?.code ?? String(err));
      console.error(`${s.name}: no daemon answers at ${reach.base} (${why}): is it running? (API_PORT, --url)`);
      return 1;
    }
    const text = await response.text();
    let answer: Answer;
    try {
      answer = JSON.parse(text) as Answer;
    } catch {
      console.error(`${s.name}: ${url} answered HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
      return 1;
    }
    if (values.json === true) console.log(JSON.stringify(answer, null, 2));
    if (response.ok && answer.ok === true) {
      if (values.json !== true) console.log(`${request.subject}: ${answer.outcome ?? 'done'}`);
      return 0;
    }
    if (values.json !== true) {
      const { code = `HTTP ${response.status}`, message = text.slice(0, 200) } = answer.error ?? {};
      const hint =
        response.status === 401 ? ' (set API_TOKEN or API_TOKEN_FILE as the daemon has it, or give --token-file)' : '';
      console.error(`${request.subject}: ${code}: ${message}${hint}`);
      for (const p of answer.error?.problems ?? []) console.error(`  - ${p}`);
      for (const i of answer.error?.issues ?? []) console.error(`  - ${i.field}: ${i.message}`);
    }
    return 1;
  } catch (err) {
    if (!(err instanceof BotError)) throw err;
    console.error(err.code === 'E_USAGE' ? `${err.message}\n\n${helpText(s)}` : err.message);
    return err.code === 'E_USAGE' ? 2 : 1;
  }
}

/** The module of one operator command, as src/cli/commands.ts loads it. */
export function operatorModule(name: keyof typeof OPERATOR_COMMANDS): CommandModule {
  const command: OperatorCommand = OPERATOR_COMMANDS[name];
  return { SPEC: command.spec, run: (argv) => operatorCommand(command, argv) };
}
