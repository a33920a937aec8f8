/**
 * The context's intent builders: round onto the pair's grid never worse for the side than asked (BUY prices
 * down, SELL prices up, quantities down) and queue the intent for the engine, which re-checks everything.
 */
import { D, type Dec, dec, type DecimalLike } from '../market/decimal.js';
import { type PairRules, roundPrice, roundQuantity } from '../market/pair-rules.js';
import type {
  CancelIntent,
  Intent,
  IntentBuilders,
  IntentOptions,
  LimitIntent,
  MarketIntent,
  OcoIntent,
  OrderView,
  Side,
  StopLimitIntent,
} from '../strategy/api.js';

function withTag<T extends object>(intent: T, options: IntentOptions | undefined): T {
  if (options?.tag !== undefined) (intent as T & IntentOptions).tag = options.tag;
  if (options?.closes !== undefined) (intent as T & IntentOptions).closes = options.closes;
  return intent;
}

/**
 * The builders of one instance, queueing on `queue`; `rules` is read at call time (pair configs are refreshed
 * while running). A class the context extends, so that every instance calls the same functions: closures made per
 * instance were new call targets for each backtest of a sweep's thread, and threw away the code compiled for the
 * one before (docs/architecture.md, "Objects made once per run").
 */
export abstract class IntentQueue implements IntentBuilders {
  abstract get rules(): PairRules;

  constructor(private readonly queue: Intent[]) {}

  private roundedPrice(side: Side, p: DecimalLike): Dec {
    return roundPrice(this.rules, p, side);
  }

  private roundedQuantity(q: DecimalLike): Dec {
    return roundQuantity(this.rules, q);
  }

  limit(side: Side, p: DecimalLike, quantity: DecimalLike, options?: IntentOptions): LimitIntent {
    const intent = withTag<LimitIntent>(
      { kind: 'LIMIT', side, price: this.roundedPrice(side, p), quantity: this.roundedQuantity(quantity) },
      options,
    );
    this.queue.push(intent);
    return intent;
  }

  market(
    side: Side,
    amount: { quantity: DecimalLike } | { quoteAmount: DecimalLike },
    options?: IntentOptions,
  ): MarketIntent {
    let intent: MarketIntent;
    if ('quoteAmount' in amount) {
      const step = new D(1).div(new D(10).pow(this.rules.quotePrecision));
      intent = { kind: 'MARKET', side, quoteAmount: dec(amount.quoteAmount).div(step).floor().mul(step) };
    } else {
      intent = { kind: 'MARKET', side, quantity: this.roundedQuantity(amount.quantity) };
    }
    withTag(intent, options);
    this.queue.push(intent);
    return intent;
  }

  stopLimit(
    side: Side,
    stopPrice: DecimalLike,
    p: DecimalLike,
    quantity: DecimalLike,
    options?: IntentOptions,
  ): StopLimitIntent {
    const intent = withTag<StopLimitIntent>(
      {
        kind: 'STOP_LIMIT',
        side,
        stopPrice: this.roundedPrice(side, stopPrice),
        price: this.roundedPrice(side, p),
        quantity: this.roundedQuantity(quantity),
      },
      options,
    );
    this.queue.push(intent);
    return intent;
  }

  oco(
    side: Side,
    legs: { price: DecimalLike; stopPrice: DecimalLike; limitPrice: DecimalLike },
    quantity: DecimalLike,
    options?: IntentOptions,
  ): OcoIntent {
    const intent = withTag<OcoIntent>(
      {
        kind: 'OCO',
        side,
        price: this.roundedPrice(side, legs.price),
        stopPrice: this.roundedPrice(side, legs.stopPrice),
        limitPrice: this.roundedPrice(side, legs.limitPrice),
        quantity: this.roundedQuantity(quantity),
      },
      options,
    );
    this.queue.push(intent);
    return intent;
  }

  cancel(order: OrderView | string): CancelIntent {
    const intent: CancelIntent = { kind: 'CANCEL', localId: typeof order === 'string' ? order : order.localId };
    this.queue.push(intent);
    return intent;
  }
}

/** An IntentQueue whose rules come from a function. */
class QueueOnRules extends IntentQueue {
  constructor(
    private readonly read: () => PairRules,
    queue: Intent[],
  ) {
    super(queue);
  }

  get rules(): PairRules {
    return this.read();
  }
}

/** The same builders as plain functions, for a context made as an object literal (testing/strategy-harness.ts). */
export function intentBuilders(rules: () => PairRules, queue: Intent[]): IntentBuilders {
  const q = new QueueOnRules(rules, queue);
  return {
    limit: (...a) => q.limit(...a),
    market: (...a) => q.market(...a),
    stopLimit: (...a) => q.stopLimit(...a),
    oco: (...a) => q.oco(...a),
    cancel: (...a) => q.cancel(...a),
  };
}
