/**
 * `bot new-strategy NAME [--dir DIR]`: a strategy of your own, in a folder of your own (outside the checkout):
 * NAME.ts (a working SMA crossover on the engine's candles, with its params schema), NAME.test.ts (its tests on
 * the strategy harness, `node:test`, no test framework to install), config/NAME-btcusdt.json (a strategy file
 * that runs it), and, where the folder has none, a package.json and a tsconfig.json. The strategy imports the
 * API as `spot-bot/strategy`, the package export, which the bot resolves to its own wherever the folder is.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { projectRoot } from '../app/installation.js';
import { commandSpec, helpText, parseCommandFlags } from './flags.js';

export const SPEC = commandSpec({
  name: 'new-strategy',
  usage: 'new-strategy NAME [--dir DIR]',
  about: `Writes a strategy of your own into DIR (default: the working directory), to grow from:
  NAME.ts                    the strategy (an SMA crossover on candles), its params as a zod schema
  NAME.test.ts               its tests (node:test on spot-bot/testing's harness): npm test
  config/NAME-btcusdt.json   a strategy file (bot instance) that runs it
  package.json, tsconfig.json   where DIR has none (spot-bot as a dependency, npm test)
Nothing is overwritten. NAME: lower-case letters, digits, - and _ (a module name, as a strategy file's "strategy").`,
  flags: { dir: { type: 'string', arg: 'DIR', doc: 'the folder (made if missing)' } },
  positionals: true,
});

const NAME = /^[a-z0-9][a-z0-9_-]*$/;

function strategyModule(name: string): string {
  return `/**
 * ${name}: buys when the fast SMA of \`timeframe\` candles crosses above the slow one, sells what it holds when
 * the fast one crosses back under; the engine holds a stop loss under the entry whatever this code does
 * (\`exits.stopLossPct\`). It decides once per closed candle. Written by \`bot new-strategy\`: change the rule,
 * keep the shape (a params schema, a default export of defineStrategy).
 */
import { defineStrategy, decimalParam, sma, TIMEFRAMES, tradableQuantity, z, type StrategyContext } from 'spot-bot/strategy';

const params = z
  .object({
    /** The candles the averages read. */
    timeframe: z.enum(TIMEFRAMES).default('15m'),
    /** Fast and slow averages, in candles. */
    fast: z.number().int().min(2).default(10),
    slow: z.number().int().min(3).default(30),
    /** Quote to spend per entry. */
    quoteAmount: decimalParam,
  })
  .refine((p) => p.fast < p.slow, { path: ['fast'], message: 'expected below slow' });

type Params = z.infer<typeof params>;

const indicators = (p: Params) => ({ fast: sma(p.timeframe, p.fast), slow: sma(p.timeframe, p.slow) });

interface State {
  /** Open time of the last candle decided on (a restart never decides a candle twice). */
  decided?: number;
}

type Ctx = StrategyContext<Params, State, ReturnType<typeof indicators>>;

export default defineStrategy({
  name: '${name}',
  description: 'SMA crossover on candles, with a stop loss the engine holds',
  params,
  orderTypes: ['MARKET'],
  candles: (p) => ({ [p.timeframe]: p.slow + 1 }),
  indicators,
  exits: { stopLossPct: 3 },
  onTick(ctx: Ctx) {
    const { fast, slow } = ctx.indicators;
    const price = ctx.price;
    if (price === undefined || ctx.openOrders.length > 0 || fast.time === ctx.state.decided) return;
    if (fast.value === undefined || slow.value === undefined) return;
    if (fast.previous === undefined || slow.previous === undefined) return;
    ctx.state.decided = fast.time;
    const held = tradableQuantity(ctx.rules, ctx.position.quantity, price);
    if (held.isZero() && fast.previous <= slow.previous && fast.value > slow.value)
      ctx.market('BUY', { quoteAmount: ctx.params.quoteAmount }, { tag: '${name}:entry' });
    else if (!held.isZero() && fast.value < slow.value) ctx.market('SELL', { quantity: held }, { tag: '${name}:exit' });
  },
});
`;
}

function strategyTest(name: string): string {
  return `/**
 * ${name}'s decisions on hand-made price paths, through the engine's own order checks (spot-bot/testing's
 * harness). Run: npm test (node --import spot-bot/register --test *.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Intent } from 'spot-bot/strategy';
import { Harness } from 'spot-bot/testing';
import strategy from './${name}.js';

const MINUTE = 60_000;
/** One-minute candles, one tick a minute: each tick closes the candle of the tick before. */
const PARAMS = { timeframe: '1m', fast: 2, slow: 4, quoteAmount: '100' };
const SLIDE = [20_000, 19_900, 19_800, 19_700, 19_600, 19_500, 19_400];
const CLIMB = [19_600, 19_800, 20_000, 20_200, 20_400];
const DROP = [20_000, 19_600, 19_200, 18_800];

