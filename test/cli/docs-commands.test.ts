/**
 * Every command in the README's and docs/'s shell blocks, checked against what the project has, so a documented
 * step cannot fail on a name: each `bot` command (however it is reached: `npm run -s bot --`, `npx bot`,
 * `docker exec … bot`, `npm start --`) exists, and each of its flags is one the command's spec takes (the specs
 * `--help` and the parser read); each `npm run SCRIPT` is a script of package.json; each path into the checkout
 * (config/, data/samples/, strategies/, docs/, bench/, bin/; not the reader's own my-… files) exists; each relative link and its #anchor resolves.
 * The offline commands are run as written: every documented `bot check-config` passes.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandSpec } from '../../src/cli/flags.js';
import { commandSpecs } from '../../src/cli/reference.js';
import { daemonEnv, ROOT } from '../e2e/daemon-process.js';

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : [])),
];
const text = (page: string) => readFileSync(join(ROOT, page), 'utf8');

interface Line {
  page: string;
  line: string;
}

/** The commands of every shell block: continuation lines joined, comments dropped, `&&`, `;` and `|` split. */
function shellCommands(): Line[] {
  const out: Line[] = [];
  for (const page of PAGES) {
    for (const block of text(page).matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```/gm)) {
      const joined = block[1]!.replace(/\\\n\s*/g, ' ');
      for (const raw of joined.split('\n')) {
        const line = raw.replace(/(^|\s)#.*$/, '').trim();
        for (const part of line.split(/\s*(?:&&|\|\||;|\|)\s*/)) if (part !== '') out.push({ page, line: part });
      }
    }
  }
  return out;
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

  it('run every documented bot check-config as written, and it passes', () => {
    const checks = commands.flatMap(({ line }) => {
      const args = botArguments(words(line));
      // Not those of the reader's own files (my-…), made by the steps before.
      return args?.[0] === 'check-config' && !args.some((a) => /\bmy-/.test(a)) ? [args] : [];
    });
    expect(checks.length).toBeGreaterThan(0);
    for (const args of checks) {
      const run = spawnSync(process.execPath, [join(ROOT, 'bin/bot.js'), ...args], {
        cwd: ROOT,
        env: daemonEnv({}),
        encoding: 'utf8',
      });
      expect(run.status, `bot ${args.join(' ')}: ${run.stdout}${run.stderr}`).toBe(0);
    }
  });
});
