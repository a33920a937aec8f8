/** Vitest setup file: no process a test file started outlives it (see child-processes.ts). */
import { afterAll } from 'vitest';
import { killTrackedChildren } from './child-processes.js';

afterAll(() => {
  const killed = killTrackedChildren();
  if (killed > 0) console.warn(`killed ${killed} process(es) the test file left running`);
});
process.once('exit', () => killTrackedChildren());
