/**
 * The bench's order cost: a MARKET BUY of `quantity` once every `everyMinutes` of the data, sold again the next
 * time, and nothing else (no candles, no indicators, no state). Against the idle strategy on the same data, what
 * its backtest costs more, divided by its orders, is what one order costs a backtest (journal, venue, fills).
 */
import { defineStrategy, decimalParam, tradableQuantity, z } from '../../src/strategy/api.js';

const params = z.object({ everyMinutes: z.number().int().positive(), quantity: decimalParam });

/** The last period acted in, by instance (its params object): in memory, so a tick writes nothing. */
const actedIn = new WeakMap<object, number>();

export default defineStrategy({
  name: 'churn',
  description: 'one MARKET order every `everyMinutes`, alternating sides',
  params,
  orderTypes: ['MARKET'],
  onTick(ctx) {
    const period = Math.floor(ctx.now() / (ctx.params.everyMinutes * 60_000));
    if (actedIn.get(ctx.params) === period || ctx.openOrders.length > 0 || ctx.price === undefined) return;
    actedIn.set(ctx.params, period);
    const held = tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price);
    if (held.isZero()) ctx.market('BUY', { quantity: ctx.params.quantity });
    else ctx.market('SELL', { quantity: held });
  },
});
