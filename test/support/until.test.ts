/** The test helpers' wait: it resolves on the event, gives up when the event can no longer come, and says why. */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { deadline, until, whenExited } from './until.js';

describe('until', () => {
  it('resolves with the first value the check gives, counting a thrown error as not yet', async () => {
    let calls = 0;
    const value = await until(
      'the third call',
      () => {
        calls += 1;
        if (calls === 1) throw new Error('no file yet');
        return calls === 3 && { calls };
      },
      { every: 1 },
    );
    expect(value).toEqual({ calls: 3 });
  });

  it('gives up as soon as the process it waits on has exited, quoting its last error and the tail', async () => {
    const child = spawn(process.execPath, ['-e', 'process.exit(3)'], { stdio: 'ignore' });
    await expect(
      until(
        'a line that never comes',
        () => {
          throw new Error('not in the log');
        },
        { giveUp: whenExited(child, 'the child'), tail: () => 'last lines' },
      ),
    ).rejects.toThrow(
      /^the child exited \(code 3\) waiting for a line that never comes \(last error: not in the log\)\nlast lines$/,
    );
  });

  it('a deadline (for scripts outside vitest) gives up once its time has passed', async () => {
    await expect(until('never', () => false, { giveUp: deadline(20), every: 5 })).rejects.toThrow(
      /^20 ms passed waiting for never$/,
    );
  });
});
