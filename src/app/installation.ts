/**
 * Where this installation's files are and what it is: the project root (the folder with package.json, whether
 * the code runs from the sources or from a build), the package version and the git commit it was made from.
 * The commit comes from build-info.json, written by the image build (never a git call at run time), or, in a
 * checkout, from the files in .git; otherwise it is unknown.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

/** The nearest folder above `from` (default: this module) that holds package.json. */
export function projectRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
  return dir;
}

const PackageSchema = z.looseObject({ name: z.string(), version: z.string() });
const BuildInfoSchema = z.looseObject({
  revision: z
    .string()
    .regex(/^[0-9a-f]{7,40}$/)
    .optional(),
});

/** The file the image build writes at the project root (see the Dockerfile). */
export const BUILD_INFO_FILE = 'build-info.json';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The commit HEAD points at, read from .git (a folder, or a worktree's `gitdir:` file); undefined when unknown. */
export function gitCommit(root: string): string | undefined {
  const dotGit = join(root, '.git');
  let gitDir = dotGit;
  try {
    if (statSync(dotGit).isFile()) {
      const target = /^gitdir:\s*(.+)$/m.exec(readText(dotGit) ?? '')?.[1];
      if (target === undefined) return undefined;
      gitDir = isAbsolute(target) ? target : join(root, target);
    }
  } catch {
    return undefined;
  }
  const head = readText(join(gitDir, 'HEAD'));
  if (head === undefined) return undefined;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (ref === undefined) return /^[0-9a-f]{40}$/.test(head) ? head : undefined;
  // A worktree keeps its HEAD apart; branches live in the common folder, loose or packed.
  const common = readText(join(gitDir, 'commondir'));
  const commonDir = common === undefined ? gitDir : isAbsolute(common) ? common : join(gitDir, common);
  for (const dir of [gitDir, commonDir]) {
    const loose = readText(join(dir, ref));
    if (loose !== undefined && /^[0-9a-f]{40}$/.test(loose)) return loose;
  }
  const packed = readText(join(commonDir, 'packed-refs')) ?? '';
  for (const line of packed.split('\n')) {
    const [sha, name] = line.split(' ');
    if (name === ref && sha !== undefined && /^[0-9a-f]{40}$/.test(sha)) return sha;
  }
  return undefined;
}

export interface Installation {
  root: string;
  name: string;
  version: string;
  /** The git commit, when known. */
  revision: string | undefined;
}

/** What `bot --version` reports. */
export function installation(root: string = projectRoot()): Installation {
  const pkg = PackageSchema.parse(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')));
  const infoText = readText(join(root, BUILD_INFO_FILE));
  let revision: string | undefined;
  if (infoText !== undefined) {
    const info = BuildInfoSchema.safeParse(JSON.parse(infoText));
    revision = info.success ? info.data.revision : undefined;
  } else {
    revision = gitCommit(root);
  }
  return { root, name: pkg.name, version: pkg.version, revision };
}

/** `spot-bot 0.1.0 (commit 195378c0a1b2)`, or without the commit when unknown. */
export function versionLine(info: Installation): string {
  return `${info.name} ${info.version}${info.revision === undefined ? '' : ` (commit ${info.revision.slice(0, 12)})`}`;
}
