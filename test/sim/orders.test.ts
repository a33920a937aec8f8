import { describe, expect, it } from 'vitest';
import { OrderRecordSchema, TradeRecordSchema } from '../../src/wire/schemas.js';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { bal, engineAt, KEY, place, T0 } from './engine-fixture.js';

describe('LIMIT', () => {
  it('rests below the market, locks price × quantity of quote, and shows as NEW in open orders', () => {
    const e = engineAt();
    const rec = place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    expect(rec).toMatchObject({
      displayingId: 1,
      status: 'NEW',
      type: 'LIMIT',
      price: 59000,
      stopPrice: 0,
      limitPrice: 59000,
      quantity: 0.1,
      executedQty: 0,
      quoteQty: 5900,
      createdAt: new Date(T0).toISOString(),
      baseAssetId: 1,
      quoteAssetId: 2,
    });
    expect(OrderRecordSchema.safeParse(rec).success).toBe(true);
    expect(bal(e, 'USDT')).toEqual(['94100', '5900']);
    expect(e.openOrders(KEY).map((o) => o.displayingId)).toEqual([1]);
  });

  it('does not fill on touch but fills at its own price one tick through, with the maker fee in base', () => {
    const e = engineAt();
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    e.onPrice('BTCUSDT', 59000, T0 + 1000);
    expect(e.openOrders(KEY)).toHaveLength(1);
    e.onPrice('BTCUSDT', 58999.99, T0 + 2000);
    expect(e.openOrders(KEY)).toHaveLength(0);
    expect(bal(e, 'USDT')).toEqual(['94100', '0']);
    expect(bal(e, 'BTC')).toEqual(['2.0999', '0']);
    const [trade] = e.tradeHistory(KEY);
    expect(trade).toEqual({
      _id: 'sim-trade-1',
      symbol: 'BTCUSDT',
      side: 'BUY',
      displayingId: '1',
      orderId: 1,
      price: 59000,
      baseQty: 0.1,
      quoteQty: 5900,
      flag: 'BUY_ORDER_FILL',
      createdAt: new Date(T0 + 2000).toISOString(),
      baseAssetId: 1,
      quoteAssetId: 2,
      feeMetadata: { feeValue: 0.0001, feeAssetId: 1, feeAsset: 'BTC', feeRatio: 0.001, quoteQty: 5.9 },
    });
    expect(TradeRecordSchema.safeParse(trade).success).toBe(true);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'FILLED', executedQty: 0.1, executedPrice: 59000 });
  });

  it('does not fill on touch even when another order makes the tick cross something', () => {
    const e = engineAt();
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    place(e, { side: 'SELL', type: 'STOP_LIMIT', quantity: '0.1', stopPrice: '59000', price: '58000' });
    e.onPrice('BTCUSDT', 59000, T0 + 1);
    expect(e.tradeHistory(KEY).map((t) => [t.orderId, t.price])).toEqual([[2, 59000]]);
    expect(e.openOrders(KEY).map((o) => o.displayingId)).toEqual([1]);
  });

  it('fills on touch with fillThroughTicks 0, and needs n ticks through with n > 1', () => {
    const touch = engineAt(60000, { fillThroughTicks: 0 });
    place(touch, { side: 'SELL', type: 'LIMIT', quantity: '1', price: '60500' });
    touch.onPrice('BTCUSDT', 60500, T0 + 1);
    expect(touch.openOrders(KEY)).toHaveLength(0);

    const three = engineAt(60000, { fillThroughTicks: 3 });
    place(three, { side: 'SELL', type: 'LIMIT', quantity: '1', price: '60500' });
    three.onPrice('BTCUSDT', 60500.02, T0 + 1);
    expect(three.openOrders(KEY)).toHaveLength(1);
    three.onPrice('BTCUSDT', 60500.03, T0 + 2);
    expect(three.openOrders(KEY)).toHaveLength(0);
    expect(three.tradeHistory(KEY)[0]).toMatchObject({ price: 60500, quoteQty: 60500 });
  });

  it('a SELL fills at its limit even when the price gaps far through it, fee taken in quote', () => {
    const e = engineAt();
    place(e, { side: 'SELL', type: 'LIMIT', quantity: '0.5', price: '61000' });
    expect(bal(e, 'BTC')).toEqual(['1.5', '0.5']);
    e.onPrice('BTCUSDT', 65000, T0 + 1);
    expect(e.tradeHistory(KEY)[0]).toMatchObject({ price: 61000, quoteQty: 30500, flag: 'SELL_ORDER_FILL' });
    expect(bal(e, 'BTC')).toEqual(['1.5', '0']);
    expect(bal(e, 'USDT')).toEqual(['130469.5', '0']);
  });

  it('a marketable BUY fills at once at the last price as a taker and releases the unused lock', () => {
    const e = engineAt(60000, { makerFee: '0.0004', takerFee: '0.002' });
    const rec = place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '61000' });
    expect(rec).toMatchObject({ status: 'FILLED', executedPrice: 60000, executedQuoteQty: 6000 });
    expect(rec.feeMetadata).toMatchObject({ value: 0.0002, feeRatio: 0.002, asset: 'BTC', executed: true });
    expect(bal(e, 'USDT')).toEqual(['94000', '0']);
    expect(bal(e, 'BTC')).toEqual(['2.0998', '0']);
  });

  it('slippage moves a taker fill against it, onto the tick, never past its limit', () => {
    const e = engineAt(60000, { slippageBps: 10 });
    expect(place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '60030' }).executedPrice).toBe(60030);
    expect(place(e, { side: 'BUY', type: 'MARKET', quantity: '0.01' }).executedPrice).toBe(60060);
    expect(place(e, { side: 'SELL', type: 'MARKET', quantity: '0.01' }).executedPrice).toBe(59940);
    e.onPrice('BTCUSDT', 333.33, T0 + 1);
    // 333.33 × 0.999 = 332.99667: a SELL rounds down onto the tick
    expect(place(e, { side: 'SELL', type: 'MARKET', quantity: '0.01' }).executedPrice).toBe(332.99);
  });
});

