#!/usr/bin/env -S node --max-semi-space-size=2
// The package's `bot` command, and `npm start`: runs the compiled build (dist/, made or brought up to date first
// when a source changed: bin/build.js) in this very process: no child process, so signals reach the bot itself.
// Strategy modules in TypeScript still load (the loader registers tsx for the first one). Where the build cannot
// be made (a read-only checkout), it runs the TypeScript sources through tsx, as one line on stderr says.
import module from 'node:module';
import { compiledEntry } from './build.js';

// V8's code cache on disk for every module loaded from here on (Node 22.1+, the image's; absent on Node 20, where
// this does nothing): a second start compiles little. The folder is NODE_COMPILE_CACHE's, else the OS temp
// dir's node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off. Passed on in the environment, so a
// sweep's worker threads and child processes use it too. It never throws: a folder it cannot write is no cache.
const compileCache = module.enableCompileCache?.();
if (compileCache?.directory !== undefined) process.env.NODE_COMPILE_CACHE ??= compileCache.directory;

// Stack traces through the build name the TypeScript source and its line (the build's inline source maps): a
// strategy's hook error says where in strategies/x.ts it threw. Only modules loaded from here on are mapped.
process.setSourceMapsEnabled(true);

const entry = await compiledEntry();
if (entry !== undefined) {
  await import(entry);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
