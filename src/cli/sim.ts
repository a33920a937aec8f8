/**
 * `bot sim`: the simulated exchange on its own, for paper trading and for trying the client by hand. Prints
 * one line on stdout with its URL and where its credentials come from, shows replay progress on a terminal
 * (stderr), and closes cleanly on SIGINT/SIGTERM (exit 0).
 */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { loadEnv } from '../app/env.js';
import { checkPaperData } from '../app/paper-data.js';
import { BotError } from '../errors.js';
import { isPlainDecimal } from '../market/decimal.js';
import { createLogger } from '../ops/logger.js';
import { wallClock } from '../clocks/wall-clock.js';
import { replayMarket } from '../sim/pair-market.js';
import { MatchingEngine } from '../sim/matching-engine.js';
import { type FeedProgress, lockstepFeed, type PriceFeed, randomWalkFeed, replayFeed } from '../sim/feeds.js';
import { DEFAULT_PAPER_BALANCES, DEMO_CREDENTIALS, type SimCredentials, startSimServer } from '../sim/sim-server.js';
import { commandSpec, helpText, numberFlag, parseFlags } from './flags.js';
import { commandFailure } from './command-failure.js';

const SAMPLES = 'data/samples';

const DATA = 'Market data, one of: recordings (--data, or the sample) or a random walk (--random-walk):';

export const SPEC = commandSpec({
  name: 'sim',
  usage: `sim [--port N] [--host H] [--data FILE[,FILE…]] [--speed X] [--loop] [--lockstep] [--allow-partial]
               [--random-walk --seed S --symbols A,B [--start A=PRICE,…]] [--balance ASSET=AMOUNT,…] [--no-cancel]`,
  about: "Serves the exchange's HTTP API (spot-api.md, plus cancel) from the simulated exchange's matching engine.",
  flags: {
    port: { type: 'string', arg: 'N', doc: 'the port (default 0: any free port; the URL line says which)' },
    host: { type: 'string', arg: 'H', default: '127.0.0.1', doc: 'the address to listen on (default 127.0.0.1)' },
    balance: {
      type: 'string',
      arg: 'ASSET=AMOUNT,…',
      doc: `the paper account's funding, replacing the default ${Object.entries(DEFAULT_PAPER_BALANCES)
        .map(([a, v]) => `${a}=${v}`)
        .join(',')}`,
    },
    'no-cancel': { type: 'boolean', doc: 'do not serve DELETE /api/v4/spot/order (a venue without cancel)' },
    data: {
      type: 'string',
      arg: 'FILE,…',
      doc: `replay recordings, all symbols merged in time order (default: the BTCUSDT sample in ${SAMPLES}/)`,
      section: DATA,
    },
    speed: {
      type: 'string',
      arg: 'X',
      doc: 'with --data: X times the recorded pace (default 1; 60 = a recorded minute per second)',
      section: DATA,
    },
    loop: { type: 'boolean', doc: 'with --data: start over at the end', section: DATA },
    lockstep: { type: 'boolean', doc: 'with --data: one recorded ticker per market-watch request', section: DATA },
    'allow-partial': {
      type: 'boolean',
      doc: 'with --data: replay the complete lines of a recording that breaks off (truncated or corrupt), warned; without it such a file is refused, naming where it breaks',
      section: DATA,
    },
    'random-walk': { type: 'boolean', doc: 'a seeded random walk instead of recordings', section: DATA },
    seed: { type: 'string', arg: 'S', doc: "the random walk's seed (default 1)", section: DATA },
    symbols: { type: 'string', arg: 'A,B', doc: "the random walk's symbols (default BTCUSDT)", section: DATA },
    start: { type: 'string', arg: 'A=PRICE,…', doc: "the random walk's starting prices", section: DATA },
  },
  notes: `Credentials: EXCHANGE_API_KEY and EXCHANGE_API_SECRET from the environment or .env when set, else the
documented demo pair (see README). Stop with Ctrl-C (SIGINT) or SIGTERM.`,
});

function usage(message: string): BotError {
  return new BotError('E_USAGE', `sim: ${message}`);
}

function list(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** `A=1,B=2.5` → { A: '1', B: '2.5' }, amounts plain non-negative decimals. */
function assignments(flag: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list(text)) {
    const match = /^([A-Z0-9]{2,20})=(.*)$/.exec(item);
    if (!match || !isPlainDecimal(match[2]!) || match[2]!.startsWith('-'))
      throw usage(`--${flag} takes NAME=AMOUNT pairs like BTC=0.5 (plain decimals), got '${item}'`);
    out[match[1]!] = match[2]!;
  }
  if (Object.keys(out).length === 0) throw usage(`--${flag} needs at least one NAME=AMOUNT pair`);
  return out;
}

function integerFlag(name: string, value: string | undefined, min: number, max: number): number | undefined {
  const n = numberFlag('sim', name, value);
  if (n !== undefined && !(Number.isInteger(n) && n >= min && n <= max))
    throw usage(`--${name} must be an integer within [${min}, ${max}], got '${value}'`);
  return n;
}

async function defaultData(): Promise<string[]> {
  const names = await readdir(SAMPLES).catch(() => [] as string[]);
  const sample = names.filter((n) => n.startsWith('BTCUSDT-') && n.endsWith('.jsonl.gz')).sort()[0];
  if (sample === undefined)
    throw usage(`no --data given and no BTCUSDT sample in ${SAMPLES}/ (run from the project root, or pass --data)`);
  return [path.join(SAMPLES, sample)];
}

