import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backupPath, migrationBackups, newerSchema, openDatabase } from '../../src/store/database.js';
import type { FillRow } from '../../src/store/fills.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/migrations.js';
import type { OrderRow } from '../../src/store/order-journal.js';
import { openStore, type Store } from '../../src/store/store.js';
import { orderRow } from './fixtures.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { deepFreeze } from '../../src/sim/records.js';
import { tempDir } from '../support/temp-dir.js';

const clock = { now: () => 1_700_000_000_000 };

function order(over: Partial<OrderRow> = {}): OrderRow {
  return orderRow({ localId: 'grid-1', instance: 'grid', price: '60000.1', quantity: '0.001', tag: 'grid:1', ...over });
}

function fill(over: Partial<FillRow> = {}): FillRow {
  return {
    fillKey: 't-1',
    orderLocalId: 'grid-1',
    instance: 'grid',
    symbol: 'BTCUSDT',
    side: 'BUY',
    price: '60000.1',
    qty: '0.0005',
    fee: '0.0000005',
    feeAsset: 'BTC',
    feeIn: 'base',
    time: 2000,
    source: 'trade',
    delivered: false,
    recordedAt: 2000,
    ...over,
  };
}

let dir: string;
beforeEach(() => {
  dir = tempDir('store-test');
});

describe('openDatabase', () => {
  it('creates the file (and its folder), uses WAL, FULL sync and foreign keys, and records the migrations', () => {
    const path = join(dir, 'nested', 'bot.db');
    const db = openDatabase({ path, clock });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2); // FULL
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(Number(db.pragma('busy_timeout', { simple: true }))).toBeGreaterThan(0);
    const versions = db.prepare('SELECT version, applied_at FROM schema_migrations').all();
    expect(versions).toEqual(MIGRATIONS.map((m) => ({ version: m.version, applied_at: clock.now() })));
    db.close();
    // Reopening applies nothing twice.
    const again = openDatabase({ path, clock });
    expect(again.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get()).toEqual({ n: MIGRATIONS.length });
    again.close();
  });

  it('refuses a database written by a newer version of the bot', () => {
    const path = join(dir, 'bot.db');
    openDatabase({ path, clock }).close();
    const raw = new Database(path);
    raw
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      .run(LATEST_VERSION + 1, 'future', 1);
    raw.close();
    expect(() => openDatabase({ path, clock })).toThrow(expect.objectContaining({ code: 'E_DB_VERSION' }));
  });

  it('names the newest backup a migration left at a schema it knows, or says there is none', () => {
    const path = join(dir, 'journal.db');
    const newer = LATEST_VERSION + 2;
    expect(newerSchema(path, newer).message).toContain(
      `no backup a migration made is beside it (journal.schema-${LATEST_VERSION}-before-${newer}.db or older)`,
    );
    for (const [from, to] of [
      [LATEST_VERSION - 1, LATEST_VERSION],
      [LATEST_VERSION, LATEST_VERSION + 1],
      [LATEST_VERSION + 1, newer],
    ])
      writeFileSync(backupPath(path, from!, to!), '');
    expect(migrationBackups(path).map((b) => [b.from, b.to])).toEqual([
      [LATEST_VERSION + 1, newer],
      [LATEST_VERSION, LATEST_VERSION + 1],
      [LATEST_VERSION - 1, LATEST_VERSION],
    ]);
    const refusal = newerSchema(path, newer);
    expect(refusal.code).toBe('E_DB_VERSION');
    expect(refusal.message).toContain(`mv ${backupPath(path, LATEST_VERSION, LATEST_VERSION + 1)} ${path}`);
    expect(backupPath('data/live', 3, 6)).toBe('data/live.schema-3-before-6');
  });

  it('opens :memory: for tests and backtests', () => {
    const db = openDatabase({ path: ':memory:', clock });
    expect(db.memory).toBe(true);
    db.close();
  });
});

