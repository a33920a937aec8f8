/**
 * A small stand-in for the engine, to test a strategy's decisions before the real engine (src/engine/)
 * exists: it builds a StrategyContext with the real pair rules, keeps an in-memory order list and account,
 * and applies fills only when a test says so ("the buy at level -1 filled"). Like the engine it rejects
 * intents that break the pair rules or exceed the free balance, and it round-trips state through JSON.
 * The engine-level tests replace it once the engine runs strategies; keep it this small until then.
 */
import type { z } from 'zod';
import { PairConfigSchema, TickerSchema, type PairConfig } from '../../src/exchange/schemas.js';
import { D, dec, type Dec, type DecimalLike } from '../../src/market/decimal.js';
import {
  pairRulesFrom,
  priceProblem,
  quantityProblem,
  roundPrice,
  roundQuantity,
  type PairRules,
  type Side,
} from '../../src/market/pair-rules.js';
import type {
  Balance,
  FillView,
  Intent,
  IntentOptions,
  OrderView,
  Position,
  StrategyContext,
  StrategyDefinition,
} from '../../src/strategy/api.js';

export const BTCUSDT: PairConfig = PairConfigSchema.parse({
  symbol: 'BTCUSDT',
  status: 'TRADING',
  baseAsset: 'BTC',
  baseAssetPrecision: 6,
  quoteAsset: 'USDT',
  quotePrecision: 2,
  orderTypes: ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'],
  filters: [{ filterType: 'PRICE_FILTER', minPrice: 0.01, maxPrice: 1000000, tickSize: 0.01 }],
});

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
  position: Position = { quantity: new D(0), averagePrice: new D(0), realisedPnl: new D(0) };
  /** Every intent accepted so far, and every intent the "engine" refused. */
  readonly placed: Intent[] = [];
  readonly rejected: Rejection[] = [];
  readonly logs: { level: string; msg: string }[] = [];
  private nextId = 1;

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
  }

  /** The engine after a restart: persisted state and journaled open orders, fresh everything else. */
  restart(): Harness<S> {
    const next = new Harness(this.definition, {
      ...this.options,
      base: this.base,
      quote: this.quote,
      state: JSON.parse(JSON.stringify(this.state)) as S,
      openOrders: this.orders,
    });
    next.position = this.position;
    next.price = this.price;
    return next;
  }

  private locked(side: Side): Dec {
    return this.orders
      .filter((o) => o.side === side)
      .reduce((sum, o) => {
        const left = o.quantity.minus(o.filledQuantity);
        return sum.plus(side === 'BUY' ? left.mul(o.price ?? 0) : left);
      }, new D(0));
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

  private context(queue: Intent[]): StrategyContext<unknown, S> {
    const rules = this.rules;
    const push = <I extends Intent>(intent: I): I => {
      queue.push(intent);
      return intent;
    };
    const opts = (o: IntentOptions | undefined) => (o?.tag === undefined ? {} : { tag: o.tag });
    const price = this.price;
    return {
      instance: 'test-grid',
      symbol: rules.symbol,
      params: this.params,
      rules,
      ticker: price && TickerSchema.parse({ s: rules.symbol, p: price.toFixed(), t: this.time }),
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
      limit: (side, p, q, o) =>
        push({ kind: 'LIMIT', side, price: roundPrice(rules, p, side), quantity: roundQuantity(rules, q), ...opts(o) }),
      market: (side, amount, o) =>
        push({
          kind: 'MARKET',
          side,
          ...('quantity' in amount
            ? { quantity: roundQuantity(rules, amount.quantity) }
            : { quoteAmount: dec(amount.quoteAmount) }),
          ...opts(o),
        }),
      stopLimit: (side, stop, p, q, o) =>
        push({
          kind: 'STOP_LIMIT',
          side,
          stopPrice: roundPrice(rules, stop, side),
          price: roundPrice(rules, p, side),
          quantity: roundQuantity(rules, q),
          ...opts(o),
        }),
      oco: (side, legs, q, o) =>
        push({
          kind: 'OCO',
          side,
          price: roundPrice(rules, legs.price, side),
          stopPrice: roundPrice(rules, legs.stopPrice, side),
          limitPrice: roundPrice(rules, legs.limitPrice, side),
          quantity: roundQuantity(rules, q),
          ...opts(o),
        }),
      cancel: (order) => push({ kind: 'CANCEL', localId: typeof order === 'string' ? order : order.localId }),
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
      } else if (intent.kind === 'LIMIT') {
        const id = this.nextId++;
        this.orders.push({
          localId: `L${id}`,
          exchangeId: `X${id}`,
          symbol: this.rules.symbol,
          side: intent.side,
          type: 'LIMIT',
          status: 'OPEN',
          price: intent.price,
          stopPrice: undefined,
          limitPrice: undefined,
          quantity: intent.quantity,
          filledQuantity: new D(0),
          tag: intent.tag,
          createdAt: this.time,
        });
      }
      accepted.push(intent);
      this.placed.push(intent);
    }
    return accepted;
  }

  private refusal(intent: Intent): string | undefined {
    if (intent.kind === 'CANCEL') {
      if (!this.canCancel) return 'venue cannot cancel';
      return this.orders.some((o) => o.localId === intent.localId) ? undefined : 'no such open order';
    }
    if (intent.kind !== 'LIMIT') return `the harness only runs LIMIT orders, got ${intent.kind}`;
    const problem = priceProblem(this.rules, intent.price) ?? quantityProblem(this.rules, intent.quantity);
    if (problem) return problem;
    const free = this.balances().get(intent.side === 'BUY' ? this.rules.quoteAsset : this.rules.baseAsset)!.free;
    const needed = intent.side === 'BUY' ? intent.price.mul(intent.quantity) : intent.quantity;
    return needed.gt(free) ? `insufficient balance: needs ${needed.toFixed()}, free ${free.toFixed()}` : undefined;
  }

  /** Observe a price and run onTick; returns the intents accepted. */
  async tick(price: DecimalLike): Promise<Intent[]> {
    this.price = dec(price);
    this.time += 1000;
    const queue: Intent[] = [];
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

  /** Fill (all of or part of) an open order, update account and position, and run onFill. */
  async fill(target: string | OrderView, options: FillOptions = {}): Promise<Intent[]> {
    const order = typeof target === 'string' ? this.order(target) : target;
    const qty = options.quantity === undefined ? order.quantity.minus(order.filledQuantity) : dec(options.quantity);
    const price = options.price === undefined ? order.price! : dec(options.price);
    const fee = dec(options.fee ?? 0);
    const feeAsset = options.feeAsset ?? this.rules.quoteAsset;
    order.filledQuantity = order.filledQuantity.plus(qty);
    order.status = order.filledQuantity.gte(order.quantity) ? 'FILLED' : 'PARTIALLY_FILLED';
    if (order.status === 'FILLED') this.orders = this.orders.filter((o) => o !== order);

    const sign = order.side === 'BUY' ? 1 : -1;
    const baseFee = feeAsset === this.rules.baseAsset ? fee : new D(0);
    const quoteFee = feeAsset === this.rules.quoteAsset ? fee : new D(0);
    this.base = this.base.plus(qty.mul(sign)).minus(baseFee);
    this.quote = this.quote.minus(price.mul(qty).mul(sign)).minus(quoteFee);
    this.position = this.nextPosition(order.side, price, qty);

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

  /** Fill, at their own prices, every open order the current price has reached; repeats for new ones. */
  async fillCrossed(): Promise<void> {
    const price = this.price!;
    for (;;) {
      const crossed = this.orders.find((o) => (o.side === 'BUY' ? price.lte(o.price!) : price.gte(o.price!)));
      if (!crossed) return;
      await this.fill(crossed);
    }
  }

  private nextPosition(side: Side, price: Dec, qty: Dec): Position {
    const { quantity, averagePrice, realisedPnl } = this.position;
    if (side === 'BUY') {
      const total = quantity.plus(qty);
      return { quantity: total, averagePrice: averagePrice.mul(quantity).plus(price.mul(qty)).div(total), realisedPnl };
    }
    const left = quantity.minus(qty);
    return {
      quantity: left,
      averagePrice: left.gt(0) ? averagePrice : new D(0),
      realisedPnl: realisedPnl.plus(price.minus(averagePrice).mul(qty)),
    };
  }
}
