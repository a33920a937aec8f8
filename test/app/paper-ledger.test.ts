/**
 * The paper exchange's ledger: an engine restored from the database, at any point of a random run of places,
 * cancels and ticks, is the engine that was persisted (every record, balance and lock the same, every history
 * page and refusal the same) and goes on exactly as it would have (the same fills at the same prices for the
 * same further actions). A resume reads what matching needs and answers the history from the database. Also: a
 * store of recorded data refuses live prices, and a new account is funded once.
 */
import fc from 'fast-check';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openPaperExchange } from '../../src/app/paper-ledger.js';
import { ConfigError } from '../../src/errors.js';
import type { ClockReading } from '../../src/ports/clock.js';
import { SimRejectError } from '../../src/sim/error-codes.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { openStore, type Store } from '../../src/store/store.js';
import { writeOldJournal } from '../support/old-journal.js';
import { tempDir } from '../support/temp-dir.js';

const KEY = 'paper-key';
const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const FUNDING = { USDT: '200000', BTC: '3' };

type Action =
  | { kind: 'tick'; move: number; volume: number | null }
  | { kind: 'place'; type: string; side: 'BUY' | 'SELL'; qty: number; a: number; b: number; c: number }
  | { kind: 'cancel'; pick: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({
    kind: fc.constant('tick' as const),
    move: fc.integer({ min: -150_000, max: 150_000 }),
    volume: fc.option(fc.integer({ min: 0, max: 2_000_000 })),
  }),
  fc.record({
    kind: fc.constant('place' as const),
    type: fc.constantFrom('LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'),
    side: fc.constantFrom('BUY' as const, 'SELL' as const),
    qty: fc.integer({ min: 1, max: 300_000 }),
    a: fc.integer({ min: 1, max: 100_000 }),
    b: fc.integer({ min: 1, max: 100_000 }),
    c: fc.integer({ min: -20_000, max: 20_000 }),
  }),
  fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }),
);

const cents = (n: number) => (Math.max(1, n) / 100).toFixed(2);

/** Applies one action at step `i` (prices in cents); a refusal is part of the run, like on the exchange. */
function apply(engine: MatchingEngine, a: Action, i: number, state: { last: number }): void {
  try {
    if (a.kind === 'tick') {
      state.last = Math.max(100, state.last + a.move);
      engine.onPrice('BTCUSDT', state.last / 100, T0 + i * 1000, a.volume === null ? undefined : a.volume / 1e6);
    } else if (a.kind === 'place') {
      const up = a.side === 'BUY' ? 1 : -1;
      const quantity = (a.qty / 1e6).toFixed(6);
      const base = { symbol: 'BTCUSDT', side: a.side, type: a.type, quantity };
      const stop = state.last + up * a.b;
      const order =
        a.type === 'MARKET'
          ? base
          : a.type === 'LIMIT'
            ? { ...base, price: cents(state.last - up * a.a) }
            : a.type === 'STOP_LIMIT'
              ? { ...base, stopPrice: cents(stop), price: cents(stop + a.c) }
              : {
                  ...base,
                  price: cents(state.last - up * a.a),
                  stopPrice: cents(stop),
                  limitPrice: cents(stop + up * a.c),
                };
      engine.placeOrder(KEY, order);
    } else {
      const open = engine.openOrders(KEY);
      const o = open[a.pick % Math.max(1, open.length)];
      if (o) engine.cancelOrder(KEY, 'BTCUSDT', o.displayingId);
    }
  } catch (err) {
    if (!(err instanceof SimRejectError)) throw err;
  }
}

