/**
 * A throw-away project directory for config and strategy-loader tests: config files and strategy modules
 * written by the test. Its node_modules links to the repository's, so a temp strategy's `import 'zod'`
 * resolves to the very zod the loader checks schemas against.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../support/temp-dir.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');

export interface TempProject {
  root: string;
  strategiesDir: string;
  configDir: string;
  /** Write strategies/<file> (file name with extension) and return its path. */
  strategy(file: string, source: string): string;
  /** Write config/<file>: an object is written as JSON, a string as is. Returns the path. */
  config(file: string, content: string | object): string;
  remove(): void;
}

export function tempProject(): TempProject {
  const root = tempDir('spot-bot-config');
  symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'), 'dir');
  const strategiesDir = join(root, 'strategies');
  const configDir = join(root, 'config');
  mkdirSync(strategiesDir);
  mkdirSync(configDir);
  const write = (dir: string, file: string, text: string) => {
    const path = join(dir, file);
    writeFileSync(path, text);
    return path;
  };
  return {
    root,
    strategiesDir,
    configDir,
    strategy: (file, source) => write(strategiesDir, file, source),
    config: (file, content) =>
      write(configDir, file, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** A minimal valid strategy module: params { spacingPct (default 1), levels (default 3) }. */
export const GOOD_STRATEGY = `
import { z } from 'zod';
export default {
  name: 'good',
  params: z.object({ spacingPct: z.number().positive().default(1), levels: z.number().int().min(1).default(3) }),
  orderTypes: ['LIMIT'],
  onTick() {},
};
`;
