import { describe, expect, it } from 'vitest';
import { BalancesSchema } from '../../src/wire/schemas.js';
import type { MatchingEngine } from '../../src/sim/matching-engine.js';
import { engineAt, expectReject, KEY, place, T0 } from './engine-fixture.js';

const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Minute i (1..6): order i. Odd ids BUY BTCUSDT at 59000 (resting, 1 and 5 canceled at minute 7),
 * even ids SELL MARKET on BTCUSDT (filled at once), id 6 a BTCUSDC MARKET BUY.
 */
function sixOrders(): MatchingEngine {
  const e = engineAt();
  e.onPrice('BTCUSDC', 60000, T0);
  for (let i = 1; i <= 6; i++) {
    e.onPrice('BTCUSDT', 60000, T0 + i * MINUTE);
    if (i === 6) place(e, { symbol: 'BTCUSDC', side: 'BUY', type: 'MARKET', quantity: '0.01' });
    else if (i % 2 === 1) place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '59000' });
    else place(e, { side: 'SELL', type: 'MARKET', quantity: '0.01' });
  }
  e.onPrice('BTCUSDT', 60000, T0 + 7 * MINUTE);
  e.cancelOrder(KEY, 'BTCUSDT', '1');
  e.cancelOrder(KEY, 'BTCUSDT', '5');
  return e;
}

const ids = (records: { displayingId: number | string }[]) => records.map((r) => Number(r.displayingId));

describe('order history', () => {
  it('lists every order newest first, 20 to a page by default, at most 100', () => {
    const e = sixOrders();
    expect(ids(e.orderHistory(KEY))).toEqual([6, 5, 4, 3, 2, 1]);
    for (let i = 0; i < 120; i++) place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '100' });
    expect(ids(e.orderHistory(KEY))).toEqual(Array.from({ length: 20 }, (_, i) => 126 - i));
    expect(ids(e.orderHistory(KEY, { page: 7 }))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(e.orderHistory(KEY, { pageSize: 1000 })).toHaveLength(100);
  });

  it('filters by side, symbol and canceled status', () => {
    const e = sixOrders();
    expect(ids(e.orderHistory(KEY, { side: 'SELL' }))).toEqual([4, 2]);
    expect(ids(e.orderHistory(KEY, { symbol: 'BTCUSDC' }))).toEqual([6]);
    expect(ids(e.orderHistory(KEY, { hideCanceled: true }))).toEqual([6, 4, 3, 2]);
    expect(ids(e.orderHistory(KEY, { symbol: 'BTCUSDT', side: 'BUY', hideCanceled: true }))).toEqual([3]);
  });

  it('filters by creation time, both bounds inclusive', () => {
    const e = sixOrders();
    const between = { timeFrom: iso(T0 + 2 * MINUTE), timeTo: iso(T0 + 4 * MINUTE) };
    expect(ids(e.orderHistory(KEY, between))).toEqual([4, 3, 2]);
    expect(ids(e.orderHistory(KEY, { timeFrom: iso(T0 + 5 * MINUTE + 1) }))).toEqual([6]);
  });

  it('pages after filtering', () => {
    const e = sixOrders();
    expect(ids(e.orderHistory(KEY, { pageSize: 2, page: 1 }))).toEqual([6, 5]);
    expect(ids(e.orderHistory(KEY, { pageSize: 2, page: 3 }))).toEqual([2, 1]);
    expect(ids(e.orderHistory(KEY, { pageSize: 2, page: 4 }))).toEqual([]);
    expect(ids(e.orderHistory(KEY, { hideCanceled: true, pageSize: 3, page: 2 }))).toEqual([2]);
  });

  it('refuses bad paging and times', () => {
    const e = sixOrders();
    expectReject(() => e.orderHistory(KEY, { page: 0 }), 'INVALID_QUERY');
    expectReject(() => e.orderHistory(KEY, { pageSize: 1.5 }), 'INVALID_QUERY');
    expectReject(() => e.tradeHistory(KEY, { timeFrom: 'yesterday' }), 'INVALID_QUERY');
  });
});

