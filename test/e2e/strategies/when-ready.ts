/**
 * Test strategy for warm-up: buys 0.001 at MARKET at the first tick its EMA(`period`) of five-minute candles is
 * ready (converged), once; it never sells. Warmed up as its period asks, it buys at the first tick of a run.
 */
import { z } from 'zod';
import { defineStrategy, ema } from '../../../src/strategy/api.js';

const Params = z.object({ period: z.number().int().min(2).max(1000).default(20) });

export default defineStrategy<typeof Params, { bought?: boolean }>({
  name: 'when-ready',
  params: Params,
  indicators: (p) => ({ trend: ema('5m', p.period) }),
  onTick(ctx) {
    if (ctx.price === undefined || ctx.state.bought === true || !ctx.indicators.trend!.ready) return;
    ctx.state.bought = true;
    ctx.market('BUY', { quantity: '0.001' }, { tag: 'entry' });
  },
});
