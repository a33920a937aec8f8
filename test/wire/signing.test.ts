import { describe, expect, it } from 'vitest';
import { sign, signQuery } from '../../src/wire/signing.js';

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
