/**
 * What status and the metrics read instead of every row (migration 5): order counts and fill totals kept by
 * triggers, each instance's position folded as its fills are recorded. Whatever happened (many writes, restarts,
 * a process killed in the middle of a write, a fold that fails, a journal written before they existed), they
 * equal a recount of every row.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations.js';
import { openStore, type Store } from '../../src/store/store.js';
import { trackChild } from '../support/child-processes.js';
import { journalWriter, kept, recount } from './journal-writes.js';
import { tempDir } from '../support/temp-dir.js';

const clock = { now: () => 1_700_000_000_000 };

let dir: string;
let path: string;
beforeEach(() => {
  dir = tempDir('journal-aggregates');
  path = join(dir, 'bot.db');
});

/** The aggregates equal the recount: counts exactly, positions and daily PnL to the last digit, notional as doubles. */
function expectConsistent(store: Store): void {
  const want = recount(store);
  const got = kept(store);
  expect(got.orderCounts).toEqual(want.orderCounts);
  expect(got.positions).toEqual(want.positions);
  expect(got.paper).toEqual(want.paper);
  expect(got.fillTotals.map(({ notional: _, ...t }) => t)).toEqual(want.fillTotals.map(({ notional: _, ...t }) => t));
  got.fillTotals.forEach((t, i) => expect(t.notional).toBeCloseTo(want.fillTotals[i]!.notional, 6));
}

function writeSteps(store: Store, seed: number, steps: number): Record<string, number> {
  const writer = journalWriter(store, seed);
  const kinds: Record<string, number> = {};
  for (let i = 0; i < steps; i++) {
    const kind = store.transaction(() => writer.step());
    kinds[kind] = (kinds[kind] ?? 0) + 1;
  }
  return kinds;
}

