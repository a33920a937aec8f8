/**
 * Equity per quote asset (the page's equity table, GET /api/v1/equity), against a hand computation: two
 * instances in USDT and one in USDC over a temp-file journal, never summed across quotes.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { D } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import type { FillRow } from '../../src/store/fills.js';
import { newOrderRow } from '../../src/store/order-journal.js';
import { openStore, type Store } from '../../src/store/store.js';
import { storeQueries } from '../support/store-queries.js';
import { tempDir } from '../support/temp-dir.js';

const NOW = Date.UTC(2024, 4, 2, 12, 0, 0);
const [BTCUSDT, BTCUSDC] = DEFAULT_PAIRS.slice(0, 2).map((p) => pairRulesFrom(p));

let dir: string;
let store: Store;

/** A filled order of the instance and its one fill. */
function fill(instance: string, symbol: string, key: string, side: 'BUY' | 'SELL', price: string, qty: string) {
  store.orders.insert(
    newOrderRow({
      localId: key,
      instance,
      symbol,
      side,
      type: 'LIMIT',
      status: 'FILLED',
      price,
      quantity: qty,
      filledQty: qty,
      exchangeId: key,
      createdAt: NOW - 60_000,
    }),
  );
  const row: FillRow = {
    fillKey: key,
    orderLocalId: key,
    instance,
    symbol,
    side,
    price,
    qty,
    fee: '0',
    feeAsset: undefined,
    feeIn: 'quote',
    source: 'trade',
    delivered: true,
    time: NOW - 60_000,
    recordedAt: NOW - 60_000,
  };
  store.fills.insert(row);
}

beforeEach(() => {
  dir = tempDir('equity');
  store = openStore({ path: join(dir, 'bot.db'), clock: { now: () => NOW } });
  for (const [name, symbol] of [
    ['a', 'BTCUSDT'],
    ['b', 'BTCUSDT'],
    ['c', 'BTCUSDC'],
  ] as const)
    store.events.record(NOW - 120_000, name, 'started', { symbol });
  // a: bought 2 at 100, sold 1 at 120: realised 20, holds 1 (at 110: unrealised 10).
  fill('a', 'BTCUSDT', 'a1', 'BUY', '100', '2');
  fill('a', 'BTCUSDT', 'a2', 'SELL', '120', '1');
  // b: bought 0.5 at 116: unrealised -3 at 110.
  fill('b', 'BTCUSDT', 'b1', 'BUY', '116', '0.5');
  // c: bought 1 at 10 in USDC: unrealised 2 at 12.
  fill('c', 'BTCUSDC', 'c1', 'BUY', '10', '1');
  store.prices.put({ symbol: 'BTCUSDT', price: '110', time: NOW - 1000 }, NOW);
  store.prices.put({ symbol: 'BTCUSDC', price: '12', time: NOW - 1000 }, NOW);
});

afterEach(() => {
  store.close();
});

describe('equity per quote asset', () => {
  it('is the quote balance plus the instances’ holdings at the last price, with their PnL and return, per quote', () => {
    const read = storeQueries(store, dir, {
      balances: [
        { asset: 'USDT', free: D(850), locked: D(50) },
        { asset: 'USDC', free: D(50), locked: D(0) },
        { asset: 'BTC', free: D(2.5), locked: D(0) },
      ],
      rules: { BTCUSDT: BTCUSDT!, BTCUSDC: BTCUSDC! },
    });
    expect(read.equity()).toEqual([
      {
        quoteAsset: 'USDC',
        instances: ['c'],
        balance: '50',
        inPositions: '12',
        equity: '62',
        realisedPnl: '0',
        unrealisedPnl: '2',
        pnl: '2',
        // 2 over the 60 there was before.
        returnPct: '3.33',
      },
      {
        quoteAsset: 'USDT',
        instances: ['a', 'b'],
        balance: '900',
        // 1.5 BTC held by a and b at 110 (the account's other BTC is not theirs).
        inPositions: '165',
        equity: '1065',
        realisedPnl: '20',
        unrealisedPnl: '7',
        pnl: '27',
        // 27 over 1038.
        returnPct: '2.6',
      },
    ]);
  });

  it('names no equity nor return while the quote’s balance was not read, only the PnL', () => {
    const read = storeQueries(store, dir, { rules: { BTCUSDT: BTCUSDT!, BTCUSDC: BTCUSDC! } });
    const usdt = read.equity().find((q) => q.quoteAsset === 'USDT');
    expect(usdt).toMatchObject({ balance: null, equity: null, returnPct: null, pnl: '27' });
  });
});
