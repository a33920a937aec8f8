/**
 * What a recording is read into (tick-data.ts builds it, column-cache.ts stores it, the replays read it): one
 * column per ticker key, and each symbol's names and asset ids.
 */
import type { NumberColumn } from './number-column.js';

/** A symbol of the data: its name and the base and quote codes and ids its tickers carry. */
export interface SymbolInfo {
  symbol: string;
  b: string | undefined;
  q: string | undefined;
  bi: number | undefined;
  qi: number | undefined;
}

/**
 * One column per ticker key; NaN where a ticker had no value. The float keys are NumberColumns (number-column.ts):
 * read them with valueAt. time is a group of its own, price, high and low one group (one unit: a price goes
 * into a high or a low as it is), vb and vq one each.
 */
export interface TickColumns {
  sym: Uint16Array;
  time: NumberColumn;
  price: NumberColumn;
  high: NumberColumn;
  low: NumberColumn;
  vb: NumberColumn;
  vq: NumberColumn;
}
