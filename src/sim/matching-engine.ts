/**
 * The simulated exchange's matching engine: one code path for paper trading (behind the HTTP server) and
 * backtests (in process), design.md invariant 6. Synchronous, deterministic, no timers, no I/O.
 *
 * Fill model (the market watch has no book, so everything is modelled on the last price):
 * - Latency (`latencyMs`, default 0): an order placed takes effect only at the first price whose time is at
 *   least `latencyMs` after it was placed: the engine's time then (the injected clock's when it tells the
 *   data's time, else the latest price's), never earlier than its pair's last price (the data's time, not the wall clock's), so an order
 *   decided on a tick never fills at that tick's price. Until then it is open (NEW), locks its
 *   funds and can be cancelled. On arrival a MARKET order fills at the arrival price (a quote amount buys what
 *   it buys at that price; a BUY whose funds no longer cover it is CANCELED), a marketable LIMIT fills as a
 *   taker, anything else rests. With 0 an order arrives as it is placed, at the last price.
 * - A marketable order on arrival (MARKET; LIMIT BUY with price >= last, SELL with price <= last) fills at
 *   the last price moved against it by `slippageBps` and, with `marketImpact`, by what its size costs
 *   (market-impact.ts: the square-root law on the pair's 24-hour ticker), rounded onto the tick, never worse
 *   than its limit; taker fee.
 * - A resting limit fills at its own price (maker fee) once the last price trades through it by
 *   `fillThroughTicks` ticks: BUY when last <= price - n*tick, SELL when last >= price + n*tick (0 = touch).
 * - A stop triggers when the last price reaches it (BUY last >= stop, SELL last <= stop) and becomes a limit:
 *   marketable then, it fills at once as a taker bounded by its limit; gapped past its limit, it rests
 *   unfilled and fills later only by the resting-limit rule.
 * - OCO is one order with two legs sharing one lock; the first leg to fill (even partly) or to trigger
 *   cancels the other (see records.ts for how it shows).
 * - With `participationRate` set, fills on a tick are capped at rate × the base volume the caller says traded
 *   since the previous tick (no volume given: no cap), shared out best price first, then oldest first; orders
 *   go PARTIALLY_FILLED. Takers share it too, first: a MARKET order takes what is left of the tick's share and
 *   the rest on the following ticks (PARTIALLY_FILLED between, each part at its tick's price and impact; a BUY
 *   whose funds no longer cover the rest at the price there is CANCELED with what it got); a marketable limit
 *   takes its share and rests for the remainder. An order placed with no latency has no tick to share and fills
 *   in full. A stop triggered on a tick without volume left rests as a limit, filling later by the resting rule.
 *
 * Money: balances, locks, fills and fees are exact decimals. A BUY locks quote (its highest possible price ×
 * quantity; an OCO BUY the larger leg price), a SELL locks base; each fill spends from the lock and a final
 * order releases what is left. The fee is taken from the asset received at the maker or taker ratio, unrounded:
 * the pair's own when its configuration carries `makerFee`/`takerFee`, else the engine's.
 *
 * Time is the time of the last price given (or the injected Clock): records never read the wall clock.
 *
 * Hot path: `onPrice` keeps per pair the highest price at or below which some resting order needs attention
 * (`downAt`) and the lowest at or above which one does (`upAt`), as numbers computed once from exact decimals
 * when orders change. A tick strictly between them (the usual case) costs two comparisons and allocates
 * nothing. Comparing doubles is sound here: each threshold and tick is a short decimal, and rounding short
 * decimals to the nearest double preserves their order.
 */
import type { PairConfig } from '../ports/venue-records.js';
import type { Side } from '../market/pair-rules.js';
import { BotError } from '../errors.js';
import { D, type Dec, type DecimalLike, dec, fromWire, plain, ZERO } from '../market/decimal.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import type { ClockReading } from '../ports/clock.js';
import type { BalanceQuery, HistoryQuery } from '../ports/venue.js';
import { DEFAULT_ASSETS, DEFAULT_PAIRS, type SimAsset } from './default-market.js';
import { SimRejectError } from './error-codes.js';
import { historyPage, queryHistory } from './history-query.js';
import { restoredFill, restoredOrder } from './restore.js';
import type { LedgerAccount, LedgerMarket, LedgerOrder } from '../ports/ledger-records.js';
import type { SimLedger, SimState } from './ledger.js';
import { impactRatio } from './market-impact.js';
import { checkQuantity, parseOrderInput, quantityForQuote, type SimOrderInput } from './order-input.js';
import { deepFreeze, orderRecord, type SimOrderRecord, type SimTradeRecord, tradeRecord } from './records.js';
import { SimAccount, type SimBalance, type SimFill, type SimOrder, type SimPair } from './state.js';

export interface MatchingEngineOptions {
  /** Default: DEFAULT_ASSETS (default-market.ts). */
  assets?: readonly SimAsset[];
  /** Default: DEFAULT_PAIRS. */
  pairs?: readonly PairConfig[];
  /** Fee ratios, default 0.001 each (as the exchange). */
  makerFee?: DecimalLike;
  takerFee?: DecimalLike;
  /** Ticks a resting limit must be traded through to fill; default 1, 0 fills on touch. */
  fillThroughTicks?: number;
  /** Taker slippage in basis points, default 0. */
  slippageBps?: DecimalLike;
  /** Partial fills: share of the traded base volume orders may take per tick; default off. */
  participationRate?: DecimalLike;
  /** Takers pay for their size (market-impact.ts); default off. */
  marketImpact?: boolean;
  /** Data-time delay before an order reaches the book, ms; default 0 (at once). See the fill model above. */
  latencyMs?: number;
  /** Record times come from this clock when given, else from the last price's time. */
  clock?: ClockReading;
  /**
   * Whether `clock` tells the data's time (default true), so that latency counts from when an order was
   * decided. False where it does not (a lockstep replay: one recorded ticker per request while the clock is the
   * wall's): latency then counts from the latest price's time.
   */
  clockIsDataTime?: boolean;
}

