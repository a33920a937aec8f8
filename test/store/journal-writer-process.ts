/**
 * A process that writes seeded journal rows to the database at argv[2] (seed argv[3], argv[4] steps, each in
 * its own transaction) and SIGKILLs itself inside the transaction of the first new fill from step argv[5] on,
 * after the fill and its fold are written and before their commit (a power cut in the middle of a write),
 * having printed that fill's key.
 */
import { writeSync } from 'node:fs';
import { openStore } from '../../src/store/store.js';
import { journalWriter } from './journal-writes.js';

const [path = '', seed = '1', steps = '0', killAt = '0'] = process.argv.slice(2);
const store = openStore({ path, clock: { now: () => 1_700_000_000_000 } });
const writer = journalWriter(store, Number(seed));
for (let i = 1; i <= Number(steps); i++) {
  store.transaction(() => {
    const what = writer.step();
    if (Number(killAt) > 0 && i >= Number(killAt) && what === 'fill') {
      writeSync(1, `${writer.lastFill}\n`);
      process.kill(process.pid, 'SIGKILL');
    }
  });
}
store.close();
