/**
 * Test strategy for the end-to-end runs of declared exits: buys 0.001 at MARKET once and does nothing else.
 * Its stop-loss (2 % under the entry) is declared, so the engine holds it on the exchange (held-exits.ts).
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

export default defineStrategy<z.ZodObject, { bought?: boolean }>({
  name: 'stop-guarded',
  params: z.object({}),
  exits: { stopLossPct: 2 },
  onTick(ctx) {
    if (ctx.state.bought === true || ctx.price === undefined) return;
    ctx.state.bought = true;
    ctx.market('BUY', { quantity: '0.001' }, { tag: 'entry' });
  },
});
