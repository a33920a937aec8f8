/**
 * A small stand-in for the engine, to test a strategy's decisions on hand-made price paths: it builds a
 * StrategyContext with the real pair rules and the engine's own intent builders, keeps an in-memory order
 * list and account, and applies fills only when a test says so ("the buy at level -1 filled") or, with
 * fillCrossed, as the simulated exchange would on the last price. Every intent goes through the engine's
 * own order checks (pair rules, stop-would-trigger, OCO sides) and a free-balance check, and state
 * round-trips through JSON after each hook. Risk limits are not modelled: that is the engine's business.
 */
import type { z } from 'zod';
import { intentBuilders } from '../engine/intent-builders.js';
import { checkOrder } from '../engine/order-checks.js';
import { PositionTracker } from '../market/position.js';
import type { PairConfig, Ticker } from '../ports/venue-records.js';
import { tickerFromWire, TickerSchema } from '../wire/schemas.js';
import { DEFAULT_PAIRS } from '../sim/default-market.js';
import { D, dec, type Dec, type DecimalLike } from '../market/decimal.js';
import { pairRulesFrom, roundQuantity, type PairRules, type Side } from '../market/pair-rules.js';
import { CandleBuilder } from '../market/candles.js';
import { candleNeeds } from '../strategy/candle-needs.js';
import { IndicatorSet } from '../strategy/indicators.js';
import type {
  Balance,
  FillView,
  Intent,
  OrderIntent,
  OrderView,
  Position,
  StrategyContext,
  StrategyDefinition,
} from '../strategy/api.js';

/** The simulated exchange's BTCUSDT: tick 0.01, base precision 6, every order type. */
export const BTCUSDT: PairConfig = DEFAULT_PAIRS.find((p) => p.symbol === 'BTCUSDT')!;

export interface HarnessOptions<S extends object> {
  /** Raw params as in a strategy file; parsed by the strategy's own schema. */
  params: unknown;
  pair?: PairConfig;
  canCancel?: boolean;
  /** Account holdings at start (free, nothing locked). */
  base?: DecimalLike;
  quote?: DecimalLike;
  state?: S;
  /** Open orders as the journal would hand them over after a restart. */
  openOrders?: OrderView[];
  /** What the venue knows that an OrderView does not: quote amounts of MARKET buys, stops already triggered. */
  venue?: VenueMemory;
}

interface VenueMemory {
  quoteAmounts: Map<string, Dec>;
  triggered: Set<string>;
}

export interface Rejection {
  intent: Intent;
  reason: string;
}

export interface FillOptions {
  quantity?: DecimalLike;
  price?: DecimalLike;
  fee?: DecimalLike;
  feeAsset?: string;
}

type AnyDefinition<S extends object> = StrategyDefinition<z.ZodType, S>;

export class Harness<S extends object = Record<string, unknown>> {
  readonly rules: PairRules;
  readonly params: unknown;
  readonly canCancel: boolean;
  state: S;
  orders: OrderView[];
  price: Dec | undefined;
  time = Date.UTC(2023, 2, 1);
  base: Dec;
  quote: Dec;
  /** The engine's own position arithmetic, fed with this harness's fills. */
  tracker = new PositionTracker();
  /** Every intent accepted so far, and every intent the "engine" refused. */
  readonly placed: Intent[] = [];
  readonly rejected: Rejection[] = [];
  readonly logs: { level: string; msg: string }[] = [];
  /** The band the last onTick declared with ctx.quietBetween (undefined: none): test that it holds with tick(). */
  quietBand: { low: number; high: number } | undefined;
  private readonly venue: VenueMemory;
  private nextId = 1;
  /** The engine's own candle builder and indicator set, fed with this harness's ticks. */
  readonly candleBook: CandleBuilder;
  private readonly indicators: IndicatorSet;

