/**
 * The context's intent builders: round onto the pair's grid never worse for the side than asked (BUY prices
 * down, SELL prices up, quantities down) and queue the intent for the engine, which re-checks everything.
 */
import { D, dec, type DecimalLike } from '../market/decimal.js';
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
  return intent;
}

/** Builders bound to one instance: `rules` is read at call time (pair configs are refreshed while running). */
export function intentBuilders(rules: () => PairRules, queue: Intent[]): IntentBuilders {
  const price = (side: Side, p: DecimalLike) => roundPrice(rules(), p, side);
  const qty = (q: DecimalLike) => roundQuantity(rules(), q);
  return {
    limit(side, p, quantity, options): LimitIntent {
      const intent = withTag<LimitIntent>(
        { kind: 'LIMIT', side, price: price(side, p), quantity: qty(quantity) },
        options,
      );
      queue.push(intent);
      return intent;
    },
    market(side, amount, options): MarketIntent {
      let intent: MarketIntent;
      if ('quoteAmount' in amount) {
        const step = new D(1).div(new D(10).pow(rules().quotePrecision));
        intent = { kind: 'MARKET', side, quoteAmount: dec(amount.quoteAmount).div(step).floor().mul(step) };
      } else {
        intent = { kind: 'MARKET', side, quantity: qty(amount.quantity) };
      }
      withTag(intent, options);
      queue.push(intent);
      return intent;
    },
    stopLimit(side, stopPrice, p, quantity, options): StopLimitIntent {
      const intent = withTag<StopLimitIntent>(
        { kind: 'STOP_LIMIT', side, stopPrice: price(side, stopPrice), price: price(side, p), quantity: qty(quantity) },
        options,
      );
      queue.push(intent);
      return intent;
    },
    oco(side, legs, quantity, options): OcoIntent {
      const intent = withTag<OcoIntent>(
        {
          kind: 'OCO',
          side,
          price: price(side, legs.price),
          stopPrice: price(side, legs.stopPrice),
          limitPrice: price(side, legs.limitPrice),
          quantity: qty(quantity),
        },
        options,
      );
      queue.push(intent);
      return intent;
    },
    cancel(order: OrderView | string): CancelIntent {
      const intent: CancelIntent = { kind: 'CANCEL', localId: typeof order === 'string' ? order : order.localId };
      queue.push(intent);
      return intent;
    },
  };
}
