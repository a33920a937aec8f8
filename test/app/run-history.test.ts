/**
 * Archives of a paper database: only files named as archives of that database are counted and deleted, the
 * newest PAPER_ARCHIVES_KEPT stay, and two archives made in the same millisecond do not overwrite each other.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listArchives, openRunStore } from '../../src/app/run-history.js';
import type { ClockReading } from '../../src/ports/clock.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const clock: ClockReading = { now: () => Date.parse('2026-01-02T03:04:05.006Z') };
const paper = { mode: 'paper' as const, venue: 'embedded' };

describe('paper database archives', () => {
  it('keeps the newest PAPER_ARCHIVES_KEPT archives and touches nothing else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-history-'));
    dirs.push(dir);
    const db = join(dir, 'bot.db');
    const old = ['2025-01-01T00-00-00-000Z', '2025-06-01T00-00-00-000Z', '2025-12-01T00-00-00-000Z'];
    for (const stamp of old) writeFileSync(join(dir, `bot.${stamp}.db`), '');
    writeFileSync(join(dir, `bot.${old[0]}.db-wal`), '');
    const unrelated = ['bot.backup.db', 'bot.2025.db', 'other.2025-01-01T00-00-00-000Z.db', 'bot.db.bak'];
    for (const f of unrelated) writeFileSync(join(dir, f), '');

    openRunStore(db, paper, clock).store.close(); // a new database: nothing to archive
    expect(listArchives(db)).toHaveLength(3);
    const first = openRunStore(db, paper, clock, { fresh: true, archivesKept: 2 });
    first.store.close();
    expect(first.archivedBecause).toBe('fresh');
    expect(first.archivedTo).toBe(join(dir, 'bot.2026-01-02T03-04-05-006Z.db'));
    expect(first.deleted).toEqual([join(dir, `bot.${old[0]}.db`), join(dir, `bot.${old[1]}.db`)]);
    // Again in the same millisecond: a new name, the oldest of the two kept goes.
    const second = openRunStore(db, paper, clock, { fresh: true, archivesKept: 2 });
    second.store.close();
    expect(second.archivedTo).toBe(join(dir, 'bot.2026-01-02T03-04-05-007Z.db'));
    expect(listArchives(db).map((f) => f.slice(dir.length + 1))).toEqual([
      'bot.2026-01-02T03-04-05-006Z.db',
      'bot.2026-01-02T03-04-05-007Z.db',
    ]);
    expect(existsSync(join(dir, `bot.${old[0]}.db-wal`))).toBe(false);
    for (const f of unrelated) expect(readdirSync(dir)).toContain(f);
  });

  it('does not archive without --fresh, and refuses a live database whatever is asked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'run-history-'));
    dirs.push(dir);
    const db = join(dir, 'bot.db');
    openRunStore(db, paper, clock).store.close();
    const again = openRunStore(db, paper, clock);
    again.store.close();
    expect(again.archivedTo).toBeUndefined();
    const live = join(dir, 'live.db');
    openRunStore(live, { mode: 'live', venue: 'https://x' }, clock).store.close();
    expect(() => openRunStore(live, paper, clock, { fresh: true })).toThrow(/holds live trading/);
    expect(listArchives(live)).toEqual([]);
  });
});
