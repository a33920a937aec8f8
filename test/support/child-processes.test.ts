import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../e2e/daemon-process.js';
import { killTrackedChildren, processAlive, trackChild } from './child-processes.js';

describe.runIf(process.platform === 'linux')('the clean-up of the processes a test starts', () => {
  it('kills a tracked child still running, and the rest of a tracked group after its leader is gone', async () => {
    const plain = trackChild(spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }));
    // A leader that starts a grandchild, prints its pid and is then killed alone: the grandchild is orphaned.
    const leader = trackChild(
      spawn(
        process.execPath,
        [
          '-e',
          "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1000)",
        ],
        { detached: true, stdio: ['ignore', 'pipe', 'ignore'] },
      ),
      { group: true },
    );
    const orphan = await new Promise<number>((resolve) =>
      leader.stdout.once('data', (c: Buffer) => resolve(Number(c))),
    );
    leader.kill('SIGKILL');
    await new Promise((resolve) => leader.once('exit', resolve));
    expect(processAlive(orphan)).toBe(true);

    expect(killTrackedChildren()).toBe(2);
    await waitFor('both processes gone', () => !processAlive(plain.pid!) && !processAlive(orphan));
  });
});