export interface AccountOptions {
  apiKey: string;
  /** Default: 1 for the first account, then 2, 3… */
  userId?: number;
  /** Starting free balances by asset code, e.g. { USDT: '10000', BTC: '0.5' }. */
  balances?: Record<string, DecimalLike>;
}

/** A ticker entry in the market watch's shape: s, p, t always, plus asset codes and ids. */
export interface SimTicker {
  [key: string]: unknown;
  s: string;
  p: number;
  t: number;
  b: string;
  q: string;
  bi: number;
  qi: number;
}

/** A market-watch entry as recorded: s, p and t are all the engine reads; the rest is served back as is. */
export interface TickerInput {
  [key: string]: unknown;
  s: string;
  p: number;
  t: number;
}

export type SimBalances = Record<string, { value: number; locked_value: number; type: number }>;

interface Book {
  pair: SimPair;
  /** fillThroughTicks × tickSize. */
  through: Dec;
  /** NaN until the first price. */
  last: number;
  lastTime: number;
  ticker: TickerInput | undefined;
  downAt: number;
  upAt: number;
  /** Resting orders, oldest first. */
  open: SimOrder[];
  /** The pair's own fee ratios when its configuration carries `makerFee`/`takerFee`, else the engine's. */
  makerFee: Dec;
  takerFee: Dec;
  /** Orders placed that have not reached the book yet (latency), oldest first, and the earliest arrival. */
  arriving: SimOrder[];
  nextArrival: number;
}

const SPOT = 0;
const FUTURE = 2;
const BPS = new D(10000);

function configError(message: string): BotError {
  return new BotError('E_SIM_CONFIG', message);
}

function unknownSymbol(symbol: string): SimRejectError {
  return new SimRejectError('UNKNOWN_SYMBOL', `unknown trading pair ${JSON.stringify(symbol)}`, { symbol });
}

function isOpen(o: SimOrder): boolean {
  return o.status === 'NEW' || o.status === 'PARTIALLY_FILLED';
}

/** Who gets the tick's volume first: buys before sells (an arbitrary but fixed rule), best price, oldest. */
function byPriority(a: SimOrder, b: SimOrder): number {
  if (a.side !== b.side) return a.side === 'BUY' ? -1 : 1;
  const byPrice = (a.limit as Dec).cmp(b.limit as Dec);
  if (byPrice !== 0) return a.side === 'BUY' ? -byPrice : byPrice;
  return a.id - b.id;
}

function stopCrossed(side: Side, stop: Dec, price: Dec): boolean {
  return side === 'BUY' ? price.gte(stop) : price.lte(stop);
}

function marketable(side: Side, limit: Dec, price: Dec): boolean {
  return side === 'BUY' ? limit.gte(price) : limit.lte(price);
}

export class MatchingEngine {
  private readonly assetsById = new Map<number, SimAsset>();
  private readonly assetsByCode = new Map<string, SimAsset>();
  private readonly books = new Map<string, Book>();
  private readonly accounts = new Map<string, SimAccount>();
  /** Every order by id, kept without a ledger only (with one, the history is the ledger's: ledger.ts). */
  private readonly orders = new Map<number, SimOrder>();
  /** The default fee ratios (a pair's configuration may carry its own). */
  private readonly makerFee: Dec;
  private readonly takerFee: Dec;
  private readonly fillThroughTicks: number;
  private readonly slippageBps: Dec;
  private readonly participation: Dec | undefined;
  private readonly marketImpact: boolean;
  private readonly clock: ClockReading | undefined;
  private readonly latencyMs: number;
  private readonly clockIsDataTime: boolean;
  private tickTime = 0;
  private orderSeq = 0;
  private fillSeq = 0;
  private changes = 0;
  /** Of those, orders reaching the book after their latency (recordRevision leaves them out). */
  private arrivals = 0;
  /** Base volume still available to fills on the tick being matched; undefined = no cap. */
  private pool: Dec | undefined;
  /** Where changes are made durable (paper trading); none in a backtest. */
  private ledger: SimLedger | undefined;

  constructor(options: MatchingEngineOptions = {}) {
    for (const a of options.assets ?? DEFAULT_ASSETS) {
      if (this.assetsById.has(a.id) || this.assetsByCode.has(a.code))
        throw configError(`asset ${a.code} (id ${a.id}) is defined twice`);
      this.assetsById.set(a.id, a);
      this.assetsByCode.set(a.code, a);
    }
    const ticks = options.fillThroughTicks ?? 1;
    if (!Number.isInteger(ticks) || ticks < 0)
      throw configError(`fillThroughTicks must be a non-negative integer, got ${ticks}`);
    this.fillThroughTicks = ticks;
    this.makerFee = this.ratio('makerFee', options.makerFee ?? '0.001');
    this.takerFee = this.ratio('takerFee', options.takerFee ?? '0.001');
    for (const given of options.pairs ?? DEFAULT_PAIRS) this.addBook(given);
    this.slippageBps = dec(options.slippageBps ?? 0);
    if (this.slippageBps.lt(0)) throw configError('slippageBps must not be negative');
    if (options.participationRate !== undefined) {
      this.participation = this.ratio('participationRate', options.participationRate);
      if (this.participation.isZero()) throw configError('participationRate must be above 0');
    }
    this.marketImpact = options.marketImpact ?? false;
    this.clock = options.clock;
    this.latencyMs = options.latencyMs ?? 0;
    this.clockIsDataTime = options.clockIsDataTime ?? true;
    if (!(this.latencyMs >= 0 && Number.isFinite(this.latencyMs)))
      throw configError(`latencyMs must be a finite number >= 0, got ${this.latencyMs}`);
  }

