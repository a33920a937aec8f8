/**
 * The URL a worker thread starts from, for a module beside the caller's. From the build it is the compiled
 * `.js` itself. Under tsx (the caller is `.ts`) the worker must register tsx before importing the `.ts`: on
 * Node 20 a worker does not get the loader hooks of `--import tsx` in its execArgv, so a small ESM bootstrap (a
 * data: URL) calls tsx's register() APIs first, the ESM one and the CommonJS one, as `--import tsx` does (a
 * user's strategy module outside this package is CommonJS by scope and needs the latter).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BotError } from '../errors.js';

/** `callerUrl`: the caller's import.meta.url; `name`: the worker module's file name without extension. */
export function workerEntry(callerUrl: string, name: string): URL {
  if (!callerUrl.endsWith('.ts')) return new URL(`./${name}.js`, callerUrl);
  const manifest = createRequire(callerUrl).resolve('tsx/package.json');
  const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const api = (kind: string): string => {
    const file = exports[`./${kind}/api`]?.import?.default;
    if (file === undefined) throw new BotError('E_UNEXPECTED', `cannot find tsx's ${kind} register API in ${manifest}`);
    return JSON.stringify(pathToFileURL(path.join(path.dirname(manifest), file)).href);
  };
  const worker = JSON.stringify(new URL(`./${name}.ts`, callerUrl).href);
  const code =
    `import { register as cjs } from ${api('cjs')}; import { register as esm } from ${api('esm')}; ` +
    `cjs(); esm(); await import(${worker});`;
  return new URL(`data:text/javascript,${encodeURIComponent(code)}`);
}