describe('MARKET', () => {
  it('fills a quantity at the last price with the taker fee', () => {
    const e = engineAt();
    const rec = place(e, { side: 'SELL', type: 'MARKET', quantity: '0.25' });
    expect(rec).toMatchObject({ status: 'FILLED', price: 0, limitPrice: 0, stopPrice: 0, executedPrice: 60000 });
    expect(rec.quoteQty).toBe(15000);
    expect(bal(e, 'USDT')).toEqual(['114985', '0']);
    expect(bal(e, 'BTC')).toEqual(['1.75', '0']);
  });

  it('spends a quote amount with useQuoteQty, quantity rounded down to the base precision', () => {
    const e = engineAt(60000);
    const rec = place(e, { side: 'BUY', type: 'MARKET', quoteOrderQty: '1000', useQuoteQty: true });
    expect(rec).toMatchObject({ quantity: 0.016666, executedQty: 0.016666, quoteQty: 1000, useQuoteQty: true });
    expect(rec.executedQuoteQty).toBe(999.96);
    expect(bal(e, 'USDT')).toEqual(['99000.04', '0']);
    expect(bal(e, 'BTC')).toEqual(['2.016649334', '0']);
    const sell = place(e, { side: 'SELL', type: 'MARKET', quoteOrderQty: '100', useQuoteQty: true });
    expect(sell.executedQty).toBe(0.001666);
  });

  it('refuses when the free balance does not cover the fill', () => {
    const e = engineAt();
    const before = e.revision;
    expect(() => place(e, { side: 'BUY', type: 'MARKET', quantity: '1.7' })).toThrow(/needs 102000 USDT free/);
    expect(e.revision).toBe(before);
    expect(bal(e, 'USDT')).toEqual(['100000', '0']);
  });
});

