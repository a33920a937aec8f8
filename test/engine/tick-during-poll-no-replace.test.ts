/**
 * Regression test for a review finding (fixed): onTick runs outside the engine's lock. Between the poll recording a fill (the order leaves
 * openOrders) and delivering it to onFill, pollLocked awaits the balance refresh; a market tick in that gap
 * sees the order gone with its fill not yet delivered and re-issues it.
 */
import { expect, it } from 'vitest';
import type { FillView, StrategyContext } from '../../src/strategy/api.js';
import { Harness, instance, strategy, tickWhilePollDelivers } from './harness.js';

let h: Harness;
it('a tick while the poll awaits the balance refresh does not re-place a filled order', async () => {
  h = new Harness();
  h.price(100);
  const fills: FillView[] = [];
  // The engine's own test strategy: one BUY while none is open and none has filled.
  const def = strategy({
    onTick(ctx: StrategyContext) {
      if (ctx.openOrders.length === 0 && fills.length === 0) ctx.limit('BUY', '99.5', '0.01', { tag: 'entry' });
    },
    onFill(_ctx, fill) {
      fills.push(fill);
    },
  });
  await h.start([instance('a', def)]);
  await h.tick(100); // places a-1
  expect(h.store.orders.get('a-1')?.status).toBe('OPEN');

  // a-1 fills; the poll records the fill, and while it awaits the balance refresh before delivering it, the
  // market job fires (a different cron job): the tick runs outside the lock.
  await tickWhilePollDelivers(h, 99.4);
  await h.engine!.pollOrders();

  const placed = h.store.db.prepare("SELECT local_id, status FROM orders WHERE instance = 'a'").all();
  // Expected: only a-1. Actual: a second BUY a-2 the strategy would never have asked for had it seen its fill.
  expect(placed).toEqual([{ local_id: 'a-1', status: 'FILLED' }]);
  expect(fills).toHaveLength(1);
});
