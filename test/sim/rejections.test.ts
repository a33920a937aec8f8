import { describe, expect, it } from 'vitest';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import { SIM_ERROR_CODES, type SimRejectReason } from '../../src/sim/error-codes.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import type { SimOrderInput } from '../../src/sim/order-input.js';
import { bal, engineAt, expectReject, KEY, place, T0 } from './engine-fixture.js';

const [BTC, USDT, USDC] = DEFAULT_ASSETS as [
  (typeof DEFAULT_ASSETS)[0],
  (typeof DEFAULT_ASSETS)[0],
  (typeof DEFAULT_ASSETS)[0],
];

type Case = [string, Omit<SimOrderInput, 'symbol'> & { symbol?: string }, SimRejectReason];

const cases: Case[] = [
  ['unknown symbol', { symbol: 'DOGEUSDT', side: 'BUY', type: 'LIMIT', quantity: '1', price: '1' }, 'UNKNOWN_SYMBOL'],
  ['unknown type', { side: 'BUY', type: 'ICEBERG', quantity: '1', price: '1' }, 'ORDER_TYPE_NOT_ALLOWED'],
  ['bad side', { side: 'HOLD', type: 'LIMIT', quantity: '1', price: '1' }, 'INVALID_SIDE'],
  ['LIMIT without price', { side: 'BUY', type: 'LIMIT', quantity: '1' }, 'MISSING_FIELD'],
  ['LIMIT with null price', { side: 'BUY', type: 'LIMIT', quantity: '1', price: null }, 'MISSING_FIELD'],
  ['STOP_LIMIT without stopPrice', { side: 'BUY', type: 'STOP_LIMIT', quantity: '1', price: '61000' }, 'MISSING_FIELD'],
  [
    'OCO without limitPrice',
    { side: 'SELL', type: 'OCO', quantity: '1', price: '61000', stopPrice: '59000' },
    'MISSING_FIELD',
  ],
  ['MARKET by quote without quoteOrderQty', { side: 'BUY', type: 'MARKET', useQuoteQty: true }, 'MISSING_FIELD'],
  [
    'LIMIT with stopPrice',
    { side: 'BUY', type: 'LIMIT', quantity: '1', price: '1', stopPrice: '2' },
    'UNEXPECTED_FIELD',
  ],
  [
    'STOP_LIMIT with limitPrice',
    { side: 'BUY', type: 'STOP_LIMIT', quantity: '1', price: '61000', stopPrice: '61000', limitPrice: '1' },
    'UNEXPECTED_FIELD',
  ],
  ['MARKET with price', { side: 'BUY', type: 'MARKET', quantity: '1', price: '60000' }, 'UNEXPECTED_FIELD'],
  [
    'MARKET by quote with quantity',
    { side: 'BUY', type: 'MARKET', quantity: '1', quoteOrderQty: '10', useQuoteQty: true },
    'UNEXPECTED_FIELD',
  ],
  [
    'LIMIT with useQuoteQty',
    { side: 'BUY', type: 'LIMIT', quantity: '1', price: '1', useQuoteQty: true },
    'UNEXPECTED_FIELD',
  ],
  ['zero quantity', { side: 'BUY', type: 'LIMIT', quantity: '0', price: '1' }, 'INVALID_NUMBER'],
  ['negative quantity', { side: 'BUY', type: 'LIMIT', quantity: -1, price: '1' }, 'INVALID_NUMBER'],
  ['exponent text', { side: 'BUY', type: 'LIMIT', quantity: '1e-3', price: '1' }, 'INVALID_NUMBER'],
  ['non-numeric price', { side: 'BUY', type: 'LIMIT', quantity: '1', price: 'abc' }, 'INVALID_NUMBER'],
  ['price off tick', { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000.005' }, 'PRICE_OFF_TICK'],
  [
    'stopPrice off tick',
    { side: 'BUY', type: 'STOP_LIMIT', quantity: '0.1', price: '61000', stopPrice: '61000.001' },
    'PRICE_OFF_TICK',
  ],
  ['price above max', { side: 'SELL', type: 'LIMIT', quantity: '0.1', price: '1000000.01' }, 'PRICE_ABOVE_MAX'],
  [
    'quantity beyond base precision',
    { side: 'BUY', type: 'LIMIT', quantity: '0.0000001', price: '59000' },
    'QUANTITY_PRECISION',
  ],
  [
    'quoteOrderQty beyond quote precision',
    { side: 'BUY', type: 'MARKET', quoteOrderQty: '10.001', useQuoteQty: true },
    'QUANTITY_PRECISION',
  ],
  [
    'quote amount below one step',
    { side: 'BUY', type: 'MARKET', quoteOrderQty: '0.05', useQuoteQty: true },
    'QUANTITY_OUT_OF_BOUNDS',
  ],
  ['BUY beyond free quote', { side: 'BUY', type: 'LIMIT', quantity: '2', price: '59000' }, 'INSUFFICIENT_BALANCE'],
  [
    'SELL beyond free base',
    { side: 'SELL', type: 'LIMIT', quantity: '2.000001', price: '61000' },
    'INSUFFICIENT_BALANCE',
  ],
  [
    'OCO BUY locks the larger leg',
    { side: 'BUY', type: 'OCO', quantity: '1.6', price: '50000', stopPrice: '61000', limitPrice: '63000' },
    'INSUFFICIENT_BALANCE',
  ],
  [
    'BUY stop below last',
    { side: 'BUY', type: 'STOP_LIMIT', quantity: '0.1', price: '59000', stopPrice: '59900' },
    'STOP_WRONG_SIDE',
  ],
  [
    'BUY stop at last',
    { side: 'BUY', type: 'STOP_LIMIT', quantity: '0.1', price: '60000', stopPrice: '60000' },
    'STOP_WRONG_SIDE',
  ],
  [
    'SELL stop above last',
    { side: 'SELL', type: 'STOP_LIMIT', quantity: '0.1', price: '60100', stopPrice: '60100' },
    'STOP_WRONG_SIDE',
  ],
  [
    'OCO SELL stop above last',
    { side: 'SELL', type: 'OCO', quantity: '0.1', price: '62000', stopPrice: '60500', limitPrice: '60400' },
    'STOP_WRONG_SIDE',
  ],
  [
    'OCO SELL price below last',
    { side: 'SELL', type: 'OCO', quantity: '0.1', price: '59000', stopPrice: '58000', limitPrice: '57900' },
    'OCO_PRICE_WRONG_SIDE',
  ],
  [
    'OCO BUY price above last',
    { side: 'BUY', type: 'OCO', quantity: '0.1', price: '60000.01', stopPrice: '61000', limitPrice: '61100' },
    'OCO_PRICE_WRONG_SIDE',
  ],
  [
    'OCO BUY stop below last',
    { side: 'BUY', type: 'OCO', quantity: '0.1', price: '55000', stopPrice: '59000', limitPrice: '59100' },
    'STOP_WRONG_SIDE',
  ],
];

describe('order rejections', () => {
  it.each(cases)('%s', (_name, order, reason) => {
    const e = engineAt();
    const revision = e.revision;
    const err = expectReject(() => place(e, order), reason);
    expect(err.message.length).toBeGreaterThan(10);
    expect(e.revision).toBe(revision);
    expect(e.orderHistory(KEY)).toEqual([]);
    expect(bal(e, 'USDT')).toEqual(['100000', '0']);
    expect(bal(e, 'BTC')).toEqual(['2', '0']);
  });

  it('gives every reason its own stable code', () => {
    const codes = Object.values(SIM_ERROR_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    expect(SIM_ERROR_CODES.UNKNOWN_SYMBOL).toBe(6101);
    expect(SIM_ERROR_CODES.INSUFFICIENT_BALANCE).toBe(6113);
  });

  it('refuses pairs that are not TRADING, types the pair does not allow, and prices below minPrice', () => {
    const e = new MatchingEngine({
      pairs: [
        simPairConfig(BTC, USDT, { status: 'BREAK' }),
        simPairConfig(BTC, USDC, { orderTypes: ['LIMIT', 'MARKET', 'OCO'], ocoAllowed: false, minPrice: 100 }),
      ],
    });
    e.createAccount({ apiKey: KEY, balances: { USDC: '1000' } });
    e.onPrice('BTCUSDC', 60000, T0);
    expectReject(() => place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '100' }), 'PAIR_NOT_TRADING');
    const usdc = { symbol: 'BTCUSDC', side: 'BUY', quantity: '0.01' };
    expectReject(
      () => place(e, { ...usdc, type: 'STOP_LIMIT', price: '61000', stopPrice: '61000' }),
      'ORDER_TYPE_NOT_ALLOWED',
    );
    expectReject(
      () => place(e, { ...usdc, type: 'OCO', price: '50000', stopPrice: '61000', limitPrice: '61000' }),
      'ORDER_TYPE_NOT_ALLOWED',
    );
    expectReject(() => place(e, { ...usdc, type: 'LIMIT', price: '99.99' }), 'PRICE_BELOW_MIN');
  });

  it('refuses orders that need a last price before the pair has one, but lets a LIMIT rest', () => {
    const e = engineAt(null);
    expectReject(() => place(e, { side: 'BUY', type: 'MARKET', quantity: '0.1' }), 'NO_MARKET_PRICE');
    expectReject(
      () => place(e, { side: 'SELL', type: 'STOP_LIMIT', quantity: '0.1', price: '1', stopPrice: '1' }),
      'NO_MARKET_PRICE',
    );
    expect(place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '100' }).status).toBe('NEW');
  });

  it('refuses an unknown API key', () => {
    const e = engineAt();
    expectReject(
      () => e.placeOrder('nobody', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.1' }),
      'UNKNOWN_ACCOUNT',
    );
    expectReject(() => e.balances('nobody'), 'UNKNOWN_ACCOUNT');
  });

  it('refuses cancels of unknown, foreign and final orders', () => {
    const e = engineAt();
    e.createAccount({ apiKey: 'other', balances: { USDT: '1000' } });
    const foreign = e.placeOrder('other', {
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity: '0.01',
      price: '100',
    });
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDT', '999'), 'UNKNOWN_ORDER');
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDT', 'abc'), 'UNKNOWN_ORDER');
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDT', String(foreign.displayingId)), 'UNKNOWN_ORDER');
    const mine = place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '100' });
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDC', String(mine.displayingId)), 'UNKNOWN_ORDER');
    expectReject(() => e.cancelOrder(KEY, 'NOPE', String(mine.displayingId)), 'UNKNOWN_SYMBOL');
    e.cancelOrder(KEY, 'BTCUSDT', String(mine.displayingId));
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDT', String(mine.displayingId)), 'ORDER_NOT_OPEN');
    const filled = place(e, { side: 'SELL', type: 'MARKET', quantity: '0.01' });
    expectReject(() => e.cancelOrder(KEY, 'BTCUSDT', String(filled.displayingId)), 'ORDER_NOT_OPEN');
    expect(e.openOrders('other')).toHaveLength(1);
  });

  it('refuses bad prices on the tick stream', () => {
    const e = engineAt();
    expectReject(() => e.onPrice('BTCUSDT', 0, T0), 'INVALID_NUMBER');
    expectReject(() => e.onPrice('BTCUSDT', Number.NaN, T0), 'INVALID_NUMBER');
    expectReject(() => e.onPrice('BTCUSDT', Infinity, T0), 'INVALID_NUMBER');
    expectReject(() => e.onPrice('XXX', 1, T0), 'UNKNOWN_SYMBOL');
    expect(e.lastPrice('BTCUSDT')).toBe(60000);
  });
});