/** How the exchange refuses to cancel order `id` when it is not open (an open one is left alone). */
function refusal(engine: MatchingEngine, id: number): string {
  if (engine.openOrders(KEY).some((o) => o.displayingId === id)) return 'open';
  try {
    engine.cancelOrder(KEY, 'BTCUSDT', id);
    return 'cancelled';
  } catch (err) {
    return err instanceof SimRejectError ? `${err.reason}: ${err.message}` : String(err);
  }
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Everything the exchange shows of the account, and its exact balances. */
function view(engine: MatchingEngine) {
  return {
    orders: engine.orderHistory(KEY, { pageSize: 1000 }),
    trades: engine.tradeHistory(KEY, { pageSize: 1000 }),
    // Pages through filters, as a poll and a reconcile read them.
    since: engine.orderHistory(KEY, { timeFrom: iso(T0 + 20_000), hideCanceled: true, pageSize: 3, page: 2 }),
    sells: engine.orderHistory(KEY, { symbol: 'BTCUSDT', side: 'SELL', timeTo: iso(T0 + 30_000) }),
    buys: engine.tradeHistory(KEY, { side: 'BUY', timeFrom: iso(T0 + 10_000), timeTo: iso(T0 + 40_000), pageSize: 2 }),
    refusals: [1, 2, 3, 500].map((id) => refusal(engine, id)),
    open: engine.openOrders(KEY),
    balances: engine.accountState(KEY),
    market: engine.marketState(),
  };
}

const clock: ClockReading = { now: () => T0 };
const engineOptions = (participation: boolean) => ({ participationRate: participation ? '0.5' : undefined });

function open(store: Store, participation: boolean) {
  const engine = new MatchingEngine(engineOptions(participation));
  const opened = openPaperExchange(store, engine, {
    data: 'recording',
    apiKey: KEY,
    funding: FUNDING,
    clock,
    dbPath: ':memory:',
  });
  return { engine, opened };
}

function run(engine: MatchingEngine, actions: Action[], from: number, state: { last: number }): void {
  actions.forEach((act, i) => apply(engine, act, from + i, state));
}

describe('paper exchange ledger', () => {
  it('restores the engine it persisted, at any step, and the restored engine goes on identically', () => {
    fc.assert(
      fc.property(
        fc.array(action, { minLength: 1, maxLength: 60 }),
        fc.array(action, { maxLength: 40 }),
        fc.boolean(),
        (before, after, participation) => {
          const store = openStore({ path: ':memory:', clock });
          try {
            // The reference: the same engine with no ledger at all (a backtest's).
            const reference = new MatchingEngine(engineOptions(participation));
            reference.createAccount({ apiKey: KEY, balances: FUNDING });
            const persisted = open(store, participation);
            expect(persisted.opened.resumed).toBe(false);
            const refState = { last: 6_000_000 };
            const state = { last: 6_000_000 };
            for (const e of [reference, persisted.engine]) e.onPrice('BTCUSDT', 60_000, T0);
            run(reference, before, 1, refState);
            run(persisted.engine, before, 1, state);
            expect(view(persisted.engine)).toEqual(view(reference));
            // A clean stop writes a checkpoint (the last prices of ticks that changed nothing).
            persisted.opened.ledger.checkpoint();

            const restored = open(store, participation);
            expect(restored.opened.resumed).toBe(true);
            expect(view(restored.engine)).toEqual(view(reference));
            run(reference, after, before.length + 1, refState);
            run(restored.engine, after, before.length + 1, state);
            expect(view(restored.engine)).toEqual(view(reference));

            // Again, without a checkpoint (kill -9): every order, fill and balance is there; only the last price
            // of ticks that changed nothing may be older.
            const again = open(store, participation).engine;
            const { market: _m1, ...rest } = view(again);
            const { market: _m2, ...expected } = view(reference);
            expect(rest).toEqual(expected);
          } finally {
            store.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('resumes an account of many fills reading only what matching needs, and answers its history from the database', () => {
    const path = join(tempDir('paper-ledger'), 'bot.db');
    // Order i (1..2000) filled by fill i at FIRST + (i - 1) minutes, written straight into SQLite.
    const FIRST = Date.parse('2022-01-01T00:00:00Z');
    writeOldJournal(path, { fills: 2_000, schema: LATEST_VERSION, venue: 'paper' });
    const store = openStore({ path, clock });
    try {
      const { engine, opened } = open(store, false);
      expect(opened).toMatchObject({ resumed: true, latest: FIRST + 1_999 * 60_000 });
      expect(engine.openOrders(KEY)).toEqual([]);
      expect(engine.lastFillId).toBe(2_000);
      const ids = (records: { displayingId: string | number }[]) => records.map((r) => Number(r.displayingId));
      expect(ids(engine.tradeHistory(KEY, { pageSize: 3 }))).toEqual([2_000, 1_999, 1_998]);
      expect(ids(engine.orderHistory(KEY, { pageSize: 100, page: 20 })).slice(-2)).toEqual([2, 1]);
      expect(ids(engine.tradeHistory(KEY, { side: 'SELL', timeFrom: iso(FIRST + 1_990 * 60_000) }))).toEqual([
        2_000, 1_998, 1_996, 1_994, 1_992,
      ]);
      expect(refusal(engine, 7)).toBe('ORDER_NOT_OPEN: order 7 on BTCUSDT is already FILLED');
      // Read from the database when asked, not from a copy taken at the resume.
      store.db.prepare("UPDATE paper_fills SET price = '12345.67' WHERE id = 1_999").run();
      expect(engine.tradeHistory(KEY, { pageSize: 2 })[1]).toMatchObject({ displayingId: '1999', price: 12345.67 });
      // The ids go on after the stored ones.
      engine.onPrice('BTCUSDT', 20_000, FIRST + 2_000 * 60_000);
      expect(
        engine.placeOrder(KEY, { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.001' }),
      ).toMatchObject({
        displayingId: 2_001,
        status: 'FILLED',
      });
      expect(engine.tradeHistory(KEY, { pageSize: 1 })[0]).toMatchObject({ displayingId: '2001', orderId: 2_001 });
    } finally {
      store.close();
    }
  });

  it('funds a new account once, refuses the other kind of data, and keeps the funding it started with', () => {
    const store = openStore({ path: ':memory:', clock });
    try {
      const first = open(store, false);
      expect(first.opened.resumed).toBe(false);
      first.engine.onPrice('BTCUSDT', 60_000, T0);
      first.engine.placeOrder(KEY, { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.5' });
      const engine = new MatchingEngine();
      let err: unknown;
      try {
        openPaperExchange(store, engine, { data: 'live', apiKey: KEY, funding: {}, clock, dbPath: 'data/x.db' });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems[0]).toMatch(
        /^DB_PATH: data\/x\.db holds a paper account trading on recorded data; this run is on live prices\. Set PAPER_FRESH=true/,
      );
      const again = openPaperExchange(store, new MatchingEngine(), {
        data: 'recording',
        apiKey: KEY,
        funding: { USDT: '1' },
        clock,
        dbPath: ':memory:',
      });
      expect(again).toMatchObject({ resumed: true, funding: FUNDING });
      expect(store.paper.summary()).toMatchObject({ data: 'recording', orders: 1, openOrders: 0, fills: 1 });
    } finally {
      store.close();
    }
  });
});
