/**
 * Narrow columns (number-column.ts): a value held as a whole number of a unit reads back as the very double it
 * was, and one that is not exactly such a number is refused (the loader then keeps its column wide).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { columnIn, encode, MISSING, setValue, valueAt } from '../../src/backtest/number-column.js';

/** The text m / 10^d is spelled as in a recording (no exponent), and the double it parses to. */
const decimal = (m: number, d: number): number => {
  const digits = String(m).padStart(d + 1, '0');
  return Number(d === 0 ? digits : `${digits.slice(0, -d)}.${digits.slice(-d)}`);
};

describe('a narrow column', () => {
  it('holds any decimal of up to 8 places in range as a whole number of its unit, and reads back the same double', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MISSING - 1 }), fc.integer({ min: 0, max: 8 }), (m, d) => {
        const v = decimal(m, d);
        const column = columnIn('price', d, new Uint32Array(1));
        expect(setValue(column, 0, v)).toBe(true);
        expect(column.values[0]).toBe(m);
        expect(Object.is(valueAt(column, 0), v)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses what its unit cannot hold exactly, and leaves the stored value as it was', () => {
    const cents = columnIn('price', 2, new Uint32Array([12345]));
    for (const v of [0.001, 123.456, -1, -0, 42_949_672.96, 0.1 + 0.2, Infinity]) {
      expect(setValue(cents, 0, v), String(v)).toBe(false);
      expect(valueAt(cents, 0)).toBe(123.45);
    }
    expect(encode(NaN, 1, 100)).toBe(MISSING);
    expect(setValue(cents, 0, NaN)).toBe(true);
    expect(valueAt(cents, 0)).toBeNaN();
  });

  it('holds epoch milliseconds of whole seconds, to the year 2106, and no finer', () => {
    const time = columnIn('time', 0, new Uint32Array(1));
    const t = Date.UTC(2023, 2, 1, 12, 34, 56);
    expect(setValue(time, 0, t)).toBe(true);
    expect(valueAt(time, 0)).toBe(t);
    expect(setValue(time, 0, t + 1)).toBe(false);
    expect(setValue(time, 0, Date.UTC(2107, 0, 1))).toBe(false);
  });

  it('a wide column holds anything as it is', () => {
    const wide = columnIn('vq', -1, new Float64Array(1));
    for (const v of [-0, 0.1 + 0.2, 48_347_161.310_822_92, NaN, -1e300]) {
      expect(setValue(wide, 0, v)).toBe(true);
      expect(Object.is(valueAt(wide, 0), v)).toBe(true);
    }
  });
});
