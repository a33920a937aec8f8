/**
 * A column of a recording's numbers held in four bytes a value wherever each is a whole number of one unit, and
 * exactly: times to the second, prices to the cent (or to whatever number of decimals the data has), volumes
 * while they stay in range. A value is `values[i] * mul / div` (MISSING standing for NaN: a ticker without the
 * key), which is the very double the recording's decimal text parsed to; a column whose values are not all
 * whole numbers of any unit in range is held wide (float64, the values themselves).
 *
 * On 1.2M one-minute candle ticks the time and the three price columns go narrow: 19 MB less than float64.
 */

/** The stored numbers: whole units (narrow) or the values themselves (wide). */
export interface NumberColumn {
  values: Uint32Array | Float64Array;
  /** Narrow: a value is values[i] * mul / div. Wide: both 1. */
  mul: number;
  div: number;
  narrow: boolean;
}

/** A narrow column's NaN. */
export const MISSING = 0xffffffff;

/** The column's i-th value. */
export function valueAt(c: NumberColumn, i: number): number {
  const n = c.values[i] as number;
  return c.narrow ? (n === MISSING ? NaN : (n * c.mul) / c.div) : n;
}

/** Sets the column's i-th value; false (nothing written) when a narrow column cannot hold it exactly. */
export function setValue(c: NumberColumn, i: number, v: number): boolean {
  if (!c.narrow) {
    c.values[i] = v;
    return true;
  }
  const n = encode(v, c.mul, c.div);
  if (n === undefined) return false;
  c.values[i] = n;
  return true;
}

/** All the column's values, as numbers (tests, exports). */
export function columnValues(c: NumberColumn): number[] {
  return Array.from({ length: c.values.length }, (_, i) => valueAt(c, i));
}

/** The same column on other storage (a view, a copy) of the same kind. */
export function withValues<T extends Uint32Array | Float64Array>(c: NumberColumn, values: T): NumberColumn {
  return { values, mul: c.mul, div: c.div, narrow: c.narrow };
}

/** v as a whole number of mul/div (MISSING for NaN), when that is exact and in range. */
export function encode(v: number, mul: number, div: number): number | undefined {
  if (v !== v) return MISSING;
  const n = Math.round((v * div) / mul);
  return n >= 0 && n < MISSING && (n * mul) / div === v && !Object.is(v, -0) ? n : undefined;
}

/** The units a kind of column may be held in, most compact first: [mul, div]. */
export type Units = readonly (readonly [number, number])[];
/** Epoch milliseconds: whole seconds (to the year 2106). */
const TIME_UNITS: Units = [[1000, 1]];
/** Prices and volumes: whole numbers, then tenths, hundredths… to 10^-8. */
const DECIMAL_UNITS: Units = Array.from({ length: 9 }, (_, d) => [1, 10 ** d] as const);

/** A recording's float columns (tick-data.ts's TickColumns but sym), in the order the column cache stores them. */
export const FLOAT_KEYS = ['time', 'price', 'high', 'low', 'vb', 'vq'] as const;
export type FloatKey = (typeof FLOAT_KEYS)[number];
/**
 * The columns that share a unit, each group named by its first column: price, high and low together, so that a
 * price goes into a high or a low as it is (candle-ticks.ts).
 */
export const COLUMN_GROUPS: readonly (readonly FloatKey[])[] = [['time'], ['price', 'high', 'low'], ['vb'], ['vq']];

/** The units a column of this key may be held in. */
export function unitsOf(key: FloatKey): Units {
  return key === 'time' ? TIME_UNITS : DECIMAL_UNITS;
}

/** A column of `key` on `values`, in its unit number `unit` (-1: wide). */
export function columnIn(key: FloatKey, unit: number, values: Uint32Array | Float64Array): NumberColumn {
  if (unit === -1) return { values, mul: 1, div: 1, narrow: false };
  const [mul, div] = unitsOf(key)[unit] as readonly [number, number];
  return { values, mul, div, narrow: true };
}
