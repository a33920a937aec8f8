/**
 * Chaos-suite strategy: logs `logBytes` characters at info on every tick (to fill a log pipe nobody reads),
 * and, with `churn`, keeps one marketable LIMIT order going per tick, alternating sides, so that a run keeps
 * sending orders and recording fills for faults and kills to land on.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

const params = z.object({
  logBytes: z.number().int().nonnegative().default(0),
  churn: z.boolean().default(false),
  quantity: z.string().default('0.001'),
});

interface State {
  n?: number;
}

export default defineStrategy<typeof params, State>({
  name: 'chatty',
  params,
  orderTypes: ['LIMIT'],
  onTick(ctx) {
    if (ctx.params.logBytes > 0) ctx.log.info('chatter', { text: 'x'.repeat(ctx.params.logBytes) });
    const p = ctx.price;
    if (!ctx.params.churn || p === undefined) return;
    const n = ctx.state.n ?? 0;
    ctx.state.n = n + 1;
    if (n % 2 === 0) ctx.limit('BUY', p.mul(1.002), ctx.params.quantity, { tag: `c${n}` });
    else ctx.limit('SELL', p.mul(0.998), ctx.params.quantity, { tag: `c${n}` });
  },
});
