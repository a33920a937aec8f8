#!/usr/bin/env -S node --max-semi-space-size=2
// The package's `bot` command, and `npm start`: runs the compiled build (dist/, made or brought up to date first
// when a source changed: bin/build.js) in this very process: no child process, so signals reach the bot itself.
// Strategy modules in TypeScript still load (the loader registers tsx for the first one). Where the build cannot
// be made (a read-only checkout), it runs the TypeScript sources through tsx, as one line on stderr says.
import { compiledEntry } from './build.js';

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
