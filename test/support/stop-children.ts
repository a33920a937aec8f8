/**
 * Vitest setup file: no process a test file started outlives it (see child-processes.ts), and what it made for
 * the whole file (temp folders, harnesses: scoped.ts) is removed after them.
 */
import { afterAll } from 'vitest';
import { killTrackedChildren } from './child-processes.js';
import { cleanUpFile } from './scoped.js';

afterAll(async () => {
  const killed = killTrackedChildren();
  if (killed > 0) console.warn(`killed ${killed} process(es) the test file left running`);
  await cleanUpFile();
});
process.once('exit', () => killTrackedChildren());
