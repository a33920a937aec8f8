/**
 * Cleaning up after what a test made, wherever it made it: inside a test, when that test ends (passed, failed
 * or timed out); while its file is collected (at the top of a file or in a describe block), when that file or
 * block ends. Temp folders, engine harnesses and servers use it, so no test file writes the same teardown again.
 */
import { afterAll, onTestFinished, TestRunner } from 'vitest';

export function whenDone(cleanup: () => unknown): void {
  if (TestRunner.getCurrentTest() !== undefined) onTestFinished(async () => void (await cleanup()));
  else afterAll(async () => void (await cleanup()));
}
