import { describe, expect, it } from 'vitest';
import { booleanParam, decimalParam, integerParam, jsonText, queryText, textParam } from '../../src/exchange/query.js';

describe('parameters', () => {
  const params = [
    textParam('E', 'symbol', 'BTC/USDT'),
    decimalParam('E', 'quantity', '0.0000001'),
    decimalParam('E', 'price', '123456789.123456789'),
    integerParam('E', 'page', 9007199254740991),
    booleanParam('useQuoteQty', false),
  ];

  it('query text: URL-encoded text, decimals verbatim, numbers plain, booleans as words', () => {
    expect(queryText(params)).toBe(
      'symbol=BTC%2FUSDT&quantity=0.0000001&price=123456789.123456789&page=9007199254740991&useQuoteQty=false',
    );
  });

  it('JSON text: the same fields, numbers as plain literals that JSON reads back', () => {
    const text = jsonText(params);
    expect(text).toBe(
      '{"symbol":"BTC/USDT","quantity":0.0000001,"price":123456789.123456789,"page":9007199254740991,"useQuoteQty":false}',
    );
    expect(JSON.parse(text)).toMatchObject({ symbol: 'BTC/USDT', quantity: 1e-7, useQuoteQty: false });
  });
});
