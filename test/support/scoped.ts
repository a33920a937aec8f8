/**
 * Cleaning up after what a test made, wherever it made it: inside a test (or its beforeEach), when that test
 * ends (passed, failed or timed out); anywhere else (at the top of a file, in a describe block, in a beforeAll),
 * when its file ends, after the file's own afterAll hooks and its processes (test/support/stop-children.ts).
 * Temp folders and engine harnesses use it, so no test file writes the same teardown again.
 */
import { onTestFinished, TestRunner } from 'vitest';

const atFileEnd: (() => unknown)[] = [];

export function whenDone(cleanup: () => unknown): void {
  if (TestRunner.getCurrentTest() !== undefined) onTestFinished(async () => void (await cleanup()));
  else atFileEnd.push(cleanup);
}

/** Runs the file's cleanups, the last made first (the setup file's afterAll). */
export async function cleanUpFile(): Promise<void> {
  for (const cleanup of atFileEnd.splice(0).reverse()) await cleanup();
}
