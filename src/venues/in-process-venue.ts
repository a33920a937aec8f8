/**
 * The Venue port over the matching engine, in process, for one account (backtests). A strategy sees the same
 * records on either venue: the HTTP client parses the server's JSON with the zod schemas of wire/schemas.ts;
 * here the engine's records (sim/records.ts) are turned into the port's directly, to exactly what those schemas
 * would give (the same keys in the same order, ids as text: test/venues/in-process.test.ts compares them over
 * every kind of order and trade the engine makes). Skipping the parse is safe because the engine's record types
 * guarantee every check it makes (each number field is a `number` built from an exact decimal, side, type and
 * status are the engine's own enums, the times are ISO text, and the ids the schemas turn into text are integers)
 * but zod's refusal of a number that is not finite, which only a balance past the doubles' range could be (checked
 * in balance()); and what the engine believes of any venue's records is judged after this, as for the wire's
 * (engine/venue-answers.ts: amounts finite and not negative, prices within the pair's bounds, fills within their
 * order).
 * Pair configs are still parsed (once each: they never change). Methods are async only to fit the port: no
 * timers, no I/O, the engine is already synchronous.
 *
 * The engine's order and trade records are frozen and shared until the order changes (records.ts), so each is
 * turned once: a poll that reads a page of unchanged history gets the records it got before (frozen too: no
 * reader can change what another one is handed).
 */
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../ports/venue-records.js';
import { BalancesSchema, PairConfigSchema, tickerFromWire, TickerSchema } from '../wire/schemas.js';
import { VenueError } from '../ports/venue-errors.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../ports/venue.js';
import type { MatchingEngine } from '../sim/matching-engine.js';
import { SimRejectError } from '../sim/error-codes.js';
import { deepFreeze, type SimOrderRecord, type SimTradeRecord } from '../sim/records.js';

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

/**
 * The port's order record of an engine record: what OrderRecordSchema.parse gives for it (the schema's keys in
 * its order, then the others as they come; the displaying id as text), with no parse. Its nested objects are
 * the engine's, already frozen.
 */
function orderFromSim(r: SimOrderRecord): OrderRecord {
  return Object.freeze({
    _id: r._id,
    displayingId: String(r.displayingId),
    symbol: r.symbol,
    side: r.side,
    type: r.type,
    status: r.status,
    price: r.price,
    stopPrice: r.stopPrice,
    limitPrice: r.limitPrice,
    executedPrice: r.executedPrice,
    quantity: r.quantity,
    executedQty: r.executedQty,
    quoteQty: r.quoteQty,
    executedQuoteQty: r.executedQuoteQty,
    useQuoteQty: r.useQuoteQty,
    ocoOrderId: r.ocoOrderId,
    limitOrderId: r.limitOrderId,
    stopLimitOrderId: r.stopLimitOrderId,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    feeMetadata: r.feeMetadata,
    userId: r.userId,
    baseAsset: r.baseAsset,
    baseAssetId: r.baseAssetId,
    quoteAsset: r.quoteAsset,
    quoteAssetId: r.quoteAssetId,
    executedType: r.executedType,
    priceToCalLockAndFee: r.priceToCalLockAndFee,
    liquidityStatus: r.liquidityStatus,
    liquiditySymbol: r.liquiditySymbol,
    liquidityUsdtPrice: r.liquidityUsdtPrice,
    liquidityTransferPrice: r.liquidityTransferPrice,
    liquidityTransferFee: r.liquidityTransferFee,
    liquidityOrderId: r.liquidityOrderId,
    internalError: r.internalError,
    metadata: r.metadata,
  });
}

/** The port's trade record of an engine record: TradeRecordSchema.parse's (its keys are the schema's, in its order). */
function tradeFromSim(r: SimTradeRecord): TradeRecord {
  return Object.freeze({ ...r, orderId: String(r.orderId) });
}

/** Port records by the engine's record they were made from. */
const orders = new WeakMap<SimOrderRecord, OrderRecord>();
const trades = new WeakMap<SimTradeRecord, TradeRecord>();
const parsedPairs = new WeakMap<object, PairConfig>();

function once<R extends object, T>(cache: WeakMap<R, T>, make: (raw: R) => T, raw: R): T {
  let made = cache.get(raw);
  if (made === undefined) {
    made = make(raw);
    cache.set(raw, made);
  }
  return made;
}

const portOrder = (raw: SimOrderRecord): OrderRecord => once(orders, orderFromSim, raw);
const portTrade = (raw: SimTradeRecord): TradeRecord => once(trades, tradeFromSim, raw);
const parsedPair = (raw: object): PairConfig => once(parsedPairs, (r) => deepFreeze(PairConfigSchema.parse(r)), raw);

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
    // Built fresh at each read, in the schema's shape ({value, locked_value, type} of numbers by currency id).
    return this.call((): Balances => {
      const balances = this.engine.balances(this.apiKey, query);
      // The one check the engine's types do not carry: an amount past the doubles' range (an account configured
      // with a balance of 309 digits) is Infinity; the schema refuses it here as it would on the wire.
      for (const id in balances) {
        const b = balances[id] as Balances[string];
        if (!Number.isFinite(b.value) || !Number.isFinite(b.locked_value)) return BalancesSchema.parse(balances);
      }
      return balances;
    });
  }

  openOrders(pair?: string): Promise<OrderRecord[]> {
    return this.call(() => this.engine.openOrders(this.apiKey, pair).map(portOrder));
  }

  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    return this.call(() => this.engine.orderHistory(this.apiKey, query).map(portOrder));
  }

  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    return this.call(() => this.engine.tradeHistory(this.apiKey, query).map(portTrade));
  }

  createOrder(request: OrderRequest): Promise<OrderRecord> {
    return this.call(() => portOrder(this.engine.placeOrder(this.apiKey, request)));
  }

  cancelOrder(symbol: string, displayingId: string): Promise<OrderRecord> {
    return this.call(() => portOrder(this.engine.cancelOrder(this.apiKey, symbol, displayingId)));
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