  constructor(
    readonly definition: AnyDefinition<S>,
    readonly options: HarnessOptions<S>,
  ) {
    this.rules = pairRulesFrom(options.pair ?? BTCUSDT);
    this.params = definition.params.parse(options.params);
    this.canCancel = options.canCancel ?? true;
    this.state = structuredClone(options.state ?? ({} as S));
    this.orders = [...(options.openOrders ?? [])];
    this.base = dec(options.base ?? 0);
    this.quote = dec(options.quote ?? 1_000_000);
    this.venue = options.venue ?? { quoteAmounts: new Map(), triggered: new Set() };
    this.nextId = this.orders.length + 1;
    this.candleBook = new CandleBuilder(candleNeeds(definition as StrategyDefinition, this.params));
    this.indicators = new IndicatorSet(definition.indicators?.(this.params) ?? {});
  }

  /** The engine after a restart: persisted state and journaled open orders, fresh everything else. */
  restart(): Harness<S> {
    const next = new Harness(this.definition, {
      ...this.options,
      base: this.base,
      quote: this.quote,
      state: JSON.parse(JSON.stringify(this.state)) as S,
      openOrders: this.orders,
      venue: this.venue,
    });
    next.time = this.time;
    next.tracker = this.tracker;
    next.price = this.price;
    return next;
  }

  /** What an open order holds back: quote for a BUY at its highest price, base for a SELL. */
  private lockOf(o: OrderView): Dec {
    const left = o.quantity.minus(o.filledQuantity);
    if (o.side === 'SELL') return left;
    const quote = this.venue.quoteAmounts.get(o.localId);
    if (quote !== undefined) return o.filledQuantity.isZero() ? quote : new D(0);
    const worst = o.limitPrice && o.price && o.limitPrice.gt(o.price) ? o.limitPrice : (o.price ?? new D(0));
    return left.mul(worst);
  }

  private locked(side: Side): Dec {
    return this.orders.filter((o) => o.side === side).reduce((sum, o) => sum.plus(this.lockOf(o)), new D(0));
  }

  get position(): Position {
    return this.tracker.position;
  }

  balances(): Map<string, Balance> {
    const lockedQuote = this.locked('BUY');
    const lockedBase = this.locked('SELL');
    return new Map([
      [this.rules.baseAsset, { asset: this.rules.baseAsset, free: this.base.minus(lockedBase), locked: lockedBase }],
      [
        this.rules.quoteAsset,
        { asset: this.rules.quoteAsset, free: this.quote.minus(lockedQuote), locked: lockedQuote },
      ],
    ]);
  }

  private ticker(): Ticker | undefined {
    const price = this.price;
    return price && tickerFromWire(TickerSchema.parse({ s: this.rules.symbol, p: price.toFixed(), t: this.time }));
  }

  private context(queue: Intent[]): StrategyContext<unknown, S> {
    const rules = this.rules;
    const price = this.price;
    return {
      instance: `test-${this.definition.name}`,
      symbol: rules.symbol,
      params: this.params,
      rules,
      ticker: this.ticker(),
      // The harness feeds the strategy's own pair only: an informative pair has no ticker or candles here.
      tickerOf: (symbol) => (symbol === rules.symbol ? this.ticker() : undefined),
      price,
      openOrders: this.orders.map((o) => ({ ...o })),
      position: this.position,
      balances: this.balances(),
      canCancel: this.canCancel,
      state: this.state,
      log: {
        debug: (msg) => this.logs.push({ level: 'debug', msg }),
        info: (msg) => this.logs.push({ level: 'info', msg }),
        warn: (msg) => this.logs.push({ level: 'warn', msg }),
        error: (msg) => this.logs.push({ level: 'error', msg }),
      },
      now: () => this.time,
      candles: (tf, count, options) =>
        options?.symbol !== undefined && options.symbol !== rules.symbol
          ? []
          : this.candleBook.candles(tf, count, options?.forming === true),
      indicators: this.indicators.views,
      quietBetween: (low, high) => {
        this.quietBand = { low, high };
      },
      ...intentBuilders(() => rules, queue),
    };
  }

