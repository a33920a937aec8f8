/**
 * V8's flags on the bot's processes. bin/bot.js starts node with V8's young generation capped (README, peak RSS): V8 reads the limit only when it
 * sets up the heap, so the flag is on the command line that starts node, as a user starts the bot: the
 * executable itself (its shebang, `env -S`), `npm run bot` and `npm start`'s script. Each node started reports
 * its script and flags (a hook loaded through NODE_OPTIONS prints process.argv[1] and process.execArgv on exit).
 * The tier-up threshold (src/ops/v8-tiering.ts) is raised by the command line itself, at run time, for the commands
 * that replay and no other: a hook calls probe functions at exit, more and more times, with V8's tracing of its
 * decisions on, and the trace says how many calls it took to mark one for optimisation.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tierUpFlag } from '../../src/ops/v8-tiering.js';
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

/**
 * How many calls it took V8 to mark a function for TurboFan in a node started as `command args`: a hook makes one
 * new probe function for each count in PROBE_CALLS at exit, calls it that many times with V8's tracing of its
 * decisions on, and the trace names the probes it marked. Infinity when none was.
 */
const PROBE_CALLS = [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600];
function callsToOptimise(command: string, args: string[]): { calls: number; stderr: string } {
  const probe = [
    "import { setFlagsFromString } from 'node:v8';",
    "process.on('exit', () => { setFlagsFromString('--trace-opt');",
    `for (const k of ${JSON.stringify(PROBE_CALLS)}) {`,
    'const f = new Function(`return function tierProbe${k}(n) { let s = 0; for (let i = 0; i < n; i++) s += (i * 7) % 13; return s; }`)();',
    'let t = 0; for (let c = 0; c < k; c++) t += f(50); }',
    "process.stderr.write('probed\\n'); });",
  ].join(' ');
  const result = spawnSync(command, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(probe)}` },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  expect(result.stderr).toMatch(/^probed$/m);
  const marked = [...result.stdout.matchAll(/marking .*tierProbe(\d+) .*TURBOFAN/g)].map((m) => Number(m[1]));
  return { calls: Math.min(...marked), stderr: result.stderr.replace(/^probed\n/m, '') };
}

describe('the tier-up threshold', () => {
  const plain = callsToOptimise(process.execPath, ['-e', '0']);

  it('is known for the V8s measured, and none is guessed for another (V8 prints an error for an unknown flag)', () => {
    expect(tierUpFlag('11.3.244.8-node.30')).toBe('--interrupt-budget=600000');
    expect(tierUpFlag('12.4.254.21-node.57')).toBe('--invocation-count-for-turbofan=27000');
    expect(tierUpFlag('13.6.233.17-node.63')).toBeUndefined();
    expect(Number.isFinite(plain.calls), 'the probe is marked in a plain node').toBe(true);
  });

  it('is raised for a command that replays, however node started it, without a word on stderr', () => {
    for (const [command, args] of [
      [join(ROOT, 'bin/bot.js'), ['backtest', '--help']],
      [process.execPath, [join(ROOT, 'bin/bot.js'), 'hyperopt', '--help']],
    ] as const) {
      const bot = callsToOptimise(command, [...args]);
      expect(bot.stderr).toBe('');
      // A V8 with no flag set tiers as it will (Node 24's own heuristics move the probe's count either way).
      if (tierUpFlag() !== undefined) expect(bot.calls).toBeGreaterThanOrEqual(4 * plain.calls);
    }
  });

  it("is left at V8's default for the daemon and the commands that do not replay", () => {
    for (const args of [['run', '--help'], ['status', '--help'], ['--version']]) {
      const bot = callsToOptimise(join(ROOT, 'bin/bot.js'), args);
      expect(bot.stderr).toBe('');
      expect(bot.calls, args.join(' ')).toBeLessThan(4 * plain.calls);
    }
  });
});