function credentialsFromEnv(): { credentials: SimCredentials; source: string } {
  const env = loadEnv();
  if (env.EXCHANGE_API_KEY !== undefined && env.EXCHANGE_API_SECRET !== undefined) {
    return {
      credentials: { apiKey: env.EXCHANGE_API_KEY, apiSecret: env.EXCHANGE_API_SECRET },
      source: 'using EXCHANGE_API_KEY/EXCHANGE_API_SECRET from the environment',
    };
  }
  const { apiKey, apiSecret } = DEMO_CREDENTIALS;
  return {
    credentials: DEMO_CREDENTIALS,
    source: `using the demo key pair ${apiKey} / ${apiSecret} (see README)`,
  };
}

/** The terminal's progress line; a looping replay shows which pass over the recording it is on. */
export function progressLine(progress: FeedProgress): string {
  const { fed, done, time, total } = progress;
  let share = '';
  if (total) {
    const passes = Math.floor(fed / total);
    share = done
      ? ' (100%)'
      : ` (${passes > 0 ? `pass ${passes + 1}, ` : ''}${((100 * (fed % total)) / total).toFixed(1)}%)`;
  }
  const at = time === undefined ? '' : `, simulated time ${new Date(time).toISOString()}`;
  return `sim: ${fed} ticks fed${share}${at}${done ? ', data exhausted' : ''}`;
}

export async function run(argv: string[]): Promise<number> {
  try {
    const { values } = parseFlags(SPEC.name, argv, SPEC.flags);
    if (values.help) {
      console.log(helpText(SPEC));
      return 0;
    }
    const walk = values['random-walk'] === true;
    if (
      walk &&
      (values.data !== undefined ||
        values.lockstep ||
        values.speed !== undefined ||
        values.loop ||
        values['allow-partial'])
    )
      throw usage('--random-walk does not take --data, --lockstep, --speed, --loop or --allow-partial');
    if (!walk && (values.seed !== undefined || values.symbols !== undefined || values.start !== undefined))
      throw usage('--seed, --symbols and --start are for --random-walk');
    if (values.lockstep && (values.speed !== undefined || values.loop))
      throw usage('--lockstep moves one ticker per market-watch request: --speed and --loop do not apply');
    const port = integerFlag('port', values.port, 0, 65535) ?? 0;
    const speed = numberFlag('sim', 'speed', values.speed) ?? 1;
    if (!(speed > 0)) throw usage(`--speed must be above 0, got '${values.speed}'`);
    const seed = integerFlag('seed', values.seed, 0, 2 ** 32 - 1) ?? 1;
    const balances = values.balance === undefined ? undefined : assignments('balance', values.balance);
    const { credentials, source } = credentialsFromEnv();
    const logger = createLogger({ fd: 2 });
    const warn = (message: string) => logger.warn(message);

    let feed: PriceFeed;
    let market: string;
    let pairs = replayMarket([], new Map(), 'the built-in market');
    if (walk) {
      const symbols = list(values.symbols ?? 'BTCUSDT');
      const start = values.start === undefined ? undefined : assignments('start', values.start);
      feed = randomWalkFeed({ symbols, seed, start });
      market = `random walk of ${symbols.join(', ')} (seed ${seed})`;
    } else {
      const files = values.data === undefined ? await defaultData() : list(values.data);
      if (files.length === 0) throw usage('--data needs at least one file');
      // Every file read once before anything starts: one that breaks off is refused, naming where.
      const checked = await checkPaperData(files, values['allow-partial'] === true, warn, {
        data: '--data',
        allow: '--allow-partial',
      });
      // The pairs trade by the rules the recordings carry (the built-in ones where they carry none).
      pairs = replayMarket([], checked.pairs, files.join(', '));
      feed = values.lockstep ? lockstepFeed({ files, warn }) : replayFeed({ files, speed, loop: values.loop, warn });
      const how = values.lockstep
        ? 'one ticker per market-watch request'
        : `speed ${speed}${values.loop ? ', looping' : ''}`;
      market = `replaying ${files.join(', ')}, ${how}`;
    }

    // Orders and trades carry the wall clock, as a real exchange's do (and as the simulator inside `npm start`):
    // a client finds its orders by its own send time. The market data keeps the recording's times.
    const engine = new MatchingEngine({ ...pairs, clock: wallClock });
    const server = await startSimServer({
      engine,
      host: values.host,
      port,
      credentials,
      balances,
      feed,
      cancel: values['no-cancel'] !== true,
      logger,
    });
    console.log(`simulated exchange at ${server.url} (${market}); ${source}`);

    const tty = process.stderr.isTTY === true;
    const ticker = tty
      ? setInterval(() => process.stderr.write(`\r\x1b[K${progressLine(feed.progress)}`), 1000)
      : undefined;
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    clearInterval(ticker);
    if (tty) process.stderr.write(`\r\x1b[K${progressLine(feed.progress)}\n`);
    await server.close();
    const { fed, done, time } = feed.progress;
    logger.info({ signal, fed, done, simulatedTime: time }, 'simulated exchange stopped');
    return 0;
  } catch (err) {
    return commandFailure('sim', err, { service: true });
  }
}
