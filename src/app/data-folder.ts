/**
 * The folder the database lives in, checked before anything is opened: a host folder mounted on the image's
 * /app/data that the container's user cannot write is the usual cause, and SQLite would only say "unable to
 * open database file". The problem is one line saying what to do.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

function ids(): { uid: number; gid: number } | undefined {
  return typeof process.getuid === 'function' && typeof process.getgid === 'function'
    ? { uid: process.getuid(), gid: process.getgid() }
    : undefined;
}

/** Creates the folder of `file` if need be and checks that this process may write in it; ConfigError if not. */
export function ensureWritableFolder(file: string, variable: string): void {
  const folder = dirname(resolve(file));
  try {
    mkdirSync(folder, { recursive: true });
    accessSync(folder, constants.W_OK | constants.X_OK);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const me = ids();
    let owner = '';
    try {
      const st = statSync(folder);
      owner = `, owned by ${st.uid}:${st.gid} (mode ${(st.mode & 0o777).toString(8)})`;
    } catch {
      // The folder could not be created either: its parent is what is read-only.
    }
    const who = me === undefined ? 'this process' : `uid ${me.uid}`;
    const fix =
      me === undefined
        ? 'make it writable'
        : `make it writable for ${me.uid}:${me.gid} (e.g. \`chown ${me.uid}:${me.gid}\` on the host folder mounted there) or run as its owner (\`--user UID:GID\`)`;
    throw new ConfigError([`${variable}: ${who} cannot write in ${folder} (${code}${owner}); ${fix}`]);
  }
}
