/** Each command run in process reads only what it printed itself. */
import { expect, it } from 'vitest';
import { capture } from './command-output.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

it('a run that outlives its capture (a timed-out test) keeps printing into its own lines, never into the next run', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const straggler = await capture(() => {
    console.log('first: started');
    void released.then(() => {
      console.log('first: still printing');
      console.error('first: an error');
    });
    return Promise.resolve(1);
  }, []);
  const next = await capture(
    async (argv) => {
      console.log(`next: ${argv.join(' ')}`);
      release();
      await tick();
      console.error('next: done');
      return 0;
    },
    ['--flag'],
  );
  expect(next).toEqual({ code: 0, out: ['next: --flag'], err: ['next: done'] });
  expect(straggler).toEqual({ code: 1, out: ['first: started', 'first: still printing'], err: ['first: an error'] });
});
