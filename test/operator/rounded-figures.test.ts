/**
 * What the operator layer hands every face (the API, the chat, the page): amounts rounded to the pair's
 * precision where the daemon knows the pair, computed exactly (no float on the way), the journal untouched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { D } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import type { FillRow } from '../../src/store/fills.js';
import { newOrderRow } from '../../src/store/order-journal.js';
import { openStore, type Store } from '../../src/store/store.js';
import { storeQueries } from '../support/store-queries.js';

const BTCUSDT = pairRulesFrom(DEFAULT_PAIRS[0]!); // tick 0.01, base precision 6, quote precision 2
const NOW = Date.now();

let dir: string;
let store: Store;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rounded-figures-'));
  store = openStore({ path: join(dir, 'bot.db'), clock: { now: () => NOW }, synchronous: 'NORMAL' });
  store.orders.insert(
    newOrderRow({
      localId: 'g-1',
      instance: 'grid',
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      status: 'FILLED',
      createdAt: NOW,
    }),
  );
  const fill = (
    key: string,
    side: 'BUY' | 'SELL',
    price: string,
    qty: string,
    fee: string,
    feeIn: 'base' | 'quote',
  ): FillRow => ({
    fillKey: key,
    orderLocalId: 'g-1',
    instance: 'grid',
    symbol: 'BTCUSDT',
    side,
    price,
    qty,
    fee,
    feeAsset: feeIn === 'base' ? 'BTC' : 'USDT',
    feeIn,
    time: NOW - 60_000,
    source: 'delta',
    delivered: true,
    recordedAt: NOW,
  });
  // An executedQty-delta fill's price is an average: 100.123456789… (more digits than the tick).
  store.fills.insert(fill('f1', 'BUY', '100.1234567891234', '0.0010000004', '0.00000100000004', 'base'));
  store.fills.insert(fill('f2', 'BUY', '101', '0.002', '0.00202', 'quote'));
  store.fills.insert(fill('f3', 'SELL', '100', '0.001', '0.0001', 'quote'));
  store.prices.put({ symbol: 'BTCUSDT', price: '110.5', time: NOW }, NOW);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const places = (text: string) => (text.split('.')[1] ?? '').length;

describe('figures the operator layer shows', () => {
  it("are rounded to the pair's precision: status, fills, PnL series and balances", () => {
    const read = storeQueries(store, dir, {
      rules: { BTCUSDT },
      balances: [
        { asset: 'USDT', free: new D('899.123456789'), locked: new D('100') },
        { asset: 'BTC', free: new D('0.0019999996'), locked: new D('0') },
        { asset: 'XYZ', free: new D('1.123456789123'), locked: new D('0') },
      ],
    });
    const grid = read.instances().find((i) => i.instance === 'grid')!;
    expect(places(grid.position.quantity)).toBeLessThanOrEqual(6);
    expect(places(grid.position.averagePrice)).toBeLessThanOrEqual(2);
    expect(places(grid.realisedPnl)).toBeLessThanOrEqual(2);
    // The rounding is of the exact figure: the journal's fold keeps every digit.
    const exact = store.fills.positions.tracker('grid').position;
    expect(grid.realisedPnl).toBe(exact.realisedPnl.toDecimalPlaces(2).toFixed());
    expect(exact.averagePrice.decimalPlaces()).toBeGreaterThan(10);

    const fills = read.fills({ limit: 10 }).items;
    expect(fills.find((f) => f.fillKey === 'f1')).toMatchObject({
      price: '100.12',
      quantity: '0.001',
      fee: '0.000001',
    });
    expect(fills.find((f) => f.fillKey === 'f2')).toMatchObject({ price: '101', quantity: '0.002', fee: '0' });

    for (const p of read.pnl('grid').grid!)
      for (const v of [p.realised, p.unrealised, p.total]) expect(places(v)).toBeLessThanOrEqual(2);

    expect(read.balances()).toEqual([
      { asset: 'USDT', free: '899.12', locked: '100' },
      { asset: 'BTC', free: '0.002', locked: '0' },
      // An asset no traded pair names: 8 places.
      { asset: 'XYZ', free: '1.12345679', locked: '0' },
    ]);
  });

  it('fall back to 8 places for a pair the daemon has not loaded', () => {
    const read = storeQueries(store, dir);
    const grid = read.instances().find((i) => i.instance === 'grid')!;
    expect(places(grid.position.averagePrice)).toBe(8);
    expect(read.fills({ limit: 10 }).items.find((f) => f.fillKey === 'f1')).toMatchObject({
      price: '100.12345679',
      quantity: '0.001',
    });
  });
});