  /** What the order manager would do with the intents of one hook call; returns the accepted ones. */
  private apply(queue: Intent[]): Intent[] {
    const accepted: Intent[] = [];
    for (const intent of queue) {
      const reason = this.refusal(intent);
      if (reason !== undefined) {
        this.rejected.push({ intent, reason });
        continue;
      }
      if (intent.kind === 'CANCEL') {
        this.orders = this.orders.filter((o) => o.localId !== intent.localId);
      } else {
        this.open(intent);
      }
      accepted.push(intent);
      this.placed.push(intent);
    }
    return accepted;
  }

  private open(intent: OrderIntent): void {
    const id = this.nextId++;
    const localId = `L${id}`;
    if (intent.kind === 'MARKET' && intent.quoteAmount !== undefined)
      this.venue.quoteAmounts.set(localId, intent.quoteAmount);
    this.orders.push({
      localId,
      exchangeId: `X${id}`,
      symbol: this.rules.symbol,
      side: intent.side,
      type: intent.kind,
      status: 'OPEN',
      price: intent.kind === 'MARKET' ? undefined : intent.price,
      stopPrice: intent.kind === 'STOP_LIMIT' || intent.kind === 'OCO' ? intent.stopPrice : undefined,
      limitPrice: intent.kind === 'OCO' ? intent.limitPrice : undefined,
      // As in the engine's journal, a MARKET order by quote amount has no base quantity until it fills.
      quantity: intent.kind === 'MARKET' ? (intent.quantity ?? new D(0)) : intent.quantity,
      filledQuantity: new D(0),
      tag: intent.tag,
      createdAt: this.time,
    });
  }

  private refusal(intent: Intent): string | undefined {
    if (intent.kind === 'CANCEL') {
      if (!this.canCancel) return 'venue cannot cancel';
      return this.orders.some((o) => o.localId === intent.localId) ? undefined : 'no such open order';
    }
    const checked = checkOrder(intent, this.rules, this.price);
    if (!checked.ok) return checked.reason;
    const { notional, baseQuantity } = checked.order;
    const free = this.balances().get(intent.side === 'BUY' ? this.rules.quoteAsset : this.rules.baseAsset)!.free;
    const needed = intent.side === 'BUY' ? notional : baseQuantity;
    return needed.gt(free) ? `insufficient balance: needs ${needed.toFixed()}, free ${free.toFixed()}` : undefined;
  }

  /** Run onStart (before any price, as the engine does after reconciling); returns the intents accepted. */
  async start(): Promise<Intent[]> {
    const queue: Intent[] = [];
    await this.definition.onStart?.(this.context(queue));
    return this.settle(queue);
  }

  /** Observe a price `stepMs` after the previous one and run onTick; returns the intents accepted. */
  async tick(price: DecimalLike, stepMs = 1000): Promise<Intent[]> {
    this.price = dec(price);
    this.time += stepMs;
    this.candleBook.tick(this.time, this.price.toNumber(), NaN);
    this.indicators.feed(this.candleBook);
    const queue: Intent[] = [];
    this.quietBand = undefined;
    await this.definition.onTick(this.context(queue));
    return this.settle(queue);
  }

  private settle(queue: Intent[]): Intent[] {
    this.state = JSON.parse(JSON.stringify(this.state)) as S;
    return this.apply(queue);
  }

  /** The open order with this tag; throws when there is none, so a test cannot fill a phantom. */
  order(tag: string): OrderView {
    const order = this.orders.find((o) => o.tag === tag);
    if (!order) throw new Error(`no open order tagged ${tag} (open: ${this.orders.map((o) => o.tag).join(', ')})`);
    return order;
  }

