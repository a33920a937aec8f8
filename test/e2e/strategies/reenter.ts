/**
 * Test strategy for the end-to-end runs of declared exits and protections: whenever it is flat with nothing
 * open it buys 0.001 at MARKET (tag `entry`), at most `entries` times; it never sells. Its exits and
 * protections come from the strategy file, so the engine alone decides when it is out and when it may re-enter.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

const Params = z.object({ entries: z.number().int().positive().default(1_000) });

export default defineStrategy<typeof Params, { entries?: number }>({
  name: 'reenter',
  params: Params,
  onTick(ctx) {
    if (ctx.price === undefined || ctx.openOrders.length > 0 || ctx.position.quantity.gte('0.0005')) return;
    const entries = ctx.state.entries ?? 0;
    if (entries >= ctx.params.entries) return;
    ctx.state.entries = entries + 1;
    ctx.market('BUY', { quantity: '0.001' }, { tag: 'entry' });
  },
});
