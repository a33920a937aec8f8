/**
 * What the operator layer hands every face (the API, the chat, the page): amounts rounded to the pair's
 * precision where the daemon knows the pair, computed exactly (no float on the way), the journal untouched.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { D } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import type { FillRow } from '../../src/store/fills.js';
import { newOrderRow } from '../../src/store/order-journal.js';
import { openStore, type Store } from '../../src/store/store.js';
import { pnlSeries } from '../../src/operator/pnl-series.js';
import { paperAccountLines } from '../../src/status/paper-account-view.js';
import { storeQueries } from '../support/store-queries.js';
import { tempDir } from '../support/temp-dir.js';

const BTCUSDT = pairRulesFrom(DEFAULT_PAIRS[0]!); // tick 0.01, base precision 6, quote precision 2
const NOW = Date.now();

let dir: string;
let store: Store;
beforeEach(() => {
  dir = tempDir('rounded-figures');
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

  it('add up and read whole: PnL totals from their rounded parts, whole milliseconds, fees, paper balances, exits', () => {
    // A replay clock's times have fractions of a millisecond; the fold of these fills leaves a PnL of many digits.
    store.fills.insert({
      fillKey: 'f4',
      orderLocalId: 'g-1',
      instance: 'dca',
      symbol: 'BTCUSDT',
      side: 'BUY',
      price: '22416.38',
      qty: '0.001115',
      fee: '0.000001115',
      feeAsset: 'BTC',
      feeIn: 'base',
      time: NOW - 30_000 + 0.001,
      source: 'trade',
      delivered: true,
      recordedAt: NOW,
    });
    store.prices.put({ symbol: 'BTCUSDT', price: '22390.995', time: NOW }, NOW);
    store.events.record(NOW, 'dca', 'exit-triggered', {
      symbol: 'BTCUSDT',
      reason: 'stop-loss',
      price: 21_300.123456,
      level: 21_299.99999999999,
      entry: '22438.818823529411764705882352941176470588235294117647058823529',
    });
    store.paper.create('recording', NOW);
    store.paper.putAccount({ userId: 1, funding: { USDT: '10000', BTC: '0.5' }, createdAt: NOW });
    store.paper.putBalance({ userId: 1, asset: 'USDT', free: '8991.0142277223', locked: '161.0851025' });
    store.paper.putBalance({ userId: 1, asset: 'BTC', free: '0.50000077', locked: '0.002227' });
    const read = storeQueries(store, dir, { rules: { BTCUSDT } });

    for (const points of Object.values(read.pnl(undefined)))
      for (const p of points) {
        expect(Number.isInteger(p.time), `time ${p.time}`).toBe(true);
        expect(new D(p.realised).plus(p.unrealised).toFixed()).toBe(new D(p.total).toFixed());
      }
    // -8.964 realised and -0.004 open read -8.96 and 0: the total shown is -8.96 (rounded apart, -8.97).
    const fill = (side: 'BUY' | 'SELL', price: string, qty: string, time: number): FillRow => ({
      ...store.fills.forInstance('dca')[0]!,
      side,
      price,
      qty,
      fee: '0',
      time,
    });
    const parts = pnlSeries(
      [fill('BUY', '100', '1', 1), fill('SELL', '82.072', '0.5', 2)],
      { time: 3, price: '99.992' },
      (d) => d.toDecimalPlaces(2).toFixed(),
    );
    expect(parts.at(-1)).toMatchObject({ realised: '-8.96', unrealised: '0', total: '-8.96' });
    const dca = read.pnl('dca').dca!;
    expect(dca.at(-1)).toMatchObject({ realised: '0', unrealised: '-0.05', total: '-0.05' });

    // The day's fees are rounded to the quote's precision before any trade of the pair closed (dca has none).
    for (const row of read.profit('day', 5)) expect(places(row.fees), row.fees).toBeLessThanOrEqual(2);

    // A declared exit's event, as the API lists it: prices to the tick (the journal keeps every digit).
    const exit = read.events({ kind: 'exit-triggered', limit: 1 }).items[0]!;
    expect(exit.data).toMatchObject({ price: '21300.12', level: '21300', entry: '22438.82' });
    expect(store.events.list({ kinds: ['exit-triggered'] })[0]!.data.entry).toHaveLength(63);

    // The paper account's balances, to each asset's precision in the pairs traded.
    const paper = JSON.parse(read.status().json) as { paper: { balances: unknown[]; funding: unknown } };
    expect(paper.paper.balances).toEqual([
      { asset: 'BTC', free: '0.500001', locked: '0.002227' },
      { asset: 'USDT', free: '8991.01', locked: '161.09' },
    ]);
    expect(paper.paper.funding).toEqual({ USDT: '10000', BTC: '0.5' });
    expect(read.status().view.paper && paperAccountLines(read.status().view.paper!, String)[1]).toBe(
      '  balances: BTC 0.500001 (+0.002227 locked), USDT 8991.01 (+161.09 locked)  (funded with USDT 10000, BTC 0.5)',
    );
  });
});
