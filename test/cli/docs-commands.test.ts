/**
 * Every command in the README's and docs/'s shell blocks, checked against what the project has, so a documented
 * step cannot fail on a name: each `bot` command (however it is reached: `npm run -s bot --`, `npx bot`,
 * `docker exec … bot`, `npm start --`) exists, and each of its flags is one the command's spec takes (the specs
 * `--help` and the parser read); each `npm run SCRIPT` is a script of package.json; each path into the checkout
 * (config/, data/samples/, strategies/, docs/, bench/, bin/; not the reader's own my-… files) exists; each relative
 * link and its #anchor resolves. Every documented line is classified by RULES, and a new one no rule names fails:
 * run here (the bot commands that work offline, in process: check-config, backtests and sweeps, exports), started
 * here and asked (the simulated exchange), run as written by another test or script (npm start, the container's
 * steps, the API's curl lines, a strategy of one's own), or not run, with the reason (a real exchange, the reader's
 * own files, a synopsis).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandSpec } from '../../src/cli/flags.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { commandSpecs } from '../../src/cli/reference.js';
import { daemonEnv, ROOT } from '../e2e/daemon-process.js';
import { trackChild } from '../support/child-processes.js';
import { capture } from '../support/command-output.js';
import { tempDir } from '../support/temp-dir.js';
import { until } from '../support/until.js';

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : [])),
];
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');

interface Line {
  page: string;
  line: string;
}

/** The lines of every shell block as a reader types them: continuation lines joined, comments dropped. */
function documentedLines(): Line[] {
  const out: Line[] = [];
  for (const page of PAGES) {
    for (const block of text(page).matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
      const joined = block[1]!.replace(/\\\n\s*/g, ' ');
      for (const raw of joined.split('\n')) {
        const line = raw
          .replace(/(^|\s)#.*$/, '')
          .trim()
          .replace(/\s+/g, ' ');
        if (line !== '') out.push({ page, line });
      }
    }
  }
  return out;
}

/** The commands of every shell block: each line's `&&`, `;` and `|` split. */
function shellCommands(): Line[] {
  return documentedLines().flatMap(({ page, line }) =>
    line.split(/\s*(?:&&|\|\||;|\|)\s*/).flatMap((part) => (part === '' ? [] : [{ page, line: part }])),
  );
}

/**
 * What the suite does with a documented line (the first rule matching it). `run`: the bot command runs in process
 * to its end and exits 0, its output folder or file in a temp folder; `window` runs a backtest or an export over
 * the two hours from that time (--from/--to added: the documented span takes minutes). `starts`: it is started as
 * written (its own port) and answers. `elsewhere`: that test or script runs it as written. `not run`: why not.
 */
type Rule = { match: RegExp; page?: string } & (
  | { kind: 'run'; window?: string }
  | { kind: 'starts' }
  | { kind: 'elsewhere'; where: string }
  | { kind: 'not run'; why: string }
);
const BOT = String.raw`^(?:\S+=\S+ )*(?:npm run -s bot --|npx bot|bot) `;
const bot = (rest: string) => new RegExp(BOT + rest);
const MARCH = '2023-03-08T00:00:00Z';
const RULES: Rule[] = [
  { match: /^npm ci$/, kind: 'elsewhere', where: '.ci/run' },
  { match: /^npm test$/, page: 'docs/strategies.md', kind: 'elsewhere', where: 'test/e2e/outside-strategy.test.ts' },
  { match: /^npm test$/, kind: 'elsewhere', where: '.ci/run' },
  { match: /^npm start$/, kind: 'elsewhere', where: 'test/e2e/npm-start.test.ts' },
  { match: /\[--|FILE\.csv/, kind: 'not run', why: 'a synopsis: […] is optional, FILE a placeholder' },
  { match: /MODE=live|api\.example\.com/, kind: 'not run', why: 'a real exchange, with keys' },
  {
    match: /^PAPER_DATA=data\/recordings /,
    kind: 'not run',
    why: "the reader's own recordings (bot record makes them)",
  },
  { match: /CONFIG_DIR=</, kind: 'not run', why: 'a placeholder folder (<a folder with the file, enabled>)' },
  { match: /^(docker|mkdir -p data && sudo)/, kind: 'elsewhere', where: 'test/container/container.ts' },
  { match: /^T=|^curl /, kind: 'elsewhere', where: 'test/e2e/api.test.ts' },
  {
    match: /^mkdir ~\/my-|^npm (init|install)|^npx bot /,
    kind: 'elsewhere',
    where: 'test/e2e/outside-strategy.test.ts',
  },
  { match: bot('status$'), kind: 'elsewhere', where: 'test/e2e/npm-start.test.ts' },
  { match: bot('exchange --help$'), kind: 'run' },
  {
    match: bot('exchange '),
    kind: 'not run',
    why: 'the exchange, with keys (test/cli/exchange.test.ts: the simulated one)',
  },
  {
    match: bot('record '),
    kind: 'not run',
    why: "the exchange's market watch (test/record/recorder.test.ts: the simulated one)",
  },
  { match: bot('import-candles .*(path/to/|binance-)'), kind: 'not run', why: "the reader's own candle files" },
  { match: /SWEEP_QUEUE=/, kind: 'elsewhere', where: 'test/backtest/queue.test.ts' },
  {
    match: /data\/recordings|my-btcusd/,
    kind: 'not run',
    why: "the reader's own recordings (bot record, bot import-candles)",
  },
  { match: bot('check-config'), kind: 'run' },
  // Nine backtests of the whole sample: seconds; the command runs there on its first 42 hours.
  { match: bot('check-strategy '), kind: 'elsewhere', where: 'test/backtest/strategy-check.test.ts' },
  { match: bot('data export .*--from'), kind: 'run' },
  { match: bot('data export '), kind: 'run', window: MARCH },
  {
    match: bot('backtest .*--walk-forward 4 --train 6d'),
    kind: 'not run',
    why: 'four walk-forward windows of 9 days: minutes (test/backtest/validation.test.ts runs the same flags on days)',
  },
  { match: bot('backtest .*data/samples/2023-04'), kind: 'run', window: '2023-04-14T00:00:00Z' },
  { match: bot('backtest '), kind: 'run', window: MARCH },
  {
    match: bot('hyperopt .*--epochs 100'),
    kind: 'not run',
    why: '100 trials: minutes (test/backtest/hyperopt.test.ts runs the search on the sample)',
  },
  { match: bot('sim --port'), kind: 'starts' },
  // Their flags started and asked there; a process each is more than this file's share of the suite.
  { match: bot('sim '), kind: 'elsewhere', where: 'test/sim/server-cli.test.ts' },
];
const ruleOf = ({ page, line }: Line) => RULES.find((r) => (r.page ?? page) === page && r.match.test(line));

/**
 * A documented command's arguments with its output in `dir` (an --out of its own replaced, standard output too, or
 * added where the command writes a folder), a sweep on one worker, and over the two hours from `window` when given.
 */
function inFolder(args: string[], dir: string, window: string | undefined): string[] {
  const out = args.indexOf('--out');
  const moved =
    out >= 0
      ? args.map((a, i) => (i === out + 1 ? join(dir, a === '-' ? 'stdout.csv' : basename(a)) : a))
      : args[0] === 'backtest' || args[0] === 'data'
        ? [...args, '--out', args[0] === 'data' ? join(dir, 'export') : dir]
        : args;
  // A sweep on one worker thread: threads start in parallel and each loads the engine, a second or two of CPU.
  const workers = moved.indexOf('--workers');
  const threads = !moved.includes('--sweep')
    ? moved
    : workers >= 0
      ? moved.map((a, i) => (i === workers + 1 ? '1' : a))
      : [...moved, '--workers', '1'];
  if (window === undefined) return threads;
  const to = new Date(Date.parse(window) + 2 * 3_600_000).toISOString();
  return [...threads, '--from', window, '--to', to];
}

/** Words as the shell splits them (quotes removed; no expansion). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

/** The `bot` arguments of a command line, when it runs the bot. */
function botArguments(w: string[]): string[] | undefined {
  while (w.length > 0 && /^[A-Z_][A-Z0-9_]*=/.test(w[0]!)) w = w.slice(1);
  const at = (i: number) => w[i];
  if (at(0) === 'bot') return w.slice(1);
  if (at(0) === 'npx' && at(1) === 'bot') return w.slice(2);
  if (at(0) === 'npm' && at(1) === 'run') {
    const rest = w.slice(2).filter((x) => x !== '-s' && x !== '--silent');
    if (rest[0] === 'bot') return rest.slice(rest[1] === '--' ? 2 : 1);
  }
  if (at(0) === 'npm' && at(1) === 'start') return ['run', ...w.slice(w[2] === '--' ? 3 : 2)];
  const exec = w.indexOf('bot', 1);
  if ((at(0) === 'docker' || at(0) === 'kubectl' || at(0) === 'podman') && exec > 0 && w[exec - 1] !== '--name')
    return w.slice(exec + 1);
  return undefined;
}

describe('the commands in the docs', async () => {
  const specs: CommandSpec[] = (await commandSpecs()).flatMap((c) => [...c.specs]);
  const scripts = Object.keys((JSON.parse(text('package.json')) as { scripts: Record<string, string> }).scripts);
  const commands = shellCommands();

  it('name bot commands and flags that exist', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { page, line } of commands) {
      const args = botArguments(words(line));
      if (args === undefined || args.length === 0 || args[0]!.startsWith('-')) continue;
      checked++;
      const spec = specs
        .filter((s) => s.name.split(' ').every((part, i) => args[i] === part))
        .sort((a, b) => b.name.length - a.name.length)[0];
      if (spec === undefined) {
        problems.push(`${page}: no command 'bot ${args[0]}' in: ${line}`);
        continue;
      }
      for (const arg of args.slice(spec.name.split(' ').length)) {
        if (arg === '--' || arg === '--help' || arg === '-h') continue;
        const long = /^--([a-z][\w-]*)/.exec(arg)?.[1];
        const short = /^-([a-zA-Z])$/.exec(arg)?.[1];
        if (long !== undefined && spec.flags[long] === undefined)
          problems.push(`${page}: bot ${spec.name} has no flag --${long}: ${line}`);
        if (short !== undefined && !Object.values(spec.flags).some((f) => f.short === short))
          problems.push(`${page}: bot ${spec.name} has no flag -${short}: ${line}`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(30);
  });

  it('name npm scripts that package.json has', () => {
    const problems = commands.flatMap(({ page, line }) => {
      const w = words(line);
      if (w[0] !== 'npm' || w[1] !== 'run') return [];
      const name = w.slice(2).find((x) => !x.startsWith('-'));
      return name === undefined || scripts.includes(name) ? [] : [`${page}: no npm script '${name}': ${line}`];
    });
    expect(problems).toEqual([]);
  });

  it('name files of the checkout that exist', () => {
    const problems: string[] = [];
    for (const { page, line } of commands)
      for (const w of words(line).flatMap((x) => x.split(/[,=]/))) {
        // The reader's own files (my-…) are made by the steps before.
        if (!/^(config|data\/samples|strategies|docs|bench|bin)\/[\w.-]+(\/[\w.-]+)*$/.test(w) || /\bmy-/.test(w))
          continue;
        if (!existsSync(join(ROOT, w))) problems.push(`${page}: ${w} does not exist: ${line}`);
      }
    expect(problems).toEqual([]);
  });

  it('link to pages and headings that exist', () => {
    const slug = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .trim()
        .replace(/\s/g, '-');
    const anchors = (page: string) =>
      new Set([...text(page).matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!.replace(/`/g, ''))));
    const problems: string[] = [];
    for (const page of PAGES) {
      const body = text(page).replace(/^```[\s\S]*?^```/gm, '');
      for (const m of body.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        const [file, hash] = target.split('#') as [string, string | undefined];
        const path = file === '' ? page : normalize(join(dirname(page), file));
        if (!existsSync(join(ROOT, path))) problems.push(`${page}: ${target}: no such file`);
        else if (hash !== undefined && path.endsWith('.md') && !anchors(path).has(hash))
          problems.push(`${page}: ${target}: no such heading in ${path}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("name the journal backup this version's migrations write (before-LATEST_VERSION)", () => {
    // A new image names its backup after the schema it migrates to: an example naming an older one is stale.
    const problems: string[] = [];
    for (const page of PAGES)
      for (const m of text(page).matchAll(/schema-(\d+)-before-(\d+)/g))
        if (Number(m[2]) !== LATEST_VERSION || !(Number(m[1]) < LATEST_VERSION))
          problems.push(`${page}: ${m[0]}: this version migrates to schema ${LATEST_VERSION}`);
    expect(problems).toEqual([]);
  });

  it('are each run by a test, or listed with the reason they are not', () => {
    const problems = documentedLines().flatMap(({ page, line }) =>
      ruleOf({ page, line }) === undefined
        ? [`${page}: no rule for \`${line}\`: add one to RULES (run, starts, elsewhere or not run, and why)`]
        : [],
    );
    expect(problems).toEqual([]);
    // A rule no documented command matches any more goes.
    const used = new Set(documentedLines().map(ruleOf));
    expect(RULES.filter((r) => !used.has(r)).map((r) => String(r.match))).toEqual([]);
    for (const r of RULES) if (r.kind === 'elsewhere') expect(existsSync(join(ROOT, r.where)), r.where).toBe(true);
  });

  it('run as written (in a temp folder, backtests and exports on two hours of their data), and succeed', async () => {
    const dir = tempDir('docs-commands');
    // Each command once (a page may repeat another's), all at once: a sweep mostly waits for its threads.
    const runs = new Map<string, Line & { args: string[]; window?: string }>();
    for (const { page, line } of documentedLines()) {
      const rule = ruleOf({ page, line });
      const args = botArguments(words(line.split(' | ')[0]!));
      if (rule?.kind === 'run' && args !== undefined)
        runs.set(args.join(' '), { page, line, args, window: rule.window });
    }
    expect(runs.size).toBeGreaterThan(10);
    const results = await Promise.all(
      [...runs.values()].map(async ({ page, line, args, window }, k) => {
        const module = await COMMANDS[args[0]!]!.load();
        const argv = inFolder(args.slice(1), mkdirSync(join(dir, String(k)), { recursive: true })!, window);
        const r = await capture((a) => module.run(a), argv);
        return r.code === 0
          ? []
          : [`${page}: ${line}: exit ${r.code} (bot ${args[0]} ${argv.join(' ')})\n${r.err.join('\n')}`];
      }),
    );
    expect(results.flat()).toEqual([]);
  });

  it('start as written and answer: the simulated exchange', async () => {
    const starts = documentedLines().filter((l) => ruleOf(l)?.kind === 'starts');
    expect(starts.length).toBeGreaterThan(0);
    await Promise.all(
      starts.map(async ({ page, line }) => {
        // Its own port (tests run in parallel): the documented one may be taken.
        const args = botArguments(words(line))!.map((a, i, all) => (all[i - 1] === '--port' ? '0' : a));
        const child = trackChild(
          spawn(process.execPath, [join(ROOT, 'bin/bot.js'), ...args], { cwd: ROOT, env: daemonEnv({}) }),
        );
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
        child.stderr.on('data', (c: Buffer) => (out += c.toString('utf8')));
        const url = await until(`${page}: ${line} to say where it listens`, () => /at (http:\/\/\S+) /.exec(out)?.[1], {
          giveUp: () => (child.exitCode === null ? undefined : `it exited ${child.exitCode}: ${out}`),
        });
        const watch = await fetch(`${url}/api/v3/spot/market_watch`);
        expect(watch.status, `${page}: ${line}`).toBe(200);
        child.kill('SIGTERM');
        await once(child, 'exit');
      }),
    );
  });
});
