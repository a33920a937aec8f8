/**
 * The Venue port over the matching engine, in process, for one account (backtests). Records go through the
 * same zod schemas the HTTP client parses the server's answers with, so a strategy sees identical shapes on
 * either venue. Methods are async only to fit the port: no timers, no I/O, the engine is already synchronous.
 *
 * The engine's order and trade records are frozen and shared until the order changes (records.ts), and its
 * pair configs never change, so each is parsed once: a poll that reads a page of unchanged history gets the
 * parsed records it got before (frozen too: no reader can change what another one is handed).
 */
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../ports/venue-records.js';
import {
  BalancesSchema,
  OrderRecordSchema,
  PairConfigSchema,
  tickerFromWire,
  TickerSchema,
  TradeRecordSchema,
} from '../wire/schemas.js';
import { VenueError } from '../ports/venue-errors.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';
import type { MatchingEngine } from '../sim/matching-engine.js';
import { SimRejectError } from '../sim/error-codes.js';
import { deepFreeze } from '../sim/records.js';

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

function rejectedBySim(err: SimRejectError): VenueError {
  return new VenueError('E_EXCHANGE', 'rejected', err.message, {
    cause: err,
    context: err.context,
    venueCode: err.exchangeCode,
  });
}

/** Parsed records by the engine's record they were parsed from. */
const parsedOrders = new WeakMap<object, OrderRecord>();
const parsedTrades = new WeakMap<object, TradeRecord>();
const parsedPairs = new WeakMap<object, PairConfig>();

function parsedOnce<T>(cache: WeakMap<object, T>, schema: { parse(raw: unknown): T }, raw: object): T {
  let parsed = cache.get(raw);
  if (parsed === undefined) {
    parsed = deepFreeze(schema.parse(raw));
    cache.set(raw, parsed);
  }
  return parsed;
}

const parsedOrder = (raw: object): OrderRecord => parsedOnce(parsedOrders, OrderRecordSchema, raw);
const parsedTrade = (raw: object): TradeRecord => parsedOnce(parsedTrades, TradeRecordSchema, raw);
const parsedPair = (raw: object): PairConfig => parsedOnce(parsedPairs, PairConfigSchema, raw);

export class InProcessVenue implements Venue {
  constructor(
    readonly engine: MatchingEngine,
    private readonly apiKey: string,
  ) {}

  get revision(): number {
    return this.engine.recordRevision;
  }

  marketWatch(symbol?: string): Promise<Ticker[]> {
    return this.call(() => TickerSchema.array().parse(this.engine.tickers(symbol)).map(tickerFromWire));
  }

  pairConfig(symbol?: string): Promise<PairConfig[]> {
    return this.call(() => this.engine.pairConfigs(symbol).map(parsedPair));
  }

  balance(query?: BalanceQuery): Promise<Balances> {
    return this.call(() => BalancesSchema.parse(this.engine.balances(this.apiKey, query)));
  }

  openOrders(pair?: string): Promise<OrderRecord[]> {
    return this.call(() => this.engine.openOrders(this.apiKey, pair).map(parsedOrder));
  }

  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    return this.call(() => this.engine.orderHistory(this.apiKey, query).map(parsedOrder));
  }

  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    return this.call(() => this.engine.tradeHistory(this.apiKey, query).map(parsedTrade));
  }

  createOrder(request: OrderRequest): Promise<OrderRecord> {
    return this.call(() => parsedOrder(this.engine.placeOrder(this.apiKey, request)));
  }

  cancelOrder(symbol: string, displayingId: string): Promise<OrderRecord> {
    return this.call(() => parsedOrder(this.engine.cancelOrder(this.apiKey, symbol, displayingId)));
  }

  /**
   * Engine refusals become rejected promises, as the HTTP client's do, with the port's meaning: a
   * SimRejectError is the venue refusing (rejected, its exchange code kept); anything else is a bug, unclassified.
   */
  private call<T>(fn: () => T): Promise<T> {
    try {
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(err instanceof SimRejectError ? rejectedBySim(err) : asError(err));
    }
  }
}
