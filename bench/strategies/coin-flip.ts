/**
 * The inside-candle strategy's control: at the same moments (once a minute, at its first decision from +15 s) it
 * buys at MARKET on a seeded coin that comes up with probability `rate`, and sells at the first decision of the
 * next minute. With `rate` set to the share of minutes the inside-candle strategy bought in, both trade as often:
 * what the other makes beyond this is what it learnt. bench/candle-path.ts runs both.
 */
import { z } from 'zod';
import { defineStrategy, tradableQuantity } from '../../src/strategy/api.js';

interface State {
  minute?: number;
  decided?: boolean;
  seed?: number;
}

const params = z.object({
  quantity: z.string().default('0.01'),
  rate: z.number().min(0).max(1).default(0.5),
  seed: z.number().int().default(38),
});

/** mulberry32: the next seed and a number in [0, 1). */
function next(seed: number): [number, number] {
  const s = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(s ^ (s >>> 15), 1 | s);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return [s, ((t ^ (t >>> 14)) >>> 0) / 4294967296];
}

export default defineStrategy<typeof params, State>({
  name: 'coin-flip',
  params,
  orderTypes: ['MARKET'],
  onTick(ctx) {
    const s = ctx.state;
    const now = ctx.now();
    const minute = Math.floor(now / 60_000);
    if (minute !== s.minute) {
      s.minute = minute;
      s.decided = false;
      const held = ctx.price === undefined ? undefined : tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price);
      if (held !== undefined && held.gt(0) && ctx.openOrders.length === 0)
        ctx.market('SELL', { quantity: held.toFixed() }, { tag: 'out' });
    }
    if (s.decided || now % 60_000 < 15_000 || ctx.openOrders.length > 0 || ctx.position.quantity.gt(0)) return;
    s.decided = true;
    const [seed, draw] = next(s.seed ?? ctx.params.seed);
    s.seed = seed;
    if (draw < ctx.params.rate) ctx.market('BUY', { quantity: ctx.params.quantity }, { tag: 'in' });
  },
});
