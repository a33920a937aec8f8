/**
 * Test strategy for the exit and stop-buy runs: on its first tick it buys 0.002 at market (the position an
 * exit sells), rests an OCO SELL bracket of 0.001 well outside the swing (a protective order the exit cancels)
 * and a LIMIT BUY well below; then, with `dips`, one more resting LIMIT BUY per tick (entries stop-buy refuses).
 * With `dips: false` it places exactly three orders, so a crash point can be aimed at the next one.
 */
import { z } from 'zod';
import { defineStrategy } from '../../../src/strategy/api.js';

interface State {
  opened?: boolean;
  dips?: number;
}

const params = z.object({ dips: z.boolean().default(true) });

export default defineStrategy<typeof params, State>({
  name: 'exit-target',
  params,
  orderTypes: ['LIMIT', 'MARKET', 'OCO'],
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined) return;
    const at = (pct: number) => p.mul(1 + pct / 100);
    if (!ctx.state.opened) {
      ctx.state.opened = true;
      ctx.market('BUY', { quantity: '0.002' }, { tag: 'entry' });
      ctx.oco('SELL', { price: at(5), stopPrice: at(-5), limitPrice: at(-6) }, '0.001', { tag: 'bracket' });
      ctx.limit('BUY', at(-5), '0.001', { tag: 'dip' });
      return;
    }
    if (!ctx.params.dips) return;
    const n = ctx.state.dips ?? 0;
    if (n >= 200) return;
    ctx.state.dips = n + 1;
    ctx.limit('BUY', at(-5), '0.001', { tag: `dip-${n}` });
  },
});