  /**
   * Fill (all of or part of) an open order, update account and position, and run onFill. By default the
   * whole remainder fills at the order's price (an OCO's at its take-profit leg, a MARKET at the last price).
   */
  async fill(target: string | OrderView, options: FillOptions = {}): Promise<Intent[]> {
    const order = typeof target === 'string' ? this.order(target) : target;
    const price = options.price === undefined ? (order.price ?? this.price!) : dec(options.price);
    const quoteAmount = this.venue.quoteAmounts.get(order.localId);
    const remainder =
      quoteAmount === undefined
        ? order.quantity.minus(order.filledQuantity)
        : roundQuantity(this.rules, quoteAmount.div(price));
    const qty = options.quantity === undefined ? remainder : dec(options.quantity);
    const fee = dec(options.fee ?? 0);
    const feeAsset = options.feeAsset ?? this.rules.quoteAsset;
    order.filledQuantity = order.filledQuantity.plus(qty);
    if (quoteAmount !== undefined) order.quantity = order.filledQuantity;
    order.status = order.filledQuantity.gte(order.quantity) ? 'FILLED' : 'PARTIALLY_FILLED';
    if (order.status === 'FILLED') this.orders = this.orders.filter((o) => o !== order);

    const sign = order.side === 'BUY' ? 1 : -1;
    const baseFee = feeAsset === this.rules.baseAsset ? fee : new D(0);
    const quoteFee = feeAsset === this.rules.quoteAsset ? fee : new D(0);
    this.base = this.base.plus(qty.mul(sign)).minus(baseFee);
    this.quote = this.quote.minus(price.mul(qty).mul(sign)).minus(quoteFee);
    const feeIn = feeAsset === this.rules.baseAsset ? 'base' : feeAsset === this.rules.quoteAsset ? 'quote' : 'other';
    this.tracker.apply({ side: order.side, price, qty, fee, feeIn, time: this.time });

    const fill: FillView = {
      fillId: `F${this.nextId++}`,
      order: { ...order },
      side: order.side,
      price,
      quantity: qty,
      fee,
      feeAsset,
      time: this.time,
    };
    const queue: Intent[] = [];
    await this.definition.onFill?.(this.context(queue), fill);
    return this.settle(queue);
  }

  /**
   * The price at which an open order fills on the last price, as the simulated exchange fills it: a resting
   * limit (or an OCO's limit leg) at its own price once reached, a MARKET at once at the last price, a stop
   * once triggered as a taker at the last price within its limit (a gapped one rests until the price comes back).
   */
  private fillPrice(o: OrderView, last: Dec): Dec | undefined {
    const buy = o.side === 'BUY';
    if (o.type === 'MARKET') return last;
    if ((o.type === 'STOP_LIMIT' || o.type === 'OCO') && !this.venue.triggered.has(o.localId)) {
      if (buy ? last.gte(o.stopPrice!) : last.lte(o.stopPrice!)) this.venue.triggered.add(o.localId);
    }
    if (this.venue.triggered.has(o.localId)) {
      const limit = o.type === 'OCO' ? o.limitPrice! : o.price!;
      return (buy ? last.lte(limit) : last.gte(limit)) ? last : undefined;
    }
    if (o.type === 'STOP_LIMIT') return undefined;
    return (buy ? last.lte(o.price!) : last.gte(o.price!)) ? o.price : undefined;
  }

  /** Fill every open order the current price reaches, repeating for orders placed on those fills. */
  async fillCrossed(): Promise<Intent[]> {
    const last = this.price!;
    const placed: Intent[] = [];
    for (;;) {
      let price: Dec | undefined;
      const crossed = this.orders.find((o) => (price = this.fillPrice(o, last)) !== undefined);
      if (!crossed || price === undefined) return placed;
      placed.push(...(await this.fill(crossed, { price })));
    }
  }

  /** Tick through a path of prices, `stepMs` apart, filling what each one reaches; returns what was placed. */
  async walk(prices: readonly DecimalLike[], stepMs = 1000): Promise<Intent[]> {
    const placed: Intent[] = [];
    for (const p of prices) {
      placed.push(...(await this.tick(p, stepMs)));
      placed.push(...(await this.fillCrossed()));
    }
    return placed;
  }
}
