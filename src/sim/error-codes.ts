/**
 * Why the simulated exchange refuses a request, each with a stable numeric exchange code. The HTTP server
 * turns a SimRejectError into the live exchange's BROKER_ERROR envelope
 * (`{status: "BROKER_ERROR", code: <exchangeCode>, data: {requestId}, message}`), so the numbers below are
 * what a client sees; they never change meaning once published.
 *
 * | code | reason                 | when                                                                    |
 * |------|------------------------|-------------------------------------------------------------------------|
 * | 6101 | UNKNOWN_SYMBOL         | no such trading pair                                                    |
 * | 6102 | PAIR_NOT_TRADING       | the pair's status is not TRADING                                        |
 * | 6103 | ORDER_TYPE_NOT_ALLOWED | type unknown or not in the pair's orderTypes (OCO also needs ocoAllowed) |
 * | 6104 | INVALID_SIDE           | side is not BUY or SELL                                                 |
 * | 6105 | MISSING_FIELD          | a field the order type needs is absent                                  |
 * | 6106 | UNEXPECTED_FIELD       | a field the order type does not take is present                         |
 * | 6107 | INVALID_NUMBER         | a number is not a positive plain decimal                                |
 * | 6108 | PRICE_OFF_TICK         | a price is not a multiple of PRICE_FILTER tickSize                      |
 * | 6109 | PRICE_BELOW_MIN        | a price is below PRICE_FILTER minPrice                                  |
 * | 6110 | PRICE_ABOVE_MAX        | a price is above PRICE_FILTER maxPrice                                  |
 * | 6111 | QUANTITY_PRECISION     | quantity finer than the base step (quoteOrderQty: the quote precision)  |
 * | 6112 | QUANTITY_OUT_OF_BOUNDS | quantity outside LOT_SIZE minQty/maxQty, or too small to buy one step   |
 * | 6113 | INSUFFICIENT_BALANCE   | free balance below what the order locks or spends                       |
 * | 6114 | STOP_WRONG_SIDE        | stop on the wrong side of the last price (BUY above, SELL below)        |
 * | 6115 | OCO_PRICE_WRONG_SIDE   | OCO limit leg on the wrong side (SELL above last, BUY below)             |
 * | 6116 | NO_MARKET_PRICE        | the order needs a last price and the pair has none yet                  |
 * | 6117 | UNKNOWN_ORDER          | cancel: no open or closed order with that id on that pair and account   |
 * | 6118 | ORDER_NOT_OPEN         | cancel: the order is already FILLED or CANCELED                         |
 * | 6119 | UNKNOWN_ACCOUNT        | no account for that API key                                             |
 * | 6120 | INVALID_QUERY          | bad history filter: page, pageSize, timeFrom/timeTo, wallet type        |
 */
import { BotError } from '../errors.js';

export const SIM_ERROR_CODES = {
  UNKNOWN_SYMBOL: 6101,
  PAIR_NOT_TRADING: 6102,
  ORDER_TYPE_NOT_ALLOWED: 6103,
  INVALID_SIDE: 6104,
  MISSING_FIELD: 6105,
  UNEXPECTED_FIELD: 6106,
  INVALID_NUMBER: 6107,
  PRICE_OFF_TICK: 6108,
  PRICE_BELOW_MIN: 6109,
  PRICE_ABOVE_MAX: 6110,
  QUANTITY_PRECISION: 6111,
  QUANTITY_OUT_OF_BOUNDS: 6112,
  INSUFFICIENT_BALANCE: 6113,
  STOP_WRONG_SIDE: 6114,
  OCO_PRICE_WRONG_SIDE: 6115,
  NO_MARKET_PRICE: 6116,
  UNKNOWN_ORDER: 6117,
  ORDER_NOT_OPEN: 6118,
  UNKNOWN_ACCOUNT: 6119,
  INVALID_QUERY: 6120,
} as const;

export type SimRejectReason = keyof typeof SIM_ERROR_CODES;

/**
 * The simulated exchange refused a request; `exchangeCode` is what the server puts in BROKER_ERROR's `code`.
 * Its `code` is E_EXCHANGE, as for the HTTP client's rejections, so the engine classifies both alike.
 */
export class SimRejectError extends BotError {
  readonly reason: SimRejectReason;
  readonly exchangeCode: number;

  constructor(reason: SimRejectReason, message: string, context: Record<string, unknown> = {}) {
    super('E_EXCHANGE', message, { context: { ...context, reason, exchangeCode: SIM_ERROR_CODES[reason] } });
    this.reason = reason;
    this.exchangeCode = SIM_ERROR_CODES[reason];
  }
}
