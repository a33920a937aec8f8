/**
 * Test strategy that decides by the clock alone: on the first tick of each recorded quarter hour it rests a
 * LIMIT BUY `offsetPct` below the price (one at a time); an order of its own older than `maxAgeMinutes` is
 * cancelled; a filled buy is sold back with a LIMIT `offsetPct` above. On a venue whose clock is not the
 * data's (a daemon on paper on the wall clock), it would buy at other prices and cancel at other moments.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

interface State {
  slot?: number;
}

const params = z.object({
  offsetPct: z.number().positive().default(0.1),
  maxAgeMinutes: z.number().positive().default(10),
  quantity: z.string().default('0.001'),
});

const QUARTER_HOUR = 15 * 60_000;

export default defineStrategy<typeof params, State>({
  name: 'on-the-clock',
  params,
  orderTypes: ['LIMIT'],
  requiresCancel: true,
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined) return;
    const now = ctx.now();
    for (const o of ctx.openOrders)
      if (o.status === 'OPEN' && now - o.createdAt >= ctx.params.maxAgeMinutes * 60_000) ctx.cancel(o);
    const slot = Math.floor(now / QUARTER_HOUR);
    if (slot === ctx.state.slot) return;
    ctx.state.slot = slot;
    if (ctx.openOrders.some((o) => o.side === 'BUY')) return;
    ctx.limit('BUY', p.mul(1 - ctx.params.offsetPct / 100), ctx.params.quantity, { tag: `buy:${slot}` });
  },
  onFill(ctx, fill) {
    if (fill.side !== 'BUY') return;
    ctx.limit('SELL', fill.price.mul(1 + ctx.params.offsetPct / 100), fill.quantity, { tag: 'sell' });
  },
});
