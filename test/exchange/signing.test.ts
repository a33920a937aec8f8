import { describe, expect, it } from 'vitest';
import { sign, signQuery } from '../../src/exchange/signing.js';
import { booleanParam, decimalParam, integerParam, jsonText, queryText, textParam } from '../../src/exchange/query.js';

describe('signature', () => {
  it('is the lowercase hex HMAC-SHA256 of the message (RFC 4231-style known vector)', () => {
    expect(sign('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });

  it('signs the query with timestamp last and appends the signature of exactly that text', () => {
    const { query, signature } = signQuery('s3cret', 'symbol=BTCUSDT&side=BUY', 1714521600000);
    expect(query).toBe(`symbol=BTCUSDT&side=BUY&timestamp=1714521600000&signature=${signature}`);
    expect(signature).toBe(sign('s3cret', 'symbol=BTCUSDT&side=BUY&timestamp=1714521600000'));
    expect(signQuery('s3cret', '', 5).query).toBe(`timestamp=5&signature=${sign('s3cret', 'timestamp=5')}`);
  });
});

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