describe('STOP_LIMIT', () => {
  it('waits below its stop, then triggers and fills at the last price as a taker, bounded by its limit', () => {
    const e = engineAt();
    const rec = place(e, { side: 'BUY', type: 'STOP_LIMIT', quantity: '0.1', stopPrice: '61000', price: '61100' });
    expect(rec).toMatchObject({ status: 'NEW', stopPrice: 61000, price: 61100, limitPrice: 61100 });
    expect(bal(e, 'USDT')).toEqual(['93890', '6110']);
    e.onPrice('BTCUSDT', 60999.99, T0 + 1);
    expect(e.openOrders(KEY)).toHaveLength(1);
    e.onPrice('BTCUSDT', 61050, T0 + 2);
    expect(e.tradeHistory(KEY)[0]).toMatchObject({ price: 61050, baseQty: 0.1 });
    expect(e.tradeHistory(KEY)[0]?.feeMetadata.feeRatio).toBe(0.001);
    expect(bal(e, 'USDT')).toEqual(['93895', '0']);
  });

  it('rests unfilled when the price gaps past its limit, and later fills only by the limit rule', () => {
    const e = engineAt();
    place(e, { side: 'SELL', type: 'STOP_LIMIT', quantity: '1', stopPrice: '59000', price: '58900' });
    const rev = e.revision;
    e.onPrice('BTCUSDT', 58000, T0 + 1);
    expect(e.revision).toBeGreaterThan(rev);
    expect(e.tradeHistory(KEY)).toHaveLength(0);
    expect(e.openOrders(KEY)[0]).toMatchObject({ status: 'NEW' });
    // Back above the stop: a triggered stop does not re-arm; it is a SELL limit at 58900 now.
    e.onPrice('BTCUSDT', 58900, T0 + 2);
    expect(e.tradeHistory(KEY)).toHaveLength(0);
    e.onPrice('BTCUSDT', 58950, T0 + 3);
    expect(e.tradeHistory(KEY)[0]).toMatchObject({ price: 58900, baseQty: 1 });
    expect(bal(e, 'BTC')).toEqual(['1', '0']);
    expect(bal(e, 'USDT')).toEqual(['158841.1', '0']);
  });
});

describe('OCO', () => {
  const sellBracket = {
    side: 'SELL',
    type: 'OCO',
    quantity: '0.5',
    price: '62000',
    stopPrice: '58000',
    limitPrice: '57900',
  };

  it('locks the SELL quantity once for both legs', () => {
    const e = engineAt();
    const rec = place(e, sellBracket);
    expect(rec).toMatchObject({ type: 'OCO', price: 62000, stopPrice: 58000, limitPrice: 57900, executedType: null });
    expect(bal(e, 'BTC')).toEqual(['1.5', '0.5']);
  });

  it('a filled limit leg cancels the stop leg', () => {
    const e = engineAt();
    const { displayingId } = place(e, sellBracket);
    e.onPrice('BTCUSDT', 62000.01, T0 + 1);
    e.onPrice('BTCUSDT', 50000, T0 + 2);
    const trades = e.tradeHistory(KEY);
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ orderId: displayingId, price: 62000, baseQty: 0.5 });
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'FILLED', executedType: 'LIMIT' });
    expect(bal(e, 'BTC')).toEqual(['1.5', '0']);
  });

  it('a triggered stop leg cancels the limit leg and fills within its limit', () => {
    const e = engineAt();
    place(e, sellBracket);
    e.onPrice('BTCUSDT', 57950, T0 + 1);
    e.onPrice('BTCUSDT', 70000, T0 + 2);
    const trades = e.tradeHistory(KEY);
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ price: 57950, baseQty: 0.5 });
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'FILLED', executedType: 'STOP_LIMIT' });
  });

  it('a BUY locks the larger leg price and releases the rest when the cheaper leg fills', () => {
    const e = engineAt();
    place(e, { side: 'BUY', type: 'OCO', quantity: '0.1', price: '55000', stopPrice: '61000', limitPrice: '62000' });
    expect(bal(e, 'USDT')).toEqual(['93800', '6200']);
    e.onPrice('BTCUSDT', 54999, T0 + 1);
    e.onPrice('BTCUSDT', 61500, T0 + 2);
    expect(e.tradeHistory(KEY)).toHaveLength(1);
    expect(bal(e, 'USDT')).toEqual(['94500', '0']);
    expect(bal(e, 'BTC')).toEqual(['2.0999', '0']);
  });

  it('a BUY stop leg gapped past its limit rests without filling', () => {
    const e = engineAt();
    place(e, { side: 'BUY', type: 'OCO', quantity: '0.1', price: '55000', stopPrice: '61000', limitPrice: '61500' });
    e.onPrice('BTCUSDT', 62000, T0 + 1);
    expect(e.tradeHistory(KEY)).toHaveLength(0);
    expect(e.openOrders(KEY)[0]).toMatchObject({ executedType: 'STOP_LIMIT' });
    // The limit leg at 55000 is gone: only the stop leg's 61500 can fill now.
    e.onPrice('BTCUSDT', 54000, T0 + 2);
    expect(e.tradeHistory(KEY)[0]).toMatchObject({ price: 61500 });
  });
});

