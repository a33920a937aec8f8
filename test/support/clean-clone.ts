/**
 * A clean clone of the working tree: the tracked files (and new ones not ignored), what a clone of it, committed,
 * holds, beside the repository's node_modules (a link, as `npm ci` would install them). No dist/, no data/cache/.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function cleanClone(root: string, into: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && existsSync(join(root, f)));
  for (const file of files) {
    mkdirSync(dirname(join(into, file)), { recursive: true });
    copyFileSync(join(root, file), join(into, file));
  }
  symlinkSync(join(root, 'node_modules'), join(into, 'node_modules'), 'dir');
}