  /** A book for the pair `given` configures, its assets known (a copy of the configuration that nobody can change). */
  private addBook(given: PairConfig): Book {
    const config = deepFreeze(structuredClone(given));
    const rules = pairRulesFrom(config);
    const base = this.pairAsset(config, 'base');
    const quote = this.pairAsset(config, 'quote');
    if (this.books.has(config.symbol)) throw configError(`pair ${config.symbol} is defined twice`);
    const own = (name: string, v: unknown, fallback: Dec) =>
      typeof v === 'number' || typeof v === 'string' ? this.ratio(`${config.symbol} ${name}`, v) : fallback;
    const book: Book = {
      pair: { symbol: config.symbol, config, rules, base, quote },
      through: rules.tickSize.mul(this.fillThroughTicks),
      last: NaN,
      lastTime: 0,
      ticker: undefined,
      downAt: 0,
      upAt: Infinity,
      open: [],
      makerFee: own('makerFee', config.makerFee, this.makerFee),
      takerFee: own('takerFee', config.takerFee, this.takerFee),
      arriving: [],
      nextArrival: Infinity,
    };
    this.books.set(config.symbol, book);
    return book;
  }

  /** Whether the exchange lists `symbol`. */
  lists(symbol: string): boolean {
    return this.books.has(symbol);
  }

  /**
   * Lists a pair after the start (paper on live prices: the exchange listed it since). Its assets are the known
   * ones of the same code, or new ones (with the configuration's id when no other asset has it, else a free one),
   * which every account holds none of. Returns the configuration as listed, with the ids it ended up with.
   */
  listPair(config: PairConfig): PairConfig {
    if (this.books.has(config.symbol)) throw configError(`pair ${config.symbol} is defined twice`);
    pairRulesFrom(config); // rules it cannot be traded by change nothing here
    const asset = (code: string, id: number | null | undefined): SimAsset => {
      const known = this.assetsByCode.get(code);
      if (known) return known;
      const free = id !== undefined && id !== null && !this.assetsById.has(id);
      const added = { id: free ? id : Math.max(0, ...this.assetsById.keys()) + 1, code };
      this.assetsById.set(added.id, added);
      this.assetsByCode.set(code, added);
      for (const account of this.accounts.values()) account.balances.set(added.id, { free: ZERO, locked: ZERO });
      return added;
    };
    const base = asset(config.baseAsset, config.baseAssetId);
    const quote = asset(config.quoteAsset, config.quoteAssetId);
    const book = this.addBook({ ...config, baseAssetId: base.id, quoteAssetId: quote.id });
    this.changes++;
    return book.pair.config;
  }

  private pairAsset(config: PairConfig, which: 'base' | 'quote'): SimAsset {
    const id = which === 'base' ? config.baseAssetId : config.quoteAssetId;
    const code = which === 'base' ? config.baseAsset : config.quoteAsset;
    const found = id == null ? this.assetsByCode.get(code) : this.assetsById.get(id);
    if (!found || found.code !== code)
      throw configError(`pair ${config.symbol}: ${which} asset ${code} (id ${id ?? 'none'}) is not a known asset`);
    return found;
  }

  private ratio(name: string, value: DecimalLike): Dec {
    const r = dec(value);
    if (r.lt(0) || r.gt(1)) throw configError(`${name} must be within [0, 1], got ${r.toFixed()}`);
    return r;
  }

  /**
   * From now on, every change is reported to `ledger` and committed at the end of the operation, and the
   * history (closed orders, fills) is read from it rather than kept in memory (ledger.ts). Before any order:
   * the history of the orders before would be in neither.
   */
  attachLedger(ledger: SimLedger): void {
    if (this.orderSeq > 0) throw configError('attach a ledger before the first order');
    this.ledger = ledger;
  }

  /** The highest fill id given so far: the number of fills this engine and the ledger it restored made. */
  get lastFillId(): number {
    return this.fillSeq;
  }

  /** Bumped on every order or trade change (place, arrival, fill, trigger, cancel). */
  get revision(): number {
    return this.changes;
  }

  /**
   * The revision but for orders reaching the book after their latency: an arrival moves only the order's
   * updatedAt, which no orders poll decides anything on (a fill sets it again before a fill could be dated by
   * it), while a fill or a trigger on arrival counts as ever. What the in-process venue offers as
   * Venue.revision, so a backtest passes the polls that would learn nothing.
   */
  get recordRevision(): number {
    return this.changes - this.arrivals;
  }

  /** The engine's time in epoch ms: the injected clock's, else the last price's. */
  now(): number {
    return this.clock ? this.clock.now() : this.tickTime;
  }

  createAccount(options: AccountOptions): void {
    if (this.accounts.has(options.apiKey)) throw configError('an account with this API key already exists');
    const balances = new Map<number, SimBalance>();
    for (const a of this.assetsById.values()) balances.set(a.id, { free: ZERO, locked: ZERO });
    for (const [code, amount] of Object.entries(options.balances ?? {})) {
      const a = this.assetsByCode.get(code);
      if (!a) throw configError(`starting balance for unknown asset ${code}`);
      const value = dec(amount);
      if (value.lt(0)) throw configError(`starting balance of ${code} is negative: ${value.toFixed()}`);
      balances.set(a.id, { free: value, locked: ZERO });
    }
    const userId = options.userId ?? this.accounts.size + 1;
    this.accounts.set(options.apiKey, new SimAccount(options.apiKey, userId, balances));
  }

  hasAccount(apiKey: string): boolean {
    return this.accounts.has(apiKey);
  }

