/**
 * The probe from issue 21: buys on any down-tick and sells on the next tick. On a zero-latency fill model
 * over candle data it "makes" money by buying each candle's low and selling its high; on a fair one it loses
 * its spread to the path. bench/fill-model.ts runs it.
 */
import { z } from 'zod';
import { defineStrategy } from '../../src/strategy/api.js';

interface State {
  last?: string;
  holding?: boolean;
}

const params = z.object({ quantity: z.string().default('0.01') });

export default defineStrategy<typeof params, State>({
  name: 'down-tick',
  params,
  orderTypes: ['MARKET'],
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined) return;
    const last = ctx.state.last;
    ctx.state.last = p.toFixed();
    if (ctx.openOrders.length > 0) return;
    const held = ctx.position.quantity;
    if (held.gte(ctx.params.quantity)) ctx.market('SELL', { quantity: held.toFixed() });
    else if (last !== undefined && p.lt(last)) ctx.market('BUY', { quantity: ctx.params.quantity });
  },
});
