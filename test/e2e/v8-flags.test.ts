/**
 * V8's flags on the bot's processes. bin/bot.js starts node with V8's young generation capped (README, peak RSS): V8 reads the limit only when it
 * sets up the heap, so the flag is on the command line that starts node, as a user starts the bot: the
 * executable itself (its shebang, `env -S`), `npm run bot` and `npm start`'s script. Each node started reports
 * its script and flags (a hook loaded through NODE_OPTIONS prints process.argv[1] and process.execArgv on exit).
 * The tier-up budget (src/ops/v8-tiering.ts) is raised by the command line itself, at run time: a hook calls a
 * function at exit, as many times as V8's default budget takes to mark it for optimisation and too few for the
 * raised one, with V8's tracing of that turned on, and the trace says whether it was marked.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './daemon-process.js';

const YOUNG = '--max-semi-space-size=2';
const HOOK =
  'data:text/javascript,' +
  encodeURIComponent(
    "process.on('exit', () => process.stderr.write(`\\nnode ${JSON.stringify([process.argv[1], process.execArgv])}\\n`));",
  );

/** The node flags of the bot's process (npm's own node reports too). */
function botFlags(command: string, args: string[]): string[] {
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: `--import=${HOOK}` },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stdout).toMatch(/^spot-bot /m);
  const reports = [...result.stderr.matchAll(/^node (.*)$/gm)].map((m) => JSON.parse(m[1]!) as [string, string[]]);
  const bot = reports.filter(([script]) => script === join(ROOT, 'bin/bot.js'));
  expect(bot.length, result.stderr).toBe(1);
  return bot[0]![1];
}

describe('the young generation cap', () => {
  it('is on the node that bin/bot.js, run as an executable, starts', () => {
    expect(botFlags(join(ROOT, 'bin/bot.js'), ['--version'])).toContain(YOUNG);
  });

  it('is on the node of npm run bot, and in npm start’s script', () => {
    expect(botFlags('npm', ['run', '-s', 'bot', '--', '--version'])).toContain(YOUNG);
    const scripts = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    expect(scripts.start).toBe(`exec node ${YOUNG} bin/bot.js run`);
  });

  it('is not there when node runs bin/bot.js without it (what the bench compares against)', () => {
    expect(botFlags(process.execPath, [join(ROOT, 'bin/bot.js'), '--version'])).not.toContain(YOUNG);
  });
});

/** Whether V8 marked the hook's probe function for optimisation in a node started as `command args`. */
function probeOptimised(command: string, args: string[]): boolean {
  const probe = [
    "import { setFlagsFromString } from 'node:v8';",
    "process.on('exit', () => { setFlagsFromString('--trace-opt');",
    'function tierProbe(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; }',
    // About 60 calls mark it at Node 20's default budget, about 400 at the raised one.
    'let t = 0; for (let c = 0; c < 150; c++) t += tierProbe(50); process.stderr.write(`probe ${t}\\n`); });',
  ].join(' ');
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}` },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stderr).toMatch(/^probe 44100$/m);
  return /tierProbe/.test(result.stdout);
}

describe('the tier-up budget', () => {
  it('marks a function that ran a little in a plain node (the probe works)', () => {
    expect(probeOptimised(process.execPath, ['-e', '0'])).toBe(true);
  });

  it('is raised by the command line, however node started it', () => {
    expect(probeOptimised(join(ROOT, 'bin/bot.js'), ['--version'])).toBe(false);
    expect(probeOptimised(process.execPath, [join(ROOT, 'bin/bot.js'), '--version'])).toBe(false);
  });
});