  /**
   * Puts a persisted state (ledger.ts) back into this engine, which must have no account yet, and attaches the
   * `ledger` it came from, which answers the history: the accounts and their balances, the open orders, the id
   * counters and each pair's last price. Refuses a state that names a pair, an asset or an account this engine
   * does not know.
   */
  restore(state: SimState, ledger: SimLedger): void {
    if (this.accounts.size > 0) throw configError('restore needs an engine without accounts');
    const byUser = new Map<number, SimAccount>();
    for (const a of state.accounts) {
      this.createAccount({ apiKey: a.apiKey, userId: a.userId });
      const account = this.account(a.apiKey);
      for (const [code, b] of Object.entries(a.balances)) {
        const asset = this.assetsByCode.get(code);
        if (!asset) throw configError(`restore: a balance of ${code}, which the simulated exchange does not list`);
        account.balances.set(asset.id, { free: dec(b.free), locked: dec(b.locked) });
      }
      byUser.set(a.userId, account);
    }
    for (const symbol of state.symbols)
      if (!this.books.has(symbol))
        throw configError(`restore: orders are on ${symbol}, which the simulated exchange does not list`);
    for (const s of [...state.open].sort((a, b) => a.id - b.id)) {
      const account = byUser.get(s.userId);
      if (!account) throw configError(`restore: order ${s.id} belongs to user ${s.userId}, who has no account`);
      const book = this.book(s.symbol);
      const o = restoredOrder(s, account, book.pair);
      account.open.set(o.id, o);
      // An open MARKET order was still on its way (latency): it arrives with the next price.
      if (o.type === 'MARKET') {
        o.arrivesAt = -Infinity;
        book.arriving.push(o);
        book.nextArrival = -Infinity;
      } else book.open.push(o);
    }
    this.orderSeq = state.lastOrderId;
    this.fillSeq = state.lastFillId;
    this.ledger = ledger;
    for (const m of state.market) {
      const book = this.books.get(m.symbol);
      if (!book) continue; // a pair no longer traded here: its last price is of no use
      book.last = m.price;
      book.lastTime = m.time;
      book.ticker = m.ticker === undefined ? undefined : { ...m.ticker, s: m.symbol, p: m.price, t: m.time };
      this.tickTime = Math.max(this.tickTime, m.time);
    }
    for (const book of this.books.values()) this.recomputeThresholds(book);
    this.changes++;
  }

  /** An account's balances by asset code, exact (what a ledger stores). */
  accountState(apiKey: string): LedgerAccount {
    const account = this.account(apiKey);
    const balances: LedgerAccount['balances'] = {};
    for (const [id, b] of account.balances) {
      const asset = this.assetsById.get(id);
      if (asset) balances[asset.code] = { free: plain(b.free), locked: plain(b.locked) };
    }
    return { apiKey, userId: account.userId, balances };
  }

  /** Each pair's last price, time and ticker, for the pairs that have one. */
  marketState(): LedgerMarket[] {
    const out: LedgerMarket[] = [];
    for (const b of this.books.values())
      if (!Number.isNaN(b.last)) out.push({ symbol: b.pair.symbol, price: b.last, time: b.lastTime, ticker: b.ticker });
    return out;
  }

  private account(apiKey: string): SimAccount {
    const a = this.accounts.get(apiKey);
    if (!a) throw new SimRejectError('UNKNOWN_ACCOUNT', 'no account for this API key');
    return a;
  }

  private book(symbol: string): Book {
    const b = this.books.get(symbol);
    if (!b) throw unknownSymbol(symbol);
    return b;
  }

  /** Pair configurations in the exchange's shape; an unknown symbol gives an empty list. */
  pairConfigs(symbol?: string): PairConfig[] {
    const out: PairConfig[] = [];
    for (const b of this.books.values()) if (symbol === undefined || b.pair.symbol === symbol) out.push(b.pair.config);
    return out;
  }

  assets(): SimAsset[] {
    return [...this.assetsById.values()];
  }

  /** The last price of a pair, undefined before its first. */
  lastPrice(symbol: string): number | undefined {
    const last = this.book(symbol).last;
    return Number.isNaN(last) ? undefined : last;
  }

  /**
   * The per-tick entry point: a new last price for a pair at `timeMs`, with the base volume traded since the
   * previous tick when partial fills are on. Fills, triggers and cancels whatever the price crosses.
   */
  onPrice(symbol: string, price: number, timeMs: number, volume?: number): void {
    if (this.quietPrice(symbol, price, timeMs)) return;
    const book = this.books.get(symbol);
    if (book === undefined) throw unknownSymbol(symbol);
    if (!(price > 0 && price < Infinity))
      throw new SimRejectError('INVALID_NUMBER', `price for ${symbol} must be a positive finite number, got ${price}`, {
        symbol,
      });
    if (volume !== undefined && !(volume >= 0 && volume < Infinity))
      throw new SimRejectError('INVALID_NUMBER', `volume for ${symbol} must be a finite number >= 0, got ${volume}`, {
        symbol,
      });
    book.last = price;
    book.lastTime = timeMs;
    this.tickTime = timeMs;
    const exact = fromWire(price);
    this.pool =
      this.participation && volume !== undefined
        ? fromWire(volume).mul(this.participation).div(book.pair.rules.stepSize).floor().mul(book.pair.rules.stepSize)
        : undefined;
    if (timeMs >= book.nextArrival) this.arrive(book, exact, timeMs);
    this.match(book, exact);
  }

  /** onPrice from a market-watch entry, keeping the whole entry for the market watch. */
  onTicker(ticker: TickerInput, volume?: number): void {
    this.book(ticker.s).ticker = ticker;
    this.onPrice(ticker.s, ticker.p, ticker.t, volume);
  }

  /**
   * onPrice's usual case alone (onPrice starts with it): a tick strictly between the pair's thresholds, with no
   * order arriving by its time, moves the last price and time, and true. Otherwise nothing is done, and false: the
   * tick goes through the rest of onPrice. The pair's market-watch entry stays as it was: a backtest gives it (setTicker) before
   * anything reads it, and moves most ticks without building one.
   */
  quietPrice(symbol: string, price: number, timeMs: number): boolean {
    const book = this.books.get(symbol);
    if (book === undefined || !(price > book.downAt && price < book.upAt && timeMs < book.nextArrival)) return false;
    book.last = price;
    book.lastTime = timeMs;
    this.tickTime = timeMs;
    return true;
  }