describe('partial fills by traded volume', () => {
  it('takes rate × volume per tick, best price first, and goes PARTIALLY_FILLED', () => {
    const e = engineAt(60000, { participationRate: '0.5' });
    place(e, { side: 'SELL', type: 'LIMIT', quantity: '1', price: '60100' });
    place(e, { side: 'SELL', type: 'LIMIT', quantity: '1', price: '60050' });
    e.onPrice('BTCUSDT', 60200, T0 + 1, 0.6);
    expect(e.tradeHistory(KEY).map((t) => [t.orderId, t.baseQty])).toEqual([[2, 0.3]]);
    expect(e.openOrders(KEY).map((o) => [o.displayingId, o.status])).toEqual([
      [1, 'NEW'],
      [2, 'PARTIALLY_FILLED'],
    ]);
    e.onPrice('BTCUSDT', 60200, T0 + 2, 4);
    expect(e.openOrders(KEY)).toEqual([]);
    expect(e.orderHistory(KEY).map((o) => [o.displayingId, o.executedQty, o.status])).toEqual([
      [2, 1, 'FILLED'],
      [1, 1, 'FILLED'],
    ]);
    expect(bal(e, 'BTC')).toEqual(['0', '0']);
  });

  it('fills in full when no volume is given', () => {
    const e = engineAt(60000, { participationRate: '0.1' });
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '1', price: '59000' });
    e.onPrice('BTCUSDT', 58000, T0 + 1);
    expect(e.orderHistory(KEY)[0]?.status).toBe('FILLED');
  });
});

describe('cancel', () => {
  it('releases the lock, records CANCELED, and the order never fills afterwards', () => {
    const e = engineAt();
    const { displayingId } = place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    e.onPrice('BTCUSDT', 59500, T0 + 5000);
    const rec = e.cancelOrder(KEY, 'BTCUSDT', String(displayingId));
    expect(rec).toMatchObject({ status: 'CANCELED', updatedAt: new Date(T0 + 5000).toISOString() });
    expect(bal(e, 'USDT')).toEqual(['100000', '0']);
    e.onPrice('BTCUSDT', 50000, T0 + 6000);
    expect(e.tradeHistory(KEY)).toHaveLength(0);
    expect(e.openOrders(KEY)).toHaveLength(0);
  });

  it('releases the remainder of a partly filled order', () => {
    const e = engineAt(60000, { participationRate: '1' });
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '1', price: '59000' });
    e.onPrice('BTCUSDT', 58000, T0 + 1, 0.25);
    expect(bal(e, 'USDT')).toEqual(['41000', '44250']);
    e.cancelOrder(KEY, 'BTCUSDT', 1);
    expect(bal(e, 'USDT')).toEqual(['85250', '0']);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'CANCELED', executedQty: 0.25 });
  });
});

