/**
 * `npm start` and `bot backtest` run the compiled build (bin/build.js makes dist/ on the first start of a clean
 * clone, with no build step) and still load a strategy written in TypeScript from a folder outside the checkout,
 * in the daemon and in a sweep's worker threads: the strategy module reports which `spot-bot/strategy` and which
 * zod it was handed (the build's, one instance of each in a process). The build is never run stale: an edited source (even one whose
 * size and mtime are put back), a deleted strategy and a strategy that does not compile each show at the next
 * start; where the build cannot be written, the sources run through tsx and one line says so.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { cleanClone } from '../support/clean-clone.js';
import { daemonEnv, lockstepPaperEnv, npmStart, ROOT, waitFor } from './daemon-process.js';
import { whenExited } from '../support/until.js';
import { tempDir } from '../support/temp-dir.js';

const work = tempDir('e2e-compiled');

const clone = join(work, 'spot-bot');
const mine = join(work, 'my-strategies');
const probes = join(work, 'probes');
const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
const DAY = ['--from', '2023-03-08', '--to', '2023-03-09'];

/** A strategy of one's own, outside the checkout, that tells which strategy API it got, from which thread. */
const PROBE_STRATEGY = `import { writeFileSync } from 'node:fs';
import { threadId } from 'node:worker_threads';
import { defineStrategy, z, type StrategyContext } from 'spot-bot/strategy';

const api: string = import.meta.resolve('spot-bot/strategy');
const zod: string = import.meta.resolve('zod');
writeFileSync(\`\${process.env.PROBE_DIR}/\${process.pid}-\${threadId}.json\`, JSON.stringify({ api, zod, threadId }));

const params = z.object({ below: z.number().positive() });

export default defineStrategy<typeof params>({
  name: 'probe',
  params,
  orderTypes: ['LIMIT'],
  onTick(ctx: StrategyContext<z.infer<typeof params>>) {
    const p = ctx.price;
    if (p === undefined || ctx.openOrders.length > 0) return;
    ctx.limit('BUY', p.mul(1 - ctx.params.below / 100), '0.001', { tag: 'probe' });
  },
});
`;

const probeFile = (below = 50) =>
  JSON.stringify({
    name: 'probe-btcusdt',
    strategy: 'probe',
    symbol: 'BTCUSDT',
    schedule: '* * * * * *',
    params: { below },
  });

interface Probe {
  api: string;
  zod: string;
  threadId: number;
}

function readProbes(): Probe[] {
  return readdirSync(probes).map((f) => JSON.parse(readFileSync(join(probes, f), 'utf8')) as Probe);
}

const BUILT_API = () => pathToFileURL(join(clone, 'dist/src/strategy/api.js')).href;
/** The zod of the build (bin/build.js's PREBUILT_PACKAGES), the one its modules import. */
const BUILT_ZOD = () => pathToFileURL(join(clone, 'dist/node_modules/zod/index.js')).href;

