import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PairConfigSchema } from '../../src/wire/schemas.js';
import { dec } from '../../src/market/decimal.js';
import {
  pairRulesFrom,
  priceProblem,
  quantityProblem,
  roundPrice,
  roundQuantity,
} from '../../src/market/pair-rules.js';

const config = PairConfigSchema.parse({
  symbol: 'BTCUSDT',
  status: 'TRADING',
  baseAsset: 'BTC',
  baseAssetPrecision: 6,
  quoteAsset: 'USDT',
  quotePrecision: 2,
  orderTypes: ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'],
  filters: [{ filterType: 'PRICE_FILTER', minPrice: 0.01, maxPrice: 1000000, tickSize: 0.01 }],
  unknownField: 'kept',
});
const rules = pairRulesFrom(config);

describe('pair rules', () => {
  it('rounds a BUY down and a SELL up onto the tick', () => {
    expect(roundPrice(rules, '23150.016', 'BUY').toFixed()).toBe('23150.01');
    expect(roundPrice(rules, '23150.011', 'SELL').toFixed()).toBe('23150.02');
    expect(roundPrice(rules, '23150.01', 'SELL').toFixed()).toBe('23150.01');
  });

  it('never rounds against the side, and always lands on the tick', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 8 - 1 }), fc.integer({ min: 0, max: 999 }), (cents, extra) => {
        const asked = dec(`${cents / 100}`).plus(dec(extra).div(100000));
        const buy = roundPrice(rules, asked, 'BUY');
        const sell = roundPrice(rules, asked, 'SELL');
        expect(buy.lte(asked)).toBe(true);
        expect(sell.gte(asked)).toBe(true);
        expect(priceProblem(rules, buy.gt(0) ? buy : rules.tickSize)).toBeUndefined();
      }),
    );
  });

  it('rounds quantities down to the base precision', () => {
    expect(roundQuantity(rules, '0.1234567').toFixed()).toBe('0.123456');
  });

  it('names the broken rule', () => {
    expect(priceProblem(rules, dec('0.005'))).toMatch(/not a multiple of tickSize 0.01/);
    expect(priceProblem(rules, dec('2000000'))).toMatch(/above maxPrice 1000000/);
    expect(priceProblem(rules, dec('0'))).toMatch(/not positive/);
    expect(quantityProblem(rules, dec('0.0000001'))).toMatch(/precision/);
  });

  it('treats a zero maxPrice and a missing filter as unbounded, with a tick from quotePrecision', () => {
    const bare = pairRulesFrom(PairConfigSchema.parse({ ...config, filters: [] }));
    expect(bare.maxPrice).toBeUndefined();
    expect(bare.tickSize.toFixed()).toBe('0.01');
  });
});