describe('trade history', () => {
  it('has one trade per fill, newest first, with the same filters', () => {
    const e = sixOrders();
    const trades = e.tradeHistory(KEY);
    expect(trades.map((t) => [t.orderId, t.symbol, t.side])).toEqual([
      [6, 'BTCUSDC', 'BUY'],
      [4, 'BTCUSDT', 'SELL'],
      [2, 'BTCUSDT', 'SELL'],
    ]);
    expect(trades[0]?.quoteAssetId).toBe(3);
    expect(e.tradeHistory(KEY, { symbol: 'BTCUSDT', pageSize: 1, page: 2 }).map((t) => t.orderId)).toEqual([2]);
    expect(e.tradeHistory(KEY, { side: 'BUY' }).map((t) => t.orderId)).toEqual([6]);
    expect(e.tradeHistory(KEY, { timeTo: iso(T0 + 3 * MINUTE) }).map((t) => t.orderId)).toEqual([2]);
    expect(e.tradeHistory(KEY, { hideCanceled: true })).toHaveLength(3);
  });
});

describe('reads since a time', () => {
  /** An engine on a clock the test sets: orders 1-4 at minutes 1-4, MARKET SELLs filled at once. */
  function clocked() {
    let now = T0;
    const e = engineAt(60000, { clock: { now: () => now } });
    const at = (minute: number) => {
      now = T0 + minute * MINUTE;
      e.onPrice('BTCUSDT', 60000, now);
      place(e, { side: 'SELL', type: 'MARKET', quantity: '0.01' });
    };
    for (const minute of [1, 2, 3, 4]) at(minute);
    return { e, at };
  }
  const since = (minute: number) => ({ timeFrom: iso(T0 + minute * MINUTE) });

  it('returns what is newer than timeFrom', () => {
    const { e } = clocked();
    expect(ids(e.orderHistory(KEY, since(3)))).toEqual([4, 3]);
    expect(e.tradeHistory(KEY, since(3)).map((t) => t.orderId)).toEqual([4, 3]);
    expect(ids(e.orderHistory(KEY, { ...since(2), pageSize: 2, page: 2 }))).toEqual([2]);
  });

  it('still finds every match after the clock went back (a wall clock set back), not only the newest run of them', () => {
    const { e, at } = clocked();
    at(0.5); // order 5, made at minute 0.5, after order 4 of minute 4
    expect(ids(e.orderHistory(KEY, since(3)))).toEqual([4, 3]);
    expect(e.tradeHistory(KEY, since(3)).map((t) => t.orderId)).toEqual([4, 3]);
    expect(ids(e.orderHistory(KEY, since(0)))).toEqual([5, 4, 3, 2, 1]);
  });
});

describe('open orders and balances', () => {
  it('lists open orders oldest first, of one pair or all, and refuses an unknown pair', () => {
    const e = sixOrders();
    place(e, { symbol: 'BTCUSDC', side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '50000' });
    expect(ids(e.openOrders(KEY))).toEqual([3, 7]);
    expect(ids(e.openOrders(KEY, 'BTCUSDC'))).toEqual([7]);
    expectReject(() => e.openOrders(KEY, 'NOPE'), 'UNKNOWN_SYMBOL');
  });

  it('serves the spot wallet by currency id: value is free plus locked', () => {
    const e = engineAt();
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.5', price: '50000' });
    const spot = e.balances(KEY);
    expect(BalancesSchema.parse(spot)).toEqual(spot);
    expect(spot).toEqual({
      '1': { value: 2, locked_value: 0, type: 0 },
      '2': { value: 100000, locked_value: 25000, type: 0 },
      '3': { value: 50000, locked_value: 0, type: 0 },
      '4': { value: 0, locked_value: 0, type: 0 },
    });
    expect(e.balances(KEY, { currency: 2 })).toEqual({ '2': { value: 100000, locked_value: 25000, type: 0 } });
    expect(e.balances(KEY, { type: 2, currency: 1 })).toEqual({ '1': { value: 0, locked_value: 0, type: 2 } });
    expectReject(() => e.balances(KEY, { type: 1 }), 'INVALID_QUERY');
  });
});
