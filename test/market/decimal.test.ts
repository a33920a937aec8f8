import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { D, dec, isPlainDecimal, plain } from '../../src/market/decimal.js';

describe('plain decimals for the wire', () => {
  it('drops binary float noise from numbers', () => {
    expect(plain(0.1 + 0.2)).toBe('0.3');
    expect(plain(0.30000000000000004)).toBe('0.3');
  });

  it('never writes exponent notation', () => {
    expect(plain(1e-7)).toBe('0.0000001');
    expect(plain(1e21)).toBe('1000000000000000000000');
    expect(plain('1e-12')).toBe('0.000000000001');
  });

  it('keeps text exactly as written, integers without a fraction', () => {
    expect(plain('123456789.123456789')).toBe('123456789.123456789');
    expect(plain(50000)).toBe('50000');
    expect(plain('50000.000')).toBe('50000');
    expect(plain(-0)).toBe('0');
  });

  it('round-trips any decimal text of up to 18 fraction digits exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n }), fc.integer({ min: 0, max: 18 }), (units, scale) => {
        const text = new D(units.toString()).div(new D(10).pow(scale)).toFixed();
        const out = plain(text);
        expect(isPlainDecimal(out)).toBe(true);
        expect(dec(out).eq(dec(text))).toBe(true);
      }),
    );
  });

  it('rejects non-finite numbers', () => {
    expect(() => dec(Number.NaN)).toThrow(/finite/);
    expect(() => dec(Infinity)).toThrow(/finite/);
  });
});
