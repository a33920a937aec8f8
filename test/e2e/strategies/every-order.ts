/**
 * Test strategy for the end-to-end runs: on its first tick (within 0.5 % of `near`, when given, so that a swing
 * of ±1.5 % around it reaches every level) it places one order of every type, each set to fill as the price
 * swings (MARKET at once, a LIMIT BUY below, a STOP_LIMIT BUY above, an OCO SELL bracket around), then, with `churn`, one marketable LIMIT per tick, alternating sides, so that
 * a run keeps sending orders for a restart or a kill to land in the middle of. onStop logs that it ran.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

interface State {
  opened?: boolean;
  churned?: number;
}

const params = z.object({
  churn: z.number().int().nonnegative().default(0),
  near: z.number().positive().optional(),
});

export default defineStrategy<typeof params, State>({
  name: 'every-order',
  params,
  orderTypes: ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'],
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined) return;
    const at = (pct: number) => p.mul(1 + pct / 100);
    if (!ctx.state.opened) {
      const near = ctx.params.near;
      if (near !== undefined && p.div(near).minus(1).abs().gt(0.005)) return;
      ctx.state.opened = true;
      ctx.market('BUY', { quantity: '0.001' }, { tag: 'market' });
      ctx.limit('BUY', at(-0.5), '0.001', { tag: 'limit' });
      ctx.stopLimit('BUY', at(0.5), at(1), '0.001', { tag: 'stop' });
      ctx.oco('SELL', { price: at(0.5), stopPrice: at(-0.5), limitPrice: at(-1) }, '0.001', { tag: 'oco' });
      return;
    }
    const n = ctx.state.churned ?? 0;
    if (n >= ctx.params.churn) return;
    ctx.state.churned = n + 1;
    if (n % 2 === 0) ctx.limit('BUY', at(0.2), '0.001', { tag: `churn:${n}` });
    else ctx.limit('SELL', at(-0.2), '0.001', { tag: `churn:${n}` });
  },
  onStop(ctx) {
    // The stop tests look for this line: the strategies' onStop ran.
    ctx.log.info('every-order: onStop ran');
  },
});
