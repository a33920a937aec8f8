/**
 * The fill of an order that rested however long is recorded. Was: order history is read newest first, at most 20 pages of 100, from the oldest lookup's sentAt. An
 * order that rested while more than 2000 newer orders were created on the symbol (a grid over weeks, or another
 * instance cycling orders) cannot be found once it leaves open orders; being "gone" with history incomplete it is
 * left as it is, and with no other order owing fills trade history is not read either: its fill is never
 * recorded and the strategy believes the order is still open.
 */
import { expect, it } from 'vitest';
import type { FillView } from '../../src/strategy/api.js';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
it('records the fill of a long-resting order after 2000+ newer orders on the symbol', async () => {
  h = new Harness({ balances: { USDT: '1000000', BTC: '10' } });
  h.price(100);
  const fills: FillView[] = [];
  let done = false;
  await h.start([
    instance(
      'a',
      strategy({
        onTick(ctx) {
          if (!done) ctx.limit('BUY', '90', '0.01', { tag: 'outer' });
          done = true;
        },
        onFill: (_c, f) => void fills.push(f),
      }),
    ),
  ]);
  await h.tick(100);
  expect(h.store.orders.get('a-1')?.status).toBe('OPEN');
  // Weeks of other activity on the symbol: 2100 orders placed and cancelled (newer than a-1).
  for (let i = 0; i < 2100; i++) {
    h.clock.advance(1000);
    const o = await h.venue.inner.createOrder({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      price: '50',
      quantity: '0.001',
    });
    await h.venue.inner.cancelOrder(o.symbol, o.displayingId);
  }
  await h.tick(100);
  // The outer level finally fills, alone.
  await h.tick(89);
  for (let i = 0; i < 5; i++) await h.tick(100);
  expect(h.sim.fills('k')).toHaveLength(1); // the venue filled it
  expect(h.store.orders.get('a-1')?.status).toBe('FILLED');
  expect(fills).toHaveLength(1);
});
