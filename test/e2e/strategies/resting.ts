/**
 * Test strategy for the end-to-end runs: keeps `count` LIMIT BUYs resting far below the price (half of it),
 * one more per tick until there are that many: open orders that never fill, for journal and adoption tests.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

const params = z.object({ count: z.number().int().positive().default(3) });

export default defineStrategy<typeof params>({
  name: 'resting',
  params,
  orderTypes: ['LIMIT'],
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined || ctx.openOrders.length >= ctx.params.count) return;
    ctx.limit('BUY', p.mul(0.5), '0.001', { tag: `rest${ctx.openOrders.length + 1}` });
  },
});