const tags = (intents: readonly Intent[]) => intents.map((i) => (i.kind === 'CANCEL' ? 'CANCEL' : \`\${i.side} \${i.tag}\`));

async function walk<S extends object>(h: Harness<S>, prices: readonly number[]): Promise<string[]> {
  return tags(await h.walk(prices, MINUTE));
}

test('buys once when the fast average crosses above the slow one', async () => {
  const h = new Harness(strategy, { params: PARAMS, quote: 10_000 });
  await h.start();
  assert.deepEqual(await walk(h, SLIDE), []);
  assert.deepEqual(await walk(h, CLIMB), ['BUY ${name}:entry']);
  assert.ok(h.position.quantity.gt(0));
});

test('sells what it holds when the fast average falls under the slow one', async () => {
  const h = new Harness(strategy, { params: PARAMS, quote: 10_000 });
  await h.start();
  await walk(h, [...SLIDE, ...CLIMB]);
  assert.deepEqual(await walk(h, DROP), ['SELL ${name}:exit']);
  assert.ok(h.position.quantity.isZero());
});

test('refuses params whose fast average is not below the slow one', () => {
  assert.equal(strategy.params.safeParse({ ...PARAMS, fast: 4 }).success, false);
});
`;
}

function strategyFile(name: string): string {
  const file = {
    name: `${name}-btcusdt`,
    strategy: name,
    symbol: 'BTCUSDT',
    schedule: '*/5 * * * * *',
    enabled: true,
    params: { timeframe: '15m', fast: 10, slow: 30, quoteAmount: '50' },
    risk: { maxOrderNotional: '60', maxOpenOrders: 2, maxPosition: '0.003', dailyLossLimit: '10' },
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** The folder's `npm test`: its *.test.ts on node:test, TypeScript through spot-bot/register (tsx). */
const TEST_SCRIPT = 'node --import spot-bot/register --test *.test.ts';

/** The test script `npm init -y` writes: a placeholder that fails, so it counts as none. */
const NPM_INIT_TEST = 'echo "Error: no test specified" && exit 1';

/** Gives an existing package.json the test script when it has none (or npm's placeholder); true when it did. */
async function addTestScript(manifest: string): Promise<boolean> {
  let pkg: unknown;
  try {
    pkg = JSON.parse(await readFile(manifest, 'utf8'));
  } catch {
    return false;
  }
  if (pkg === null || typeof pkg !== 'object' || Array.isArray(pkg)) return false;
  const scripts = (pkg as { scripts?: unknown }).scripts ?? {};
  if (scripts === null || typeof scripts !== 'object') return false;
  const test = (scripts as { test?: unknown }).test;
  if (test !== undefined && test !== NPM_INIT_TEST) return false;
  (pkg as { scripts: object }).scripts = { ...scripts, test: TEST_SCRIPT };
  await writeFile(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
  return true;
}

function packageJson(dir: string): string {
  const root = projectRoot();
  const pkg = {
    name: 'my-strategies',
    private: true,
    type: 'module',
    scripts: {
      test: TEST_SCRIPT,
      check: 'bot check-config --strategies . config',
    },
    devDependencies: { 'spot-bot': `file:${relative(dir, root) || '.'}` },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      // @types/node comes with spot-bot (installed from a checkout, with its own dependencies).
      typeRoots: ['./node_modules/spot-bot/node_modules/@types', './node_modules/@types'],
      types: ['node'],
    },
    include: ['*.ts'],
  },
  null,
  2,
)}\n`;

export async function run(argv: string[]): Promise<number> {
  const flags = parseCommandFlags(SPEC, argv);
  if (typeof flags === 'number') return flags;
  const [name, ...extra] = flags.positionals;
  if (name === undefined || extra.length > 0) {
    console.error(`new-strategy: expected one NAME, found ${flags.positionals.length}\n\n${helpText(SPEC)}`);
    return 2;
  }
  if (!NAME.test(name)) {
    console.error(`new-strategy: NAME: expected lower-case letters, digits, - and _ (a module name), found '${name}'`);
    return 2;
  }
  const dir = resolve(flags.values.dir ?? '.');
  const files: [string, string][] = [
    [`${name}.ts`, strategyModule(name)],
    [`${name}.test.ts`, strategyTest(name)],
    [join('config', `${name}-btcusdt.json`), strategyFile(name)],
  ];
  const taken = files.filter(([f]) => existsSync(join(dir, f))).map(([f]) => join(dir, f));
  if (taken.length > 0) {
    console.error(`new-strategy: not overwriting ${taken.join(', ')}`);
    return 1;
  }
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) files.push(['package.json', packageJson(dir)]);
  else if (await addTestScript(manifest)) console.log(`added scripts.test to ${manifest}: ${TEST_SCRIPT}`);
  if (!existsSync(join(dir, 'tsconfig.json'))) files.push(['tsconfig.json', TSCONFIG]);
  await mkdir(join(dir, 'config'), { recursive: true });
  for (const [file, text] of files) {
    await writeFile(join(dir, file), text, { flag: 'wx' });
    console.log(`wrote ${join(dir, file)}`);
  }
  const shownDir = relative(process.cwd(), dir) || '.';
  const install = existsSync(join(dir, 'node_modules', 'spot-bot'))
    ? ''
    : `\n  npm install --save-dev ${projectRoot()}   # once: spot-bot/strategy, spot-bot/testing, the bot command`;
  console.log(`
Next, in ${shownDir}:${install}
  npm test                                   # ${name}'s tests
  npx bot check-config --strategies . config/${name}-btcusdt.json
  npx bot backtest --strategies . --config config/${name}-btcusdt.json --data <recording>
The daemon takes it with STRATEGIES_DIR=${dir} (and the strategy file in CONFIG_DIR).`);
  return 0;
}