describe('journal aggregates', () => {
  it('equal a recount of every row after many writes, and across a restart', () => {
    let store = openStore({ path, clock, synchronous: 'NORMAL' });
    const kinds = writeSteps(store, 7, 1500);
    // The writes covered what the aggregates must follow: new orders, status changes, new and repeated fills.
    expect(kinds.order).toBeGreaterThan(100);
    expect(kinds.update).toBeGreaterThan(100);
    expect(kinds.fill).toBeGreaterThan(100);
    expect(kinds.repeat).toBeGreaterThan(10);
    expectConsistent(store);
    const before = kept(store);
    expect(Object.values(before.positions).some((p) => p.quantity !== '0')).toBe(true);
    store.close();

    store = openStore({ path, clock, synchronous: 'NORMAL' });
    expect(kept(store)).toEqual(before);
    writeSteps(store, 8, 500);
    expectConsistent(store);
    store.close();
  });

  it('equal a recount after a process is killed between a fill and its commit', async () => {
    const seed = 11;
    const child = trackChild(
      spawn(
        process.execPath,
        ['--import', 'tsx', 'test/store/journal-writer-process.ts', path, String(seed), '400', '300'],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      ),
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    const signal = await new Promise((resolve) => child.once('exit', (_code, sig) => resolve(sig)));
    expect(signal).toBe('SIGKILL');
    const lost = out.trim();
    expect(lost).toMatch(/^f11-\d+$/);

    const store = openStore({ path, clock, synchronous: 'NORMAL' });
    // The fill written before the kill is gone, and so is its share of the fold and the totals.
    expect(store.fills.has(lost)).toBe(false);
    expect(store.fills.totals().reduce((n, t) => n + t.n, 0)).toBeGreaterThan(50);
    expectConsistent(store);
    writeSteps(store, seed + 1, 200);
    expectConsistent(store);
    store.close();
  });

  it('equal a recount when transactions roll back after their fill was folded (the fold kept in memory too)', () => {
    const store = openStore({ path, clock, synchronous: 'NORMAL' });
    const writer = journalWriter(store, 5);
    let rolledBack = 0;
    for (let i = 0; i < 900; i++) {
      try {
        store.transaction(() => {
          if (writer.step() === 'fill' && i % 3 === 0) throw new Error('rolled back');
        });
      } catch (err) {
        if ((err as Error).message !== 'rolled back') throw err;
        rolledBack++;
      }
    }
    expect(rolledBack).toBeGreaterThan(30);
    expectConsistent(store);
    store.close();
  });

  it('record a fill only together with its fold: a fold that cannot be written leaves no fill', () => {
    const store = openStore({ path, clock, synchronous: 'NORMAL' });
    writeSteps(store, 3, 300);
    const before = kept(store);
    store.db.exec(
      "CREATE TRIGGER refuse_fold BEFORE INSERT ON realised_days BEGIN SELECT RAISE(ABORT, 'injected'); END",
    );
    const order = store.orders.active().find((o) => o.instance !== undefined)!;
    const fill = {
      fillKey: 'refused-1',
      orderLocalId: order.localId,
      instance: order.instance,
      symbol: order.symbol,
      side: order.side,
      price: '100',
      qty: '1',
      fee: '0',
      feeAsset: undefined,
      feeIn: 'quote' as const,
      // A day no fill was on yet: its realised_days row is new, so the trigger refuses it.
      time: 1_600_000_000_000,
      source: 'trade' as const,
      delivered: false,
      recordedAt: 1,
    };
    expect(() => store.fills.insert(fill)).toThrow(/injected/);
    expect(store.fills.has('refused-1')).toBe(false);
    expect(kept(store)).toEqual(before);
    store.db.exec('DROP TRIGGER refuse_fold');
    expect(store.fills.insert(fill)).toBe(true);
    expectConsistent(store);
    store.close();
  });

  it('keep fills a ledger: a fill row cannot be deleted or its figures changed', () => {
    const store = openStore({ path, clock, synchronous: 'NORMAL' });
    writeSteps(store, 5, 100);
    expect(() => store.db.exec('DELETE FROM fills')).toThrow(/append-only/);
    expect(() => store.db.exec("UPDATE fills SET qty = '1'")).toThrow(/append-only/);
    store.db.exec('UPDATE fills SET delivered = 1');
    expectConsistent(store);
    store.close();
  });

  it('are built when a journal written before them is opened (upgraded in place)', () => {
    // The schema as the previous release (schema 4) left it.
    const v4 = new Database(':memory:');
    for (const m of MIGRATIONS.filter((m) => m.version <= 4)) v4.exec(m.sql);
    const objects = (db: Database.Database) =>
      db
        .prepare<[], { type: string; name: string }>(
          "SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
        )
        .all();
    const before = new Set(objects(v4).map((o) => o.name));
    const columns = (db: Database.Database, table: string) =>
      db
        .prepare<[], { name: string }>(`PRAGMA table_info(${table})`)
        .all()
        .map((c) => c.name);
    const v4Columns = new Map(
      objects(v4)
        .filter((o) => o.type === 'table')
        .map((o) => [o.name, columns(v4, o.name)]),
    );
    v4.close();
    // Rows written, then everything since schema 4 taken away (triggers first, so they stop counting).
    let store = openStore({ path, clock, synchronous: 'NORMAL' });
    writeSteps(store, 9, 800);
    const added = objects(store.db).filter((o) => !before.has(o.name) && o.name !== 'schema_migrations');
    expect(added.length).toBeGreaterThan(5);
    for (const type of ['trigger', 'index', 'table'])
      for (const o of added.filter((o) => o.type === type)) store.db.exec(`DROP ${type.toUpperCase()} ${o.name}`);
    for (const [table, kept] of v4Columns)
      for (const c of columns(store.db, table).filter((c) => !kept.includes(c)))
        store.db.exec(`ALTER TABLE ${table} DROP COLUMN ${c}`);
    store.db.exec('DELETE FROM schema_migrations WHERE version > 4');
    store.close();

    store = openStore({ path, clock, synchronous: 'NORMAL' });
    expect(store.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get()).toEqual({ v: LATEST_VERSION });
    expect(store.orders.counts().length).toBeGreaterThan(10);
    expectConsistent(store);
    writeSteps(store, 10, 300);
    expectConsistent(store);
    store.close();
  });
});