  /**
   * What quietPrice asks of the pair's ticks, for a stretch of them moved at once: writes at out[at], out[at + 1]
   * and out[at + 2] the prices a quiet tick lies strictly between and the time it comes before (an unknown pair:
   * bounds no tick meets). They hold until the market moves otherwise than by quietPrice.
   */
  quietBounds(symbol: string, out: Float64Array, at: number): void {
    const book = this.books.get(symbol);
    out[at] = book === undefined ? Infinity : book.downAt;
    out[at + 1] = book === undefined ? -Infinity : book.upAt;
    out[at + 2] = book === undefined ? -Infinity : book.nextArrival;
  }

  /** The pair's market-watch entry, as onTicker keeps it, for a price already moved (quietPrice). */
  setTicker(ticker: TickerInput): void {
    this.book(ticker.s).ticker = ticker;
  }

  /** Market-watch entries of the pairs that have a price (one pair when `symbol` is given). */
  tickers(symbol?: string): SimTicker[] {
    const out: SimTicker[] = [];
    for (const b of this.books.values()) {
      if (Number.isNaN(b.last) || (symbol !== undefined && b.pair.symbol !== symbol)) continue;
      const { base, quote } = b.pair;
      out.push({
        ...b.ticker,
        s: b.pair.symbol,
        p: b.last,
        t: b.lastTime,
        b: base.code,
        q: quote.code,
        bi: base.id,
        qi: quote.id,
      });
    }
    return out;
  }

  placeOrder(apiKey: string, input: SimOrderInput): SimOrderRecord {
    const account = this.account(apiKey);
    const book = this.book(input.symbol);
    const { pair } = book;
    if (pair.config.status !== 'TRADING')
      throw new SimRejectError('PAIR_NOT_TRADING', `${pair.symbol} is ${pair.config.status}, not TRADING`, {
        symbol: pair.symbol,
      });
    const p = parseOrderInput(pair.rules, input);
    const last = Number.isNaN(book.last) ? undefined : fromWire(book.last);
    const context = { symbol: pair.symbol, side: p.side, type: p.type, last: last?.toFixed() };
    if (last === undefined && p.type !== 'LIMIT')
      throw new SimRejectError(
        'NO_MARKET_PRICE',
        `${p.type} order on ${pair.symbol} needs a last price; none yet`,
        context,
      );

    if (p.stopPrice && last) {
      const ok = p.side === 'BUY' ? p.stopPrice.gt(last) : p.stopPrice.lt(last);
      if (!ok)
        throw new SimRejectError(
          'STOP_WRONG_SIDE',
          `${p.side} stopPrice ${p.stopPrice.toFixed()} must be ${p.side === 'BUY' ? 'above' : 'below'} the last price ${last.toFixed()}`,
          context,
        );
    }
    if (p.type === 'OCO' && p.price && last) {
      const ok = p.side === 'BUY' ? p.price.lt(last) : p.price.gt(last);
      if (!ok)
        throw new SimRejectError(
          'OCO_PRICE_WRONG_SIDE',
          `OCO ${p.side} price ${p.price.toFixed()} must be ${p.side === 'BUY' ? 'below' : 'above'} the last price ${last.toFixed()}`,
          context,
        );
    }

    let quantity = p.quantity;
    let takerPrice: Dec | undefined;
    let lockPerUnit = new D(1);
    if (p.type === 'MARKET' && last) {
      takerPrice = this.takerPrice(book, p.side, last, undefined);
      if (p.quoteOrderQty) {
        quantity = quantityForQuote(pair.rules, p.quoteOrderQty, takerPrice);
        if (quantity.isZero())
          throw new SimRejectError(
            'QUANTITY_OUT_OF_BOUNDS',
            `quoteOrderQty ${p.quoteOrderQty.toFixed()} buys less than one step ${pair.rules.stepSize.toFixed()} of ${pair.base.code} at ${takerPrice.toFixed()}`,
            context,
          );
        checkQuantity(pair.rules, quantity);
      }
      takerPrice = this.takerPrice(book, p.side, last, undefined, quantity);
      if (p.side === 'BUY') lockPerUnit = takerPrice;
    } else if (p.side === 'BUY' && p.price) {
      lockPerUnit = p.limitPrice && p.limitPrice.gt(p.price) ? p.limitPrice : p.price;
    }
    if (!quantity) throw new Error('unreachable: order without quantity passed validation');

    const lockAsset = p.side === 'BUY' ? pair.quote : pair.base;
    const lockBalance = this.balanceEntry(account, lockAsset.id);
    const lock = lockPerUnit.mul(quantity);
    if (lockBalance.free.lt(lock))
      throw new SimRejectError(
        'INSUFFICIENT_BALANCE',
        `${p.side} ${quantity.toFixed()} ${pair.symbol} needs ${lock.toFixed()} ${lockAsset.code} free, have ${lockBalance.free.toFixed()}`,
        { ...context, asset: lockAsset.code, needed: lock.toFixed(), free: lockBalance.free.toFixed() },
      );

    const now = this.now();
    const o: SimOrder = {
      id: ++this.orderSeq,
      account,
      pair,
      side: p.side,
      type: p.type,
      quantity,
      price: p.type === 'MARKET' ? ZERO : (p.price ?? ZERO),
      stopPrice: p.stopPrice ?? ZERO,
      limitPrice: p.limitPrice ?? p.price ?? ZERO,
      quoteOrderQty: p.quoteOrderQty,
      useQuoteQty: p.useQuoteQty,
      status: 'NEW',
      stop: p.stopPrice,
      limit: p.type === 'LIMIT' || p.type === 'OCO' ? p.price : undefined,
      leg: undefined,
      lockPerUnit,
      locked: lock,
      executedQty: ZERO,
      executedQuoteQty: ZERO,
      fee: ZERO,
      feeRatio: p.type === 'MARKET' ? book.takerFee : book.makerFee,
      createdAt: now,
      updatedAt: now,
      downAt: -Infinity,
      upAt: Infinity,
    };
    lockBalance.free = lockBalance.free.minus(lock);
    lockBalance.locked = lockBalance.locked.plus(lock);
    if (!this.ledger) {
      account.addOrder(o);
      this.orders.set(o.id, o);
    }
    account.open.set(o.id, o);
    this.changes++;
    this.ledger?.orderChanged(o);

    if (this.latencyMs > 0) {
      // Counted from when the order was decided (the clock's time, at least the last price's): a decision the
      // schedule took after the last price must not arrive earlier than one taken on it.
      const decided = this.clockIsDataTime ? now : this.tickTime;
      const arrivesAt = Math.max(book.lastTime, decided) + this.latencyMs;
      o.arrivesAt = arrivesAt;
      book.arriving.push(o);
      if (arrivesAt < book.nextArrival) book.nextArrival = arrivesAt;
      this.ledger?.commit();
      return orderRecord(o);
    }
    if (takerPrice) this.fill(o, quantity, takerPrice, false, last);
    else if (p.type === 'LIMIT' && last && p.price && marketable(p.side, p.price, last))
      this.fill(o, quantity, this.takerPrice(book, p.side, last, p.price, quantity), false, last);
    if (isOpen(o)) this.rest(book, o);
    this.ledger?.commit();
    return orderRecord(o);
  }