describe('Store', () => {
  let store: Store;
  beforeEach(() => {
    store = openStore({ path: join(dir, 'bot.db'), clock });
  });
  afterEach(() => store.close());

  it('journals orders with exact decimal text and updates their outcome', () => {
    store.orders.insert(order());
    expect(store.orders.get('grid-1')).toEqual(order());
    const open = { ...order(), status: 'OPEN', exchangeId: '42', matchMethod: 'response' as const, updatedAt: 1500 };
    store.orders.update(open);
    expect(store.orders.byExchangeId('42')).toEqual(open);
    expect(store.orders.active().map((o) => o.localId)).toEqual(['grid-1']);
    expect(store.orders.maxSeq('grid')).toBe(1);
    expect(store.orders.maxSeq('other')).toBe(0);
    store.orders.update({ ...open, status: 'CANCELED' });
    expect(store.orders.active()).toEqual([]);
  });

  it('keeps exchange ids unique and local ids unique', () => {
    store.orders.insert(order({ exchangeId: '7', status: 'OPEN' }));
    expect(() => store.orders.insert(order({ localId: 'grid-2', seq: 2, exchangeId: '7' }))).toThrow(/UNIQUE/);
    expect(() => store.orders.insert(order())).toThrow(/UNIQUE/);
  });

  it('lists final orders whose fills are not all recorded', () => {
    store.orders.insert(order({ status: 'FILLED', exchangeId: '1', execQty: '0.001', filledQty: '0.0005' }));
    store.orders.insert(
      order({ localId: 'grid-2', seq: 2, status: 'FILLED', exchangeId: '2', execQty: '0.001', filledQty: '0.001' }),
    );
    expect(store.orders.withOutstandingFills().map((o) => o.localId)).toEqual(['grid-1']);
  });

  it('inserts a fill once per key and tracks delivery', () => {
    store.orders.insert(order());
    expect(store.fills.insert(fill())).toBe(true);
    expect(store.fills.insert(fill({ qty: '999' }))).toBe(false);
    expect(store.fills.forOrder('grid-1')).toEqual([fill()]);
    expect(store.fills.undelivered('grid').map((f) => f.fillKey)).toEqual(['t-1']);
    store.fills.markDelivered('t-1');
    expect(store.fills.undelivered('grid')).toEqual([]);
    expect(store.fills.latestTradeTime('BTCUSDT')).toBe(2000);
    expect(store.fills.latestTradeTime('ETHUSDT')).toBeUndefined();
    // Which keys of a page of trades are recorded: a few looked up one by one, a page in one lookup (keys with
    // quotes and the like are plain text either way).
    store.fills.insert(fill({ fillKey: 'it\'s "2"', time: 2500 }));
    expect(store.fills.recorded(['t-0', 't-1', 'it\'s "2"', 't-3'])).toEqual(new Set(['t-1', 'it\'s "2"']));
    const page = ['t-0', 't-1', 'it\'s "2"', 't-3', ...Array.from({ length: 96 }, (_, i) => `x-${i}`)];
    expect(store.fills.recorded(page)).toEqual(new Set(['t-1', 'it\'s "2"']));
    expect(store.fills.recorded([])).toEqual(new Set());
  });

  it('refuses a fill for an order the journal does not have (foreign key)', () => {
    expect(() => store.fills.insert(fill({ orderLocalId: 'nope' }))).toThrow(/FOREIGN KEY/);
  });

  it('rolls a transaction back as a whole', () => {
    store.orders.insert(order());
    expect(() =>
      store.transaction(() => {
        store.fills.insert(fill());
        store.orders.update({ ...order(), filledQty: '0.0005' });
        throw new Error('crash between the two writes');
      }),
    ).toThrow('crash');
    expect(store.fills.forOrder('grid-1')).toEqual([]);
    expect(store.orders.get('grid-1')?.filledQty).toBe('0');
  });

  it('writes a pair configuration again unless it is the same frozen object last written and committed', () => {
    const stored = () => store.db.prepare('SELECT config, updated_at AS at FROM pair_rules').all();
    // A row changed behind the store's back shows whether a put ran its statement.
    const tamper = () => store.db.prepare("UPDATE pair_rules SET config = 'x', updated_at = 0").run();
    const frozen = deepFreeze(structuredClone(DEFAULT_PAIRS[0]!));
    store.pairRules.put([frozen], 1);
    expect(stored()).toEqual([{ config: JSON.stringify(frozen), at: 1 }]);
    // The same frozen object again: no statement (the in-process venue hands the same one at every refresh).
    tamper();
    store.pairRules.put([frozen], 2);
    expect(stored()).toEqual([{ config: 'x', at: 0 }]);
    // A write that was rolled back is written again next time.
    const other = deepFreeze({ ...structuredClone(DEFAULT_PAIRS[0]!), status: 'HALT' });
    expect(() =>
      store.transaction(() => {
        store.pairRules.put([other], 3);
        throw new Error('rolled back');
      }),
    ).toThrow('rolled back');
    expect(stored()).toEqual([{ config: 'x', at: 0 }]);
    store.pairRules.put([other], 4);
    expect(stored()).toEqual([{ config: JSON.stringify(other), at: 4 }]);
    // An object that is not frozen may have changed since: always written.
    const open = structuredClone(DEFAULT_PAIRS[0]!);
    store.pairRules.put([open], 5);
    tamper();
    store.pairRules.put([open], 6);
    expect(stored()).toEqual([{ config: JSON.stringify(open), at: 6 }]);
  });

  it('persists strategy state and events across reopening', () => {
    store.state.put('grid', '{"levels":[1,2]}', 10);
    store.state.put('grid', '{"levels":[3]}', 11);
    store.events.record(12, 'grid', 'paused', { reason: 'onTick threw' });
    store.events.record(13, undefined, 'kill-switch', { on: true });
    store.close();
    store = openStore({ path: join(dir, 'bot.db'), clock });
    expect(store.state.get('grid')).toBe('{"levels":[3]}');
    expect(store.state.get('other')).toBeUndefined();
    expect(store.events.list({ instance: 'grid' })).toEqual([
      { id: 1, time: 12, instance: 'grid', kind: 'paused', data: { reason: 'onTick threw' } },
    ]);
    expect(store.events.list({ kinds: ['kill-switch'], limit: 1 })[0]?.data).toEqual({ on: true });
    expect(store.events.instances()).toEqual(['grid']);
  });
});
