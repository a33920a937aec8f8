import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { envShape, parseEnv, SECRET_VARIABLES } from '../../src/config/env.js';
import { ConfigError } from '../../src/errors.js';
import { ROOT } from '../e2e/daemon-process.js';

const dir = mkdtempSync(join(tmpdir(), 'secret-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'hunter2-very-secret-value';

function problems(source: Record<string, string>): string[] {
  try {
    parseEnv(source);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return [...(err as ConfigError).problems];
  }
  throw new Error('expected a ConfigError');
}

describe('secrets from files (NAME_FILE)', () => {
  it('reads every secret variable from its _FILE, without the trailing newline', () => {
    expect(SECRET_VARIABLES).toEqual(expect.arrayContaining(['EXCHANGE_API_KEY', 'EXCHANGE_API_SECRET']));
    const source: Record<string, string> = {};
    for (const name of SECRET_VARIABLES) {
      const file = join(dir, name);
      writeFileSync(file, `${name}-${SECRET}\n`);
      source[`${name}_FILE`] = file;
    }
    const env = parseEnv(source) as Record<string, unknown>;
    for (const name of SECRET_VARIABLES) expect(env[name]).toBe(`${name}-${SECRET}`);
  });

  it('names the variable and the file on each problem, never the content', () => {
    const full = join(dir, 'full');
    writeFileSync(full, SECRET);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    const found = problems({
      EXCHANGE_API_KEY_FILE: join(dir, 'missing'),
      EXCHANGE_API_SECRET_FILE: empty,
    });
    expect(found).toEqual([
      `EXCHANGE_API_KEY_FILE: cannot read ${join(dir, 'missing')} (ENOENT)`,
      `EXCHANGE_API_SECRET_FILE: ${empty} is empty`,
    ]);
    const both = problems({ EXCHANGE_API_SECRET: 'inline', EXCHANGE_API_SECRET_FILE: full, EXCHANGE_API_KEY: 'k' });
    expect(both).toEqual([
      'EXCHANGE_API_SECRET_FILE: set either EXCHANGE_API_SECRET or EXCHANGE_API_SECRET_FILE, not both',
    ]);
    // A secret read from a file stays out of the messages of other problems too.
    const other = problems({ EXCHANGE_API_SECRET_FILE: full, MODE: 'live' });
    expect(other.join('\n')).not.toContain(SECRET);
    expect(other).toContain('EXCHANGE_API_KEY: required when EXCHANGE_API_SECRET is set');
  });

  it.runIf(process.getuid?.() !== 0)('says when the file cannot be read for its permissions', () => {
    const locked = join(dir, 'locked');
    writeFileSync(locked, SECRET);
    chmodSync(locked, 0o000);
    expect(problems({ EXCHANGE_API_KEY: 'k', EXCHANGE_API_SECRET_FILE: locked })).toEqual([
      `EXCHANGE_API_SECRET_FILE: cannot read ${locked} (EACCES)`,
    ]);
  });
});

describe('.env.example', () => {
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  const listed = new Set([...example.matchAll(/^(?:# )?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));

  it('lists every variable, and NAME_FILE for every secret', () => {
    for (const name of Object.keys(envShape)) expect(listed, name).toContain(name);
    for (const name of SECRET_VARIABLES) expect(listed, `${name}_FILE`).toContain(`${name}_FILE`);
  });

  it('holds no secret value and parses as it is', () => {
    for (const name of SECRET_VARIABLES) expect(example).toMatch(new RegExp(`^# ${name}=$`, 'm'));
    const values = Object.fromEntries(
      [...example.matchAll(/^# ([A-Z][A-Z0-9_]*)=(.*)$/gm)]
        .filter((m) => !m[1]!.endsWith('_FILE'))
        .map((m) => [m[1], m[2]]),
    ) as Record<string, string>;
    expect(() => parseEnv(values)).not.toThrow();
  });
});

describe('README', () => {
  it('documents every variable', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const name of Object.keys(envShape)) expect(readme, name).toContain(`\`${name}\``);
  });
});