  /** An open order joins the book's resting orders and its thresholds. */
  private rest(book: Book, o: SimOrder): void {
    book.open.push(o);
    this.setThresholds(o, book.through);
    if (o.downAt > book.downAt) book.downAt = o.downAt;
    if (o.upAt < book.upAt) book.upAt = o.upAt;
  }

  /** The orders whose latency has passed at `time` reach the book at `price` (the fill model above). */
  private arrive(book: Book, price: Dec, time: number): void {
    const arrived = book.arriving.filter((o) => (o.arrivesAt as number) <= time);
    book.arriving = book.arriving.filter((o) => (o.arrivesAt as number) > time);
    book.nextArrival = book.arriving.reduce((m, o) => Math.min(m, o.arrivesAt as number), Infinity);
    for (const o of arrived) {
      o.arrivesAt = undefined;
      o.updatedAt = this.now();
      this.changes++;
      this.arrivals++;
      if (o.type === 'MARKET') {
        this.takeMarket(book, o, price);
        // What the tick's volume did not allow waits for the next tick, as if arriving again.
        if (isOpen(o)) {
          o.arrivesAt = time;
          book.arriving.push(o);
          book.nextArrival = Math.min(book.nextArrival, time);
        }
      } else {
        if (o.type === 'LIMIT' && marketable(o.side, o.limit as Dec, price)) this.takeAsTaker(book, o, price);
        if (isOpen(o)) this.rest(book, o);
      }
      this.ledger?.orderChanged(o);
    }
  }

  /**
   * A MARKET order at the book on a tick: sized on the first (a quote amount buys what it buys at the price
   * there), it takes what the tick's share of volume allows at the price there (the rest stays open for the next
   * tick), or is CANCELED with what it got when it cannot go on (a BUY whose funds no longer cover the rest).
   */
  private takeMarket(book: Book, o: SimOrder, price: Dec): void {
    let rest = o.quantity.minus(o.executedQty);
    if (o.quoteOrderQty && o.executedQty.isZero())
      rest = quantityForQuote(book.pair.rules, o.quoteOrderQty, this.takerPrice(book, o.side, price, undefined));
    if (o.side === 'SELL') rest = D.min(rest, o.locked);
    if (rest.isZero()) return this.expire(o);
    const qty = this.pool ? D.min(rest, this.pool) : rest;
    if (qty.isZero()) return;
    const takerPrice = this.takerPrice(book, o.side, price, undefined, qty);
    if (o.side === 'BUY') {
      // The rest locked at this price: what it will spend if the next ticks are no dearer.
      const quote = this.balanceEntry(o.account, book.pair.quote.id);
      const need = takerPrice.mul(rest);
      if (need.gt(o.locked.plus(quote.free))) return this.expire(o);
      quote.free = quote.free.minus(need.minus(o.locked));
      quote.locked = quote.locked.plus(need.minus(o.locked));
      o.locked = need;
      o.lockPerUnit = takerPrice;
    }
    o.quantity = o.executedQty.plus(rest);
    if (this.pool) this.pool = this.pool.minus(qty);
    this.fill(o, qty, takerPrice, false, price);
  }

  /** An order marketable at `price` takes what the tick's share of volume allows, as a taker, within its limit. */
  private takeAsTaker(book: Book, o: SimOrder, price: Dec): void {
    let qty = o.quantity.minus(o.executedQty);
    if (this.pool) qty = D.min(qty, this.pool);
    if (!qty.isZero()) this.take(o, this.takerPrice(book, o.side, price, o.limit, qty), false, price);
  }

  /** An order that cannot take effect on arrival: CANCELED, its lock released. */
  private expire(o: SimOrder): void {
    o.status = 'CANCELED';
    this.close(o);
  }

