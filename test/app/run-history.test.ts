/**
 * Archives of a paper database: only files named as archives of that database are counted and deleted, the
 * newest PAPER_ARCHIVES_KEPT stay, and two archives made in the same millisecond do not overwrite each other.
 * A start is recorded (and old archives deleted) only once the daemon runs; a start abandoned leaves the
 * database as it was.
 */
import { journalEnd } from '../../src/notify/notifier.js';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listArchives, openRunStore, type RunIdentity, type RunStoreOptions } from '../../src/app/run-history.js';
import { openStore } from '../../src/store/store.js';
import type { ClockReading } from '../../src/ports/clock.js';
import { tempDir } from '../support/temp-dir.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const clock: ClockReading = { now: () => Date.parse('2026-01-02T03:04:05.006Z') };
const paper = { mode: 'paper' as const, venue: 'embedded' };

/** A daemon's start that got to run: its start recorded. Returns the archives deleted. */
function run(path: string, identity: RunIdentity, options?: RunStoreOptions) {
  const opened = openRunStore(path, identity, clock, options);
  const deleted = opened.started(journalEnd(opened.store));
  opened.store.close();
  return { ...opened, deleted };
}

describe('paper database archives', () => {
  it('keeps the newest PAPER_ARCHIVES_KEPT archives and touches nothing else', () => {
    const dir = tempDir('run-history');
    dirs.push(dir);
    const db = join(dir, 'bot.db');
    const old = ['2025-01-01T00-00-00-000Z', '2025-06-01T00-00-00-000Z', '2025-12-01T00-00-00-000Z'];
    for (const stamp of old) writeFileSync(join(dir, `bot.${stamp}.db`), '');
    writeFileSync(join(dir, `bot.${old[0]}.db-wal`), '');
    const unrelated = ['bot.backup.db', 'bot.2025.db', 'other.2025-01-01T00-00-00-000Z.db', 'bot.db.bak'];
    for (const f of unrelated) writeFileSync(join(dir, f), '');

    run(db, paper); // a new database: nothing to archive
    expect(listArchives(db)).toHaveLength(3);
    const first = run(db, paper, { fresh: true, archivesKept: 2 });
    expect(first.archivedBecause).toBe('fresh');
    expect(first.archivedTo).toBe(join(dir, 'bot.2026-01-02T03-04-05-006Z.db'));
    expect(first.deleted).toEqual([join(dir, `bot.${old[0]}.db`), join(dir, `bot.${old[1]}.db`)]);
    // Again in the same millisecond: a new name, the oldest of the two kept goes.
    const second = run(db, paper, { fresh: true, archivesKept: 2 });
    expect(second.archivedTo).toBe(join(dir, 'bot.2026-01-02T03-04-05-007Z.db'));
    expect(listArchives(db).map((f) => f.slice(dir.length + 1))).toEqual([
      'bot.2026-01-02T03-04-05-006Z.db',
      'bot.2026-01-02T03-04-05-007Z.db',
    ]);
    expect(existsSync(join(dir, `bot.${old[0]}.db-wal`))).toBe(false);
    for (const f of unrelated) expect(readdirSync(dir)).toContain(f);
  });

  it('does not archive without --fresh, and refuses a live database whatever is asked', () => {
    const dir = tempDir('run-history');
    dirs.push(dir);
    const db = join(dir, 'bot.db');
    run(db, paper);
    const again = run(db, paper);
    expect(again.archivedTo).toBeUndefined();
    const live = join(dir, 'live.db');
    run(live, { mode: 'live', venue: 'https://x' });
    expect(() => openRunStore(live, paper, clock, { fresh: true })).toThrow(/holds live trading/);
    expect(listArchives(live)).toEqual([]);
  });
});

describe('a start abandoned', () => {
  const starts = (path: string) => {
    const store = openStore({ path, clock });
    try {
      return store.events.count('daemon-started');
    } finally {
      store.close();
    }
  };

  it('removes the database it made, puts back the one it archived, and records nothing on one it found', () => {
    const dir = tempDir('run-history');
    dirs.push(dir);
    const db = join(dir, 'bot.db');
    openRunStore(db, paper, clock).abandon();
    expect(readdirSync(dir)).toEqual([]);

    run(db, paper);
    const kept = readFileSync(db);
    openRunStore(db, paper, clock).abandon();
    expect(starts(db)).toBe(1);

    const fresh = openRunStore(db, paper, clock, { fresh: true, archivesKept: 0 });
    expect(fresh.archivedTo).toBeDefined();
    fresh.abandon();
    expect(readdirSync(dir)).toEqual(['bot.db']);
    expect(readFileSync(db).equals(kept)).toBe(true);
  });
});