function bot(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [join(clone, 'bin/bot.js'), ...args], {
    cwd: mine,
    env: daemonEnv({ PROBE_DIR: probes, ...env }),
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `bot ARGS` from the clone, every module any thread of it loads recorded: ES modules by a loader hook (worker
 * threads inherit --import), CommonJS ones by the module loader's own `_load` (a package required lazily).
 */
function traced(args: string[], env: Record<string, string> = {}) {
  const loads = join(mkdtempSync(join(work, 'trace-')), 'loads.txt');
  const hooks = join(work, 'trace-hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.TRACE_LOADS, url + '\\n'); return next(url, context); }
`,
  );
  const trace = join(work, 'trace.mjs');
  writeFileSync(
    trace,
    `import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const load = Module._load;
Module._load = function (request, parent, isMain) {
  appendFileSync(process.env.TRACE_LOADS, Module._resolveFilename(request, parent, isMain) + '\\n');
  return load.apply(this, arguments);
};
`,
  );
  const run = spawnSync(process.execPath, ['--import', trace, join(clone, 'bin/bot.js'), ...args], {
    cwd: clone,
    env: daemonEnv({ TRACE_LOADS: loads, ...env }),
    encoding: 'utf8',
  });
  return { run, loaded: existsSync(loads) ? readFileSync(loads, 'utf8').trim().split('\n') : [] };
}

beforeAll(() => {
  cleanClone(ROOT, clone);
  mkdirSync(join(mine, 'config'), { recursive: true });
  writeFileSync(join(mine, 'probe.ts'), PROBE_STRATEGY);
  writeFileSync(join(mine, 'config', 'probe-btcusdt.json'), probeFile());
  mkdirSync(probes);
});

describe('the compiled build', () => {
  it('npm start in a clean clone makes the build, runs it, and loads a .ts strategy from outside', async () => {
    expect(existsSync(join(clone, 'dist'))).toBe(false);
    const env = await lockstepPaperEnv(
      mkdtempSync(join(work, 'paper-')),
      { 'probe.json': probeFile() },
      { count: 400 },
      { STRATEGIES_DIR: mine, PROBE_DIR: probes },
    );
    const { npm, lines } = npmStart(env, clone);
    const exitCode = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
    await waitFor('the probe strategy to place its order', () => lines.some((l) => l.includes('"order placed"')), {
      giveUp: whenExited(npm, 'npm start'),
    });
    npm.kill('SIGTERM');
    expect(await exitCode).toBe(0);
    expect(readProbes()).toEqual([{ api: BUILT_API(), zod: BUILT_ZOD(), threadId: 0 }]);
    expect(existsSync(join(clone, 'dist/src/cli.js'))).toBe(true);
    expect(existsSync(join(clone, 'dist/strategies/grid.js'))).toBe(true);
    expect(existsSync(join(clone, 'dist/src/api/dashboard/index.html'))).toBe(true);
  }, 120_000);

  it('bot backtest and its sweep workers run the build and load the .ts strategy in every thread', () => {
    rmSync(probes, { recursive: true });
    mkdirSync(probes);
    const out = join(work, 'sweep');
    const run = bot([
      'backtest',
      '--strategies',
      '.',
      '--config',
      'config/probe-btcusdt.json',
      '--data',
      SAMPLE,
      ...DAY,
      '--sweep',
      'below=1,2,3,4',
      '--workers',
      '2',
      '--out',
      out,
    ]);
    expect(run.status, run.stderr).toBe(0);
    const seen = readProbes();
    // The main thread (it validates the params) and both workers, each with the build's strategy API.
    expect(seen.filter((p) => p.threadId === 0)).toHaveLength(1);
    expect(new Set(seen.filter((p) => p.threadId !== 0).map((p) => p.threadId)).size).toBe(2);
    expect(new Set(seen.map((p) => p.api))).toEqual(new Set([BUILT_API()]));
    expect(new Set(seen.map((p) => p.zod))).toEqual(new Set([BUILT_ZOD()]));
    const summary = readFileSync(join(out, 'sweep.csv'), 'utf8');
    expect(summary.split('\n').filter((l) => /^\d/.test(l))).toHaveLength(4);
  }, 120_000);

  it('runs from the bundle: of dist/src a process loads only what re-exports it, in every thread', () => {
    const out = join(work, 'traced');
    const { run, loaded } = traced(
      ['backtest', '--config', join(clone, 'config/grid-btcusdt.json')].concat([
        '--data',
        SAMPLE,
        ...DAY,
        '--sweep',
        'spacingPct=0.2,0.3',
        '--workers',
        '2',
        '--out',
        out,
      ]),
    );
    expect(run.status, run.stderr).toBe(0);
    const dist = pathToFileURL(join(clone, 'dist')).href;
    const fromSrc = [...new Set(loaded.filter((u) => u.startsWith(`${dist}/src/`)))];
    // cli.js, the strategy API (the grid imports it) and the sweep's worker module: each only re-exports.
    expect(fromSrc.map((u) => u.slice(dist.length + 1)).sort()).toEqual(
      ['src/backtest/sweep-worker.js', 'src/cli.js', 'src/strategy/api.js'].sort(),
    );
    for (const url of fromSrc) expect(readFileSync(new URL(url), 'utf8')).toMatch(/^export \* from "[./]*\/bundle\//m);
    expect(loaded.filter((u) => u.startsWith(`${dist}/bundle/`)).length).toBeGreaterThan(3);
    expect(loaded).toContain(`${dist}/strategies/grid.js`);
    // trading-signals is part of the bundle (the indicators' 176 files); zod, which the grid imports itself, is
    // one instance in every thread: the build's prebuilt package, a handful of files instead of zod's 95.
    expect(loaded.filter((u) => u.includes('/node_modules/trading-signals/'))).toEqual([]);
    const zod = [...new Set(loaded.filter((u) => u.includes('/zod/')))];
    expect(zod).toContain(`${dist}/node_modules/zod/index.js`);
    expect(zod.filter((u) => !u.startsWith(`${dist}/node_modules/zod/`))).toEqual([]);
    expect(zod.length).toBeLessThanOrEqual(10);
    // dotenv only where a command reads .env (config/env.ts requires it then): a backtest reads none.
    expect(loaded.filter((u) => u.includes('/node_modules/dotenv/'))).toEqual([]);
  }, 120_000);

  it('loads the logger (pino) for bot status only to report an invalid environment', () => {
    const quiet = traced(['status', '--db', join(work, 'none.db')]);
    expect(quiet.run.status).toBe(1);
    expect(quiet.run.stderr).toContain('status: no database at');
    expect(quiet.loaded.filter((u) => u.includes('/node_modules/pino/'))).toEqual([]);
    expect(quiet.loaded.some((u) => u.includes('/node_modules/dotenv/'))).toBe(true);
    // Not on a terminal: each problem a JSON log line on stderr, as every other.
    const invalid = traced(['status'], { LOG_LEVEL: 'loud' });
    expect(invalid.run.status).toBe(1);
    const lines = invalid.run.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, "LOG_LEVEL: expected one of trace, debug, info, warn, error, fatal, silent, got 'loud'"],
    ]);
    expect(invalid.loaded.some((u) => u.includes('/node_modules/pino/'))).toBe(true);
  }, 60_000);

  it('reads .env where a command does, dotenv found from the build', () => {
    const dir = mkdtempSync(join(work, 'dotenv-'));
    writeFileSync(join(dir, '.env'), 'METRICS_PORT=eighty\n');
    const run = spawnSync(process.execPath, [join(clone, 'bin/bot.js'), 'healthcheck'], {
      cwd: dir,
      env: daemonEnv({}),
      encoding: 'utf8',
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(
      "METRICS_PORT: expected a port number (0 to 65535; 0 turns the listener off), got 'eighty'",
    );
  }, 60_000);

  it("resolves every one of zod's locale files from the build as from node_modules (fr-CA.js is exported as frCA)", () => {
    const files = readdirSync(join(clone, 'node_modules/zod/v4/locales')).filter(
      (f) => f.endsWith('.js') && f !== 'index.js',
    );
    expect(files).toContain('zh-CN.js');
    // The build made (or found up to date) as any start makes it.
    expect(spawnSync(process.execPath, [join(clone, 'bin/bot.js'), '--version'], { cwd: clone }).status).toBe(0);
    const probe = join(clone, 'dist', `locales-probe-${process.pid}.mjs`);
    writeFileSync(
      probe,
      `const bad = [];\nfor (const f of ${JSON.stringify(files)}) { try { const m = await import('zod/v4/locales/' + f); if (typeof m.default !== 'function') bad.push(f); } catch { bad.push(f); } }\nconsole.log(JSON.stringify(bad));\n`,
    );
    const run = spawnSync(process.execPath, [probe], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  }, 60_000);

  it("checks every strategy's params against the engine's zod: a shipped one, and .ts ones importing zod themselves", () => {
    // A strategy's schema meets the engine's zod (src/config: a plain z.object made strict, the schema walked for
    // a misspelt key's suggestion, the issues worded): the messages read as they did with node_modules' zod.
    const grid = JSON.parse(readFileSync(join(clone, 'config/grid-btcusdt.json'), 'utf8')) as {
      params: Record<string, unknown>;
    };
    const badGrid = join(work, 'bad-grid.json');
    writeFileSync(badGrid, JSON.stringify({ ...grid, params: { ...grid.params, spacingPct: 'wide', levelz: 3 } }));
    writeFileSync(
      join(mine, 'plain.ts'),
      `import { z } from 'zod';
import { defineStrategy } from 'spot-bot/strategy';
const params = z.object({ below: z.number().positive(), side: z.enum(['BUY', 'SELL']) });
export default defineStrategy<typeof params>({ name: 'plain', params, onTick() {} });
`,
    );
    const plain = join(work, 'bad-plain.json');
    const probe = join(work, 'bad-probe.json');
    writeFileSync(
      plain,
      probeFile()
        .replace('"probe"', '"plain"')
        .replace('probe-btcusdt', 'plain-btcusdt')
        .replace('{"below":50}', '{"below":"x","side":"HOLD","extra":1}'),
    );
    writeFileSync(probe, probeFile().replace('{"below":50}', '{"below":-1,"belwo":2}'));
    const shipped = bot(['check-config', badGrid]);
    expect(shipped.status).toBe(1);
    expect(shipped.stdout + shipped.stderr).toBe(
      [
        `${badGrid}: params.spacingPct: expected a positive decimal, found "wide"`,
        `${badGrid}: params.levelz: unknown key (did you mean levels?)`,
        '',
      ].join('\n'),
    );
    const own = bot(['check-config', '--strategies', '.', plain, probe]);
    expect(own.status).toBe(1);
    expect(own.stdout + own.stderr).toBe(
      [
        `${plain}: params.below: expected a number, found "x"`,
        `${plain}: params.side: expected one of "BUY", "SELL", found "HOLD"`,
        `${plain}: params.extra: unknown key (allowed: below, side)`,
        `${probe}: params.below: expected a number > 0, found -1`,
        `${probe}: params.belwo: unknown key (did you mean below?)`,
        '',
      ].join('\n'),
    );
  }, 60_000);

  it('starts every worker thread from the bundle', () => {
    // A worker's module found beside its caller (workerEntry) is one of the bundle's entries: a thread started
    // from a file-by-file module would hold a second instance of the engine's modules beside the API's.
    const names = readdirSync(join(clone, 'src'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => [
        ...readFileSync(join(clone, 'src', f), 'utf8').matchAll(/workerEntry\(import\.meta\.url, '([\w-]+)'\)/g),
      ])
      .map((m) => m[1]!);
    expect(names.length).toBeGreaterThan(0);
    const built = readdirSync(join(clone, 'dist/src'), { recursive: true, encoding: 'utf8' });
    for (const name of names) {
      const file = built.filter((f) => f.endsWith(`/${name}.js`));
      expect(file, name).toHaveLength(1);
      expect(readFileSync(join(clone, 'dist/src', file[0]!), 'utf8')).toContain(`bundle/${name}.js`);
    }
  });

  it('names a shipped strategy by its source (path and sha256), as a run from the sources does', () => {
    const out = join(work, 'grid');
    const run = bot([
      'backtest',
      '--config',
      join(clone, 'config/grid-btcusdt.json'),
      '--data',
      SAMPLE,
      ...DAY,
      '--out',
      out,
    ]);
    expect(run.status, run.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      inputs: { configs: { module: { file: string; sha256: string } }[] };
    };
    const source = join(clone, 'strategies/grid.ts');
    expect(summary.inputs.configs[0]!.module).toEqual({
      file: source,
      sha256: createHash('sha256').update(readFileSync(source)).digest('hex'),
    });
  }, 120_000);

  it("names a compiled strategy's hook error by its TypeScript source and line, in a run and a sweep's worker", () => {
    // In the project's strategies/ (so it runs from dist/strategies/crash.js), throwing on line 9, column 11.
    const source = join(clone, 'strategies/crash.ts');
    writeFileSync(
      source,
      `import { defineStrategy, z } from '../src/strategy/api.js';

const params = z.object({ after: z.number().int() });
type Params = z.infer<typeof params>;

export default defineStrategy<typeof params, { n?: number }>({
  name: 'crash',
  params,
  onTick(ctx) { ctx.state.n = (ctx.state.n ?? 0) + 1; if (ctx.state.n > (ctx.params as Params).after)
    throw new Error('crashed on purpose'); },
});
`,
    );
    const config = join(work, 'crash.json');
    writeFileSync(config, probeFile().replace('"probe"', '"crash"').replace('"below":50', '"after":3'));
    const out = join(work, 'crash');
    const run = bot(['backtest', '--config', config, '--data', SAMPLE, ...DAY, '--out', out]);
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain('FAILED');
    // The build's map gives the mappings and the source's name, not its text (which every run would hold).
    const built = readFileSync(join(clone, 'dist/strategies/crash.js'), 'utf8');
    const map = JSON.parse(
      Buffer.from(/sourceMappingURL=data:application\/json;base64,(\S+)/.exec(built)![1]!, 'base64').toString(),
    ) as { sources: string[]; sourcesContent?: unknown };
    expect(map.sources).toEqual(['../../strategies/crash.ts']);
    expect(map.sourcesContent).toBeUndefined();
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { errors: { at: string | null }[] };
    expect(summary.errors[0]!.at).toBe(`${source}:10:11`);
    expect(run.stderr).toContain(`(at ${source}:10:11)`);
    const sweep = bot(['backtest', '--config', config, '--data', SAMPLE, ...DAY, '--sweep', 'after=3,4']);
    expect(sweep.status).toBe(1);
    expect(sweep.stderr).toContain(`(at ${source}:10:11)`);
    rmSync(source);
  }, 120_000);

  it('is never run stale: an edit, one with its size and mtime put back, a deleted and a broken strategy', () => {
    const cli = join(clone, 'src/cli/commands.ts');
    const original = readFileSync(cli, 'utf8');
    const help = (): string => bot(['--help']).stdout;
    expect(help()).toContain('run the daemon (paper unless MODE=live)');

    // Both edits leave the same size and mtime (a whole second, exact): only the ctime tells them apart.
    const T = new Date('2024-01-01T00:00:00Z');
    writeFileSync(cli, original.replace('run the daemon (paper unless MODE=live)', 'run the daemon (edited once)'));
    utimesSync(cli, T, T);
    expect(help()).toContain('run the daemon (edited once)');
    const before = statSync(cli);
    writeFileSync(cli, original.replace('run the daemon (paper unless MODE=live)', 'run the daemon (edited anew)'));
    utimesSync(cli, T, T);
    const after = statSync(cli);
    expect([after.size, after.mtimeMs]).toEqual([before.size, before.mtimeMs]);
    expect(help()).toContain('run the daemon (edited anew)');

    const dca = join(clone, 'config/dca-btcusdt.json');
    expect(bot(['check-config', dca]).status).toBe(0);
    rmSync(join(clone, 'strategies/dca.ts'));
    const gone = bot(['check-config', dca]);
    expect(gone.status).toBe(1);
    expect(gone.stdout + gone.stderr).toContain('expected a strategy module dca.js or dca.ts, found none');
    expect(existsSync(join(clone, 'dist/strategies/dca.js'))).toBe(false);

    writeFileSync(join(clone, 'strategies/broken.ts'), 'export default {\n  name: "broken",,\n};\n');
    writeFileSync(join(work, 'broken.json'), probeFile().replace('"probe"', '"broken"'));
    const broken = bot(['check-config', join(work, 'broken.json')]);
    expect(broken.status).toBe(1);
    expect(broken.stdout + broken.stderr).toMatch(/cannot be loaded: strategies\/broken\.ts:2:\d+: /);
    // The other commands still run.
    expect(bot(['--version']).stdout).toMatch(/^spot-bot \d+\.\d+\.\d+/);
  }, 120_000);

  it('makes the bundle and the prebuilt zod again when a package they are made of is upgraded', () => {
    // The clone's node_modules as links to the repository's, but for copies of trading-signals (bundled in) and
    // zod (made again as dist/node_modules/zod): copies of what they hold, also where the repository's entries are
    // links themselves (a linked or pnpm-style node_modules), so the upgrade below never writes into a shared one.
    const modules = join(clone, 'node_modules');
    const shared = readlinkSync(modules);
    rmSync(modules);
    mkdirSync(modules);
    for (const name of readdirSync(shared)) {
      if (name === 'trading-signals' || name === 'zod')
        cpSync(join(shared, name), join(modules, name), { recursive: true, dereference: true });
      else symlinkSync(join(shared, name), join(modules, name));
    }
    const stamp = (name: string) =>
      (JSON.parse(readFileSync(join(clone, 'dist/sources.json'), 'utf8')) as { files: Record<string, string> }).files[
        `package:${name}`
      ];
    const prebuilt = () =>
      (JSON.parse(readFileSync(join(clone, 'dist/node_modules/zod/package.json'), 'utf8')) as { version: string })
        .version;
    expect(bot(['--version']).status).toBe(0);
    for (const name of ['trading-signals', 'zod']) {
      const manifest = join(modules, name, 'package.json');
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
      expect(stamp(name)?.split(':')[0]).toBe(pkg.version);
      if (name === 'zod') {
        expect(prebuilt()).toBe(pkg.version);
        appendFileSync(join(modules, 'zod/index.js'), '\nexport const upgraded = true;\n');
      }
      writeFileSync(manifest, JSON.stringify({ ...pkg, version: '99.0.0' }));
    }
    expect(bot(['--version']).status).toBe(0);
    expect(stamp('trading-signals')?.split(':')[0]).toBe('99.0.0');
    expect(stamp('zod')?.split(':')[0]).toBe('99.0.0');
    expect(prebuilt()).toBe('99.0.0');
    // The new version's code is what the prebuilt package holds.
    expect(readFileSync(join(clone, 'dist/node_modules/zod/index.js'), 'utf8')).toContain('upgraded = true');
    rmSync(modules, { recursive: true });
    symlinkSync(shared, modules, 'dir');
  }, 120_000);

  it('runs file by file where src/ does not bundle: only the broken module fails, naming its file and line', () => {
    const source = join(clone, 'src/cli/status.ts');
    const original = readFileSync(source, 'utf8');
    writeFileSync(source, `${original}\nexport const broken = ;\n`);
    const line = original.split('\n').length + 1;
    expect(bot(['--version']).stdout).toMatch(/^spot-bot \d+\.\d+\.\d+/);
    expect(readFileSync(join(clone, 'dist/src/cli.js'), 'utf8')).not.toContain('bundle/');
    const status = bot(['status']);
    expect(status.status).toBe(1);
    expect(status.stderr).toContain(`src/cli/status.ts:${line}:`);
    writeFileSync(source, original);
    expect(bot(['--version']).status).toBe(0);
    expect(readFileSync(join(clone, 'dist/src/cli.js'), 'utf8')).toContain('bundle/cli.js');
  }, 60_000);

  it('runs the sources through tsx, saying so, where the build cannot be written', () => {
    rmSync(join(clone, 'dist'), { recursive: true, force: true });
    writeFileSync(join(clone, 'dist'), 'not a folder\n');
    const run = bot(['--help']);
    expect(run.stderr).toMatch(
      /^bot: running the TypeScript sources through tsx \(slower to start\): cannot make the build in /,
    );
    expect(run.stdout).toContain('run the daemon (edited anew)');
    expect(run.status).toBe(0);
  }, 60_000);
});