  cancelOrder(apiKey: string, symbol: string, displayingId: string | number): SimOrderRecord {
    const account = this.account(apiKey);
    const book = this.book(symbol);
    const id = Number(displayingId);
    const o = account.open.get(id) ?? this.pastOrder(id);
    if (!o || o.account !== account || o.pair !== book.pair)
      throw new SimRejectError('UNKNOWN_ORDER', `no order ${displayingId} on ${symbol} for this account`, {
        symbol,
        displayingId: String(displayingId),
      });
    if (!isOpen(o))
      throw new SimRejectError('ORDER_NOT_OPEN', `order ${displayingId} on ${symbol} is already ${o.status}`, {
        symbol,
        displayingId: String(displayingId),
        status: o.status,
      });
    o.status = 'CANCELED';
    o.updatedAt = this.now();
    this.close(o);
    book.open = book.open.filter((x) => x !== o);
    if (o.arrivesAt !== undefined) {
      book.arriving = book.arriving.filter((x) => x !== o);
      book.nextArrival = book.arriving.reduce((m, x) => Math.min(m, x.arrivesAt as number), Infinity);
      o.arrivesAt = undefined;
    }
    // Its leaving changes no other order's thresholds (they depend on the order and book.through): only the book's.
    this.bookThresholds(book);
    this.changes++;
    this.ledger?.orderChanged(o);
    this.ledger?.commit();
    return orderRecord(o);
  }

  /** Wallet entries keyed by asset id as text: value is free + locked, locked_value the locked part. */
  balances(apiKey: string, query: BalanceQuery = {}): SimBalances {
    const account = this.account(apiKey);
    const type = query.type ?? SPOT;
    if (type !== SPOT && type !== FUTURE)
      throw new SimRejectError('INVALID_QUERY', `wallet type must be 0 (spot) or 2 (future), got ${type}`, {
        field: 'type',
      });
    const out: SimBalances = {};
    for (const [id, b] of account.balances) {
      if (query.currency !== undefined && query.currency !== id) continue;
      // The futures wallet is not simulated: it exists, and is empty.
      out[String(id)] =
        type === SPOT
          ? { value: Number(b.free.plus(b.locked).toFixed()), locked_value: Number(b.locked.toFixed()), type }
          : { value: 0, locked_value: 0, type };
    }
    return out;
  }

  /** Exact free and locked amounts of one asset (by code). */
  balanceOf(apiKey: string, assetCode: string): Readonly<SimBalance> {
    const a = this.assetsByCode.get(assetCode);
    if (!a) throw configError(`unknown asset ${assetCode}`);
    return { ...this.balanceEntry(this.account(apiKey), a.id) };
  }

  /** Open orders, oldest first, of one pair or all. */
  openOrders(apiKey: string, symbol?: string): SimOrderRecord[] {
    if (symbol !== undefined) this.book(symbol);
    const out: SimOrderRecord[] = [];
    for (const o of this.account(apiKey).open.values())
      if (symbol === undefined || o.pair.symbol === symbol) out.push(orderRecord(o));
    return out;
  }

  /** Orders of every status, filtered and paged as history-query.ts documents (newest first). */
  orderHistory(apiKey: string, query?: HistoryQuery): SimOrderRecord[] {
    const account = this.account(apiKey);
    const page = historyPage(query);
    if (this.ledger)
      return this.ledger.orderPage(account.userId, page).map((s) => orderRecord(this.pastState(s, account)));
    return queryHistory(
      account.orders,
      (o) => ({ symbol: o.pair.symbol, side: o.side, time: o.createdAt, canceled: o.status === 'CANCELED' }),
      page,
      account.ordersInTimeOrder,
    ).map(orderRecord);
  }

  /** Trades (one per fill), filtered and paged as history-query.ts documents (newest first). */
  tradeHistory(apiKey: string, query?: HistoryQuery): SimTradeRecord[] {
    const account = this.account(apiKey);
    const page = historyPage(query);
    const fills = this.ledger
      ? this.ledger.fillPage(account.userId, page).map((s) => {
          const asset = this.assetsByCode.get(s.feeAsset);
          if (!asset) throw configError(`fill ${s.id} took its fee in ${s.feeAsset}, an unknown asset`);
          return restoredFill(s, asset);
        })
      : queryHistory(
          account.fills,
          (f) => ({ symbol: f.symbol, side: f.side, time: f.time, canceled: false }),
          page,
          account.fillsInTimeOrder,
        );
    return fills.map((f) => {
      const { base, quote } = this.book(f.symbol).pair;
      return tradeRecord(f, base.id, quote.id);
    });
  }

  /** Every fill of the account, oldest first, exact (without a ledger: with one, they are the ledger's). */
  fills(apiKey: string): readonly SimFill[] {
    if (this.ledger) throw new Error("an engine with a ledger keeps no fills in memory: read the ledger's");
    return this.account(apiKey).fills;
  }

  /** A closed order by id (undefined when there is none): the ledger's, else from memory. */
  private pastOrder(id: number): SimOrder | undefined {
    if (!this.ledger) return this.orders.get(id);
    const s = this.ledger.order(id);
    const account = s && [...this.accounts.values()].find((a) => a.userId === s.userId);
    return s && account && this.pastState(s, account);
  }

  /** An order of the ledger's history as an engine object (its pair still listed: restore checked). */
  private pastState(s: LedgerOrder, account: SimAccount): SimOrder {
    return account.open.get(s.id) ?? restoredOrder(s, account, this.book(s.symbol).pair);
  }

  private balanceEntry(account: SimAccount, assetId: number): SimBalance {
    const b = account.balances.get(assetId);
    if (!b) throw new Error(`unreachable: account has no entry for asset ${assetId}`);
    return b;
  }

  /**
   * The price a taker of `quantity` gets: the last price moved against it by the slippage and by the impact of
   * its size (market-impact.ts), on the tick, within its limit.
   */
  private takerPrice(book: Book, side: Side, last: Dec, limit: Dec | undefined, quantity?: Dec): Dec {
    let price = last;
    const impact =
      this.marketImpact && quantity !== undefined ? impactRatio(book.ticker, quantity.toNumber()) * 10_000 : 0;
    if (!this.slippageBps.isZero() || impact > 0) {
      // In basis points, the impact to a hundredth of one (a short decimal: the price stays exact).
      const bps = this.slippageBps.plus(new D(impact.toFixed(2)));
      const tick = book.pair.rules.tickSize;
      const moved = last
        .mul(side === 'BUY' ? BPS.plus(bps) : BPS.minus(bps))
        .div(BPS)
        .div(tick);
      price = (side === 'BUY' ? moved.ceil() : moved.floor()).mul(tick);
      if (price.lt(tick)) price = tick;
    }
    if (limit) price = side === 'BUY' ? D.min(price, limit) : D.max(price, limit);
    return price;
  }

