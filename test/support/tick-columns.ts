/** A load's columns as plain numbers (sym's symbol numbers, the float columns' values), for comparing loads. */
import { columnValues, type NumberColumn } from '../../src/backtest/number-column.js';
import type { TickData } from '../../src/backtest/tick-data.js';

/** Each column's values, in TickColumns's order. */
export function columnArrays(data: TickData): number[][] {
  return Object.values(data.columns).map((c: Uint16Array | NumberColumn) =>
    c instanceof Uint16Array ? Array.from(c) : columnValues(c),
  );
}

/** The typed arrays that hold the columns. */
export function columnStorage(data: TickData): (Uint16Array | Uint32Array | Float64Array)[] {
  return Object.values(data.columns).map((c: Uint16Array | NumberColumn) => (c instanceof Uint16Array ? c : c.values));
}
