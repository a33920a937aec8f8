import { existsSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireJournalLock, JournalLockedError, lockPathOf, type LockHolder } from '../../src/store/journal-lock.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('journal-lock');
let n = 0;
const held: { release(): void }[] = [];
const freshPath = () => join(dir, `bot-${++n}.db`);
const who = (pid: number): LockHolder => ({ pid, host: `host-${pid}`, since: `2026-01-01T00:00:0${pid % 10}.000Z` });

/** The error acquire throws (fails the test if it does not). */
function refusal(path: string, holder: LockHolder): JournalLockedError {
  try {
    acquireJournalLock(path, { holder }).release();
  } catch (err) {
    expect(err).toBeInstanceOf(JournalLockedError);
    return err as JournalLockedError;
  }
  throw new Error('the second lock was granted');
}

describe('the journal lock', () => {
  it('refuses a second holder, naming the first; the next one gets it once the first lets go', () => {
    const path = freshPath();
    const first = acquireJournalLock(path, { holder: who(101) });
    expect(existsSync(lockPathOf(path))).toBe(true);
    // The journal itself is not touched by the lock.
    expect(existsSync(path)).toBe(false);
    const err = refusal(path, who(102));
    expect(err.code).toBe('E_DB_LOCKED');
    expect(err.holder).toEqual(who(101));
    expect(err.message).toBe(
      `${path} is in use by another bot: pid 101 on host host-101 since 2026-01-01T00:00:01.000Z; one daemon per journal: stop that one first, or set DB_PATH to another file`,
    );
    first.release();
    first.release(); // idempotent
    const second = acquireJournalLock(path, { holder: who(103) });
    expect(refusal(path, who(104)).holder).toEqual(who(103));
    second.release();
  });

  it('a candidate that slips in between the row and the lock is refused, the row names the winner', () => {
    const path = freshPath();
    let inner: JournalLockedError | undefined;
    // A has written its row; B then runs all the way: B writes its row and takes the lock. A's lock is refused.
    let err: unknown;
    try {
      acquireJournalLock(path, {
        holder: who(1),
        onStep: (step) => {
          if (step !== 'row written' || inner !== undefined) return;
          const b = acquireJournalLock(path, { holder: who(2) });
          inner = refusal(path, who(3));
          // B keeps it: A's BEGIN IMMEDIATE is refused next.
          held.push(b);
        },
      });
    } catch (e) {
      err = e;
    }
    expect(inner?.holder).toEqual(who(2));
    expect(err).toBeInstanceOf(JournalLockedError);
    expect((err as JournalLockedError).holder).toEqual(who(2));
    for (const h of held.splice(0)) h.release();
  });

  it('a candidate whose row was overwritten before it took the lock lets go and tries again', () => {
    const path = freshPath();
    const steps: string[] = [];
    let slipped = false;
    // A writes its row; B writes its row and stops there (as if paused); A takes the lock, sees B's row, lets go,
    // writes again and holds. A third candidate is then refused, naming A.
    const a = acquireJournalLock(path, {
      holder: who(1),
      onStep: (step) => {
        steps.push(`A ${step}`);
        if (step !== 'row written' || slipped) return;
        slipped = true;
        expect(() =>
          acquireJournalLock(path, {
            holder: who(2),
            onStep: (s) => {
              steps.push(`B ${s}`);
              throw new Error('B paused');
            },
          }),
        ).toThrow('B paused');
      },
    });
    expect(steps).toEqual(['A row written', 'B row written', 'A lock taken', 'A row written', 'A lock taken']);
    expect(refusal(path, who(3)).holder).toEqual(who(1));
    a.release();
  });

  it("is the real file's: a symlink to the journal, to where it will be, or through a symlinked folder takes the same lock", () => {
    const path = freshPath();
    const viaLink = join(dir, `link-${n}.db`);
    symlinkSync(path, viaLink); // dangling: the journal is not made yet
    const folderLink = join(dir, `folder-${n}`);
    symlinkSync(dir, folderLink);
    const first = acquireJournalLock(viaLink, { holder: who(201) });
    expect(lockPathOf(viaLink)).toBe(`${realpathSync(dir)}/bot-${n}.db.lock`);
    expect(refusal(path, who(202)).holder).toEqual(who(201));
    writeFileSync(path, ''); // made now: the real path is the same
    expect(refusal(join(folderLink, `bot-${n}.db`), who(203)).holder).toEqual(who(201));
    expect(refusal(viaLink, who(204)).holder).toEqual(who(201));
    first.release();
  });

  it("names the holder's container", () => {
    const path = freshPath();
    const held = acquireJournalLock(path, { holder: { ...who(1), container: 'pod trading/bot-0' } });
    const err = refusal(path, who(2));
    expect(err.holder).toEqual({ ...who(1), container: 'pod trading/bot-0' });
    expect(err.message).toContain('pid 1 on host host-1 (pod trading/bot-0) since');
    held.release();
  });

  it('needs no lock for an in-memory journal', () => {
    const a = acquireJournalLock(':memory:');
    const b = acquireJournalLock(':memory:');
    a.release();
    b.release();
    expect(existsSync(lockPathOf(':memory:'))).toBe(false);
  });
});
