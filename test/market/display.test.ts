import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { D, isPlainDecimal } from '../../src/market/decimal.js';
import { assetPlaces, roundedText, rounder } from '../../src/market/display.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';

const BTCUSDT = pairRulesFrom(DEFAULT_PAIRS[0]!); // tick 0.01, step 0.000001, base precision 6, quote precision 2

/** A decimal with up to 40 fraction digits, as text (what exact arithmetic leaves: 1/3 of a price, a fee share). */
const longDecimal = fc
  .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 12n }), fc.stringMatching(/^\d{0,40}$/))
  .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === '' ? '' : `.${frac}`}`);

describe('figures rounded for people', () => {
  it('rounds half to even at the places asked, as plain text: no exponent, no -0, no float noise', () => {
    fc.assert(
      fc.property(longDecimal, fc.integer({ min: 0, max: 12 }), (text, places) => {
        const shown = roundedText(text, places);
        expect(isPlainDecimal(shown)).toBe(true);
        expect(shown).not.toBe('-0');
        expect((shown.split('.')[1] ?? '').length).toBeLessThanOrEqual(places);
        // Exactly the decimal rounding of the exact value (never through a double).
        expect(new D(shown).eq(new D(text).toDecimalPlaces(places, D.ROUND_HALF_EVEN))).toBe(true);
      }),
    );
    expect(roundedText('-0.02499959350000000000000000000000000000000000000000000000388', 8)).toBe('-0.02499959');
    expect(roundedText('-0.000000001', 8)).toBe('0');
    expect(roundedText('0.125', 2)).toBe('0.12');
    expect(roundedText('0.135', 2)).toBe('0.14');
    expect(roundedText('12345678901234567890.123456789', 2)).toBe('12345678901234567890.12');
  });

  it("rounds a pair's figures to its tick, step and the assets' precision, and to 8 places without rules", () => {
    const r = rounder(BTCUSDT);
    expect(r.price('60000.123456')).toBe('60000.12');
    expect(r.base('0.00123456789')).toBe('0.001235');
    expect(r.baseAsset('0.00049950000001')).toBe('0.0005');
    expect(r.quote('-0.666666666666')).toBe('-0.67');
    expect(r.amount('0.00000051', 'base')).toBe('0.000001');
    expect(r.amount('0.005', 'quote')).toBe('0');
    expect(r.amount('0.123456789', 'other')).toBe('0.12345679');
    const none = rounder(undefined);
    expect([none.price('1.123456789'), none.quote('1.123456789'), none.baseAsset('1.123456789')]).toEqual([
      '1.12345679',
      '1.12345679',
      '1.12345679',
    ]);
    expect(Object.fromEntries(assetPlaces([BTCUSDT, undefined]))).toEqual({ BTC: 6, USDT: 2 });
  });
});
