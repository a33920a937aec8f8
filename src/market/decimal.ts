import { Decimal } from 'decimal.js';

/**
 * Exact decimal arithmetic for every price, quantity, balance and fee. A private clone so that no other
 * module's Decimal settings can change ours; the exponent limits are wide so toString never uses exponents.
 */
export const D = Decimal.clone({
  precision: 60,
  rounding: Decimal.ROUND_HALF_EVEN,
  toExpNeg: -120,
  toExpPos: 120,
});
export type Dec = InstanceType<typeof D>;
export type DecimalLike = Dec | string | number;

export const ZERO = new D(0);

const PLAIN = /^-?\d+(\.\d+)?$/;

/**
 * A JS number carries binary noise (0.1 + 0.2 = 0.30000000000000004) that nobody typed; 15 significant
 * digits is what a double round-trips exactly, so numbers are read at that precision. Strings and Decimals
 * are taken exactly as written.
 */
export function dec(x: DecimalLike): Dec {
  if (typeof x === 'number') {
    if (!Number.isFinite(x)) throw new RangeError(`not a finite number: ${x}`);
    return new D(x.toPrecision(15));
  }
  return x instanceof D ? x : new D(x);
}

/** Plain decimal text for the wire: no exponent, no float noise, no trailing zeros, integers without a fraction. */
export function plain(x: DecimalLike): string {
  const d = dec(x);
  if (d.isZero()) return '0';
  return d.toFixed();
}

/** True when the text is a plain decimal (what the bot writes): digits, an optional fraction, no exponent. */
export function isPlainDecimal(text: string): boolean {
  return PLAIN.test(text);
}

/** Exact decimal from a number the exchange sent (shortest round-trip text of the double). */
export function fromWire(n: number | string): Dec {
  return new D(typeof n === 'number' ? String(n) : n);
}
