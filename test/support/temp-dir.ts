/** Temp folders for tests: under the OS temp dir, removed when the test (or the file) that made one ends. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { whenDone } from './scoped.js';

/** A new empty folder named `prefix-XXXXXX` under the OS temp dir, removed when its test or file ends. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  whenDone(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }));
  return dir;
}
