/**
 * Issue 38's free lunch: a strategy that decides inside a one-minute candle from the ticks it has seen so far.
 * Once a minute, at its first decision from +15 s (the import's first extreme), it buys at MARKET when the price
 * has risen: above the minute's open when it moved inside the minute (on a path that shows the first extreme
 * at +15 s, a price above the open can only be the high, so the low comes next), above the previous minute's
 * close when it did not. It sells what it holds at MARKET at the first decision of the next minute.
 * bench/candle-path.ts runs it beside the coin flip.
 */
import { z } from 'zod';
import { defineStrategy, tradableQuantity } from '../../src/strategy/api.js';

interface State {
  minute?: number;
  open?: string;
  previousClose?: string;
  last?: string;
  decided?: boolean;
}

const params = z.object({ quantity: z.string().default('0.01') });

export default defineStrategy<typeof params, State>({
  name: 'inside-candle',
  params,
  orderTypes: ['MARKET'],
  onTick(ctx) {
    const p = ctx.price;
    if (p === undefined) return;
    const s = ctx.state;
    const now = ctx.now();
    const minute = Math.floor(now / 60_000);
    if (minute !== s.minute) {
      s.previousClose = s.last;
      s.minute = minute;
      s.open = p.toFixed();
      s.decided = false;
      const held = ctx.price === undefined ? undefined : tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price);
      if (held !== undefined && held.gt(0) && ctx.openOrders.length === 0)
        ctx.market('SELL', { quantity: held.toFixed() }, { tag: 'out' });
    }
    s.last = p.toFixed();
    if (s.decided || now % 60_000 < 15_000 || ctx.openOrders.length > 0 || ctx.position.quantity.gt(0)) return;
    s.decided = true;
    const reference = p.eq(s.open as string) ? s.previousClose : s.open;
    if (reference !== undefined && p.gt(reference)) ctx.market('BUY', { quantity: ctx.params.quantity }, { tag: 'in' });
  },
});