describe('engine time, tickers and revision', () => {
  it('stamps records with the injected clock when given', () => {
    const e = new MatchingEngine({ clock: { now: () => T0 + 42 } });
    e.createAccount({ apiKey: KEY, balances: { USDT: '1000' } });
    expect(place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '100' }).createdAt).toBe(
      new Date(T0 + 42).toISOString(),
    );
  });

  it('serves s, p, t and asset codes, keeps a whole ticker, and lists only pairs with a price', () => {
    const e = engineAt();
    expect(e.tickers()).toEqual([{ s: 'BTCUSDT', p: 60000, t: T0, b: 'BTC', q: 'USDT', bi: 1, qi: 2 }]);
    e.onTicker({ s: 'BTCUSDC', p: 59990.5, t: T0 + 9, h: 61000, vb: 12 }, undefined);
    expect(e.tickers('BTCUSDC')).toEqual([
      { s: 'BTCUSDC', p: 59990.5, t: T0 + 9, h: 61000, vb: 12, b: 'BTC', q: 'USDC', bi: 1, qi: 3 },
    ]);
    expect(e.lastPrice('ETHUSDT')).toBeUndefined();
  });

  it('bumps the revision on place, fill and cancel, not on a tick that crosses nothing', () => {
    const e = engineAt();
    const r0 = e.revision;
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    place(e, { side: 'SELL', type: 'LIMIT', quantity: '0.1', price: '61000' });
    const r1 = e.revision;
    expect(r1).toBe(r0 + 2);
    for (const p of [59000.01, 60000, 60999.99, 61000]) e.onPrice('BTCUSDT', p, T0 + 1);
    expect(e.revision).toBe(r1);
    e.onPrice('BTCUSDT', 61000.01, T0 + 2);
    expect(e.revision).toBeGreaterThan(r1);
    const r2 = e.revision;
    e.cancelOrder(KEY, 'BTCUSDT', '1');
    expect(e.revision).toBeGreaterThan(r2);
  });

  it('keeps pairs, assets and their ids as documented', () => {
    const e = new MatchingEngine();
    expect(e.assets()).toEqual(DEFAULT_ASSETS);
    const [btcusdt] = e.pairConfigs('BTCUSDT');
    expect(btcusdt).toMatchObject({ status: 'TRADING', baseAssetId: 1, quoteAssetId: 2, baseAssetPrecision: 6 });
    expect(btcusdt?.filters).toContainEqual({
      filterType: 'PRICE_FILTER',
      minPrice: 0.01,
      maxPrice: 1000000,
      tickSize: 0.01,
    });
    expect(() => new MatchingEngine({ pairs: [simPairConfig({ id: 9, code: 'XYZ' }, DEFAULT_ASSETS[1]!)] })).toThrow(
      /XYZ.*not a known asset/,
    );
  });

  it('lists a pair after the start: its new asset on every account (its id, or a free one when taken)', () => {
    const e = engineAt();
    const usdt = DEFAULT_ASSETS[1]!;
    const r0 = e.revision;
    // SOL brings the id 4, which ETH has: SOL gets a free one; the quote is the known USDT whatever id it names.
    const listed = e.listPair(simPairConfig({ id: 4, code: 'SOL' }, { ...usdt, id: 99 }));
    expect(e.revision).toBeGreaterThan(r0);
    expect(listed).toMatchObject({ symbol: 'SOLUSDT', baseAssetId: 5, quoteAssetId: usdt.id });
    expect(e.pairConfigs('SOLUSDT')).toEqual([listed]);
    expect(e.assets()).toContainEqual({ id: 5, code: 'SOL' });
    expect(bal(e, 'SOL')).toEqual(['0', '0']);
    e.onPrice('SOLUSDT', 20, T0 + 1);
    place(e, { symbol: 'SOLUSDT', side: 'BUY', type: 'MARKET', quantity: '2' });
    expect(bal(e, 'SOL')[0]).toBe('1.998');
    expect(() => e.listPair(listed)).toThrow(/SOLUSDT is defined twice/);
  });
});
