/**
 * A command needing a research dependency the installation leaves out (the trading image) says which package,
 * for what, and where it is; any other failure to load is left as it was. Node's error is made as Node 22 makes it
 * (vitest resolves a test's imports from the checkout, which has every package); the container test meets the real
 * one in the trading image.
 */
import { expect, it } from 'vitest';
import { BotError } from '../../src/errors.js';
import { researchImport } from '../../src/ops/research-import.js';

/** What Node's import() rejects with when `pkg` is not installed. */
const notFound = (pkg: string) =>
  Promise.reject(
    Object.assign(new Error(`Cannot find package '${pkg}' imported from /app/src/backtest/queue/queue-worker.js`), {
      code: 'ERR_MODULE_NOT_FOUND',
    }),
  );

it('names the missing research package, the command and the image that has it', async () => {
  const err = await researchImport('bot worker', () => notFound('bullmq')).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BotError);
  expect((err as BotError).code).toBe('E_UNSUPPORTED');
  expect((err as BotError).message).toMatch(
    /^bot worker needs bullmq, which this installation leaves out .*docker build --target research/,
  );
});

it('leaves any other failure as it was: another missing package, a module that throws', async () => {
  await expect(researchImport('x', () => notFound('left-pad'))).rejects.toMatchObject({
    code: 'ERR_MODULE_NOT_FOUND',
  });
  await expect(researchImport('x', () => Promise.reject(new Error('broken')))).rejects.toThrow('broken');
  expect(await researchImport('x', () => Promise.resolve(42))).toBe(42);
});
