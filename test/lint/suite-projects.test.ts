/**
 * The in-process project stays the one a developer runs after every change: a test file outside test/e2e and
 * test/chaos that starts a process (the daemon or `npm start` through test/e2e/daemon-process.ts, node:child_process, Redis,
 * Prometheus, a clean clone) must be listed in vitest.config.ts's PROCESS_FILES or WHOLE_RUNS, and every listed
 * file must exist (LONG_FILES, the ones started first, too). The support folder's own tests of its process helpers spawn a trivial `node -e` and stay.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONG_FILES, PROCESS_FILES, WHOLE_RUNS } from '../../vitest.config.js';

const ROOT = join(import.meta.dirname, '..', '..');
const STARTS_A_PROCESS = [
  /\bnew DaemonProcess\(|\bnpmStart\(/,
  /from 'node:child_process'/,
  /from '[./]*\/support\/(redis|prometheus|clean-clone)\.js'/,
];

/** Whether a test file's text starts a process, by what it imports. */
function startsAProcess(text: string): boolean {
  return STARTS_A_PROCESS.some((r) => r.test(text));
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('the suite projects (vitest.config.ts)', () => {
  const all = testFiles(join(ROOT, 'test'));
  const listed = new Set([...PROCESS_FILES, ...WHOLE_RUNS]);

  it('tells a file that starts a process from one that does not', () => {
    expect(startsAProcess(`const daemon = new DaemonProcess(env);`)).toBe(true);
    expect(startsAProcess(`import { ROOT } from '../e2e/daemon-process.js';`)).toBe(false);
    expect(startsAProcess(`import { spawn } from 'node:child_process';`)).toBe(true);
    expect(startsAProcess(`import { startRedis } from '../support/redis.js';`)).toBe(true);
    expect(startsAProcess(`import { parseExposition } from '../support/prometheus-text.js';`)).toBe(false);
    expect(startsAProcess(`import { tempDir } from '../support/temp-dir.js';`)).toBe(false);
  });

  it('lists every file outside e2e and chaos that starts a process', () => {
    const unlisted = all.filter(
      (f) =>
        !/^test\/(e2e|chaos|support)\//.test(f) &&
        f !== relative(ROOT, import.meta.filename) &&
        !listed.has(f) &&
        startsAProcess(readFileSync(join(ROOT, f), 'utf8')),
    );
    expect(unlisted, 'add these to PROCESS_FILES in vitest.config.ts').toEqual([]);
  });

  it('lists only files that exist', () => {
    expect([...listed].filter((f) => !all.includes(f))).toEqual([]);
    expect(
      LONG_FILES.filter((f) => !all.includes(f)),
      'LONG_FILES, which start first',
    ).toEqual([]);
  });
});