  /** The slow path of a tick that crossed a threshold: triggers first, then resting limits. */
  private match(book: Book, price: Dec): void {
    const through = book.through;
    const triggered: SimOrder[] = [];
    for (const o of book.open) {
      if (!o.stop || !stopCrossed(o.side, o.stop, price)) continue;
      o.stop = undefined;
      if (o.type === 'OCO') {
        o.leg = 'STOP_LIMIT';
        o.limit = o.limitPrice;
      } else {
        o.limit = o.price;
      }
      o.updatedAt = this.now();
      this.changes++;
      this.ledger?.orderChanged(o);
      triggered.push(o);
      if (marketable(o.side, o.limit, price)) this.takeAsTaker(book, o, price);
    }
    const crossed = book.open.filter((o) => {
      if (!isOpen(o) || !o.limit || triggered.includes(o)) return false;
      return o.side === 'BUY' ? price.lte(o.limit.minus(through)) : price.gte(o.limit.plus(through));
    });
    if (this.pool) crossed.sort(byPriority);
    for (const o of crossed) {
      const limit = o.limit as Dec;
      if (this.take(o, limit, true) && o.type === 'OCO' && !o.leg) {
        o.leg = 'LIMIT';
        o.stop = undefined;
      }
    }
    book.open = book.open.filter(isOpen);
    this.recomputeThresholds(book);
    this.ledger?.commit();
  }

  /** Fill as much of the order's remainder as the tick's volume allows; false when nothing was left to take. */
  private take(o: SimOrder, price: Dec, maker: boolean, market?: Dec): boolean {
    let qty = o.quantity.minus(o.executedQty);
    if (this.pool) {
      qty = D.min(qty, this.pool);
      if (qty.isZero()) return false;
      this.pool = this.pool.minus(qty);
    }
    this.fill(o, qty, price, maker, market);
    return true;
  }

  private fill(o: SimOrder, qty: Dec, price: Dec, maker: boolean, market?: Dec): void {
    const { account, pair } = o;
    const base = this.balanceEntry(account, pair.base.id);
    const quote = this.balanceEntry(account, pair.quote.id);
    const quoteQty = price.mul(qty);
    const book = this.book(pair.symbol);
    const ratio = maker ? book.makerFee : book.takerFee;
    const spentFromLock = o.lockPerUnit.mul(qty);
    let fee: Dec;
    if (o.side === 'BUY') {
      quote.locked = quote.locked.minus(spentFromLock);
      quote.free = quote.free.plus(spentFromLock.minus(quoteQty));
      fee = qty.mul(ratio);
      base.free = base.free.plus(qty.minus(fee));
    } else {
      base.locked = base.locked.minus(spentFromLock);
      fee = quoteQty.mul(ratio);
      quote.free = quote.free.plus(quoteQty.minus(fee));
    }
    const now = this.now();
    o.locked = o.locked.minus(spentFromLock);
    o.executedQty = o.executedQty.plus(qty);
    o.executedQuoteQty = o.executedQuoteQty.plus(quoteQty);
    o.fee = o.fee.plus(fee);
    o.feeRatio = ratio;
    o.updatedAt = now;
    o.status = o.executedQty.eq(o.quantity) ? 'FILLED' : 'PARTIALLY_FILLED';
    if (o.status === 'FILLED') this.close(o);
    const f: SimFill = {
      id: ++this.fillSeq,
      orderId: o.id,
      symbol: pair.symbol,
      side: o.side,
      price,
      baseQty: qty,
      quoteQty,
      fee,
      feeAsset: o.side === 'BUY' ? pair.base : pair.quote,
      feeRatio: ratio,
      maker,
      time: now,
    };
    if (market !== undefined) f.market = market;
    if (!this.ledger) account.addFill(f);
    this.changes++;
    if (this.ledger) {
      this.ledger.orderChanged(o);
      this.ledger.filled(f, o);
    }
  }

  /** A final order: release what it still holds and take it off the account's open list. */
  private close(o: SimOrder): void {
    const entry = this.balanceEntry(o.account, o.side === 'BUY' ? o.pair.quote.id : o.pair.base.id);
    entry.locked = entry.locked.minus(o.locked);
    entry.free = entry.free.plus(o.locked);
    o.locked = ZERO;
    o.stop = undefined;
    o.limit = undefined;
    o.account.open.delete(o.id);
  }

  private setThresholds(o: SimOrder, through: Dec): void {
    let down = -Infinity;
    let up = Infinity;
    if (o.stop) {
      if (o.side === 'BUY') up = Number(o.stop.toFixed());
      else down = Number(o.stop.toFixed());
    }
    if (o.limit) {
      if (o.side === 'BUY') down = Number(o.limit.minus(through).toFixed());
      else up = Number(o.limit.plus(through).toFixed());
    }
    o.downAt = down;
    o.upAt = up;
  }

  private recomputeThresholds(book: Book): void {
    for (const o of book.open) this.setThresholds(o, book.through);
    this.bookThresholds(book);
  }

  /** The book's thresholds from its orders' own (a numbers-only pass: thousands of open orders cost little). */
  private bookThresholds(book: Book): void {
    let down = 0;
    let up = Infinity;
    for (const o of book.open) {
      if (o.downAt > down) down = o.downAt;
      if (o.upAt < up) up = o.upAt;
    }
    book.downAt = down;
    book.upAt = up;
  }
}
