/**
 * Regression test for a review finding (fixed): onTick runs outside the engine's lock. Between the poll recording a fill (the order leaves
 * openOrders) and delivering it to onFill, pollLocked awaits the balance refresh; a market tick in that gap
 * sees the order gone with its fill not yet delivered and re-issues it.
 */
import { afterEach, expect, it } from 'vitest';
import type { FillView, StrategyContext } from '../../src/strategy/api.js';
import { Harness, holdNextBalanceRead, instance, strategy } from './harness.js';

let h: Harness;
afterEach(async () => {
  await h?.close();
});

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

  // Hold the next balance read: the one the poll makes after recording a fill, before delivering it.
  const { inBalance, release } = holdNextBalanceRead(h);

  h.clock.advance(5000);
  h.sim.onPrice('BTCUSDT', 99.4, h.clock.now()); // a-1 fills on the venue
  const poll = h.engine!.pollOrders()!; // orders poll job
  await inBalance; // the fill is recorded, delivery waits for the balance refresh
  // Meanwhile the market job fires (a different cron job): the tick runs outside the lock.
  h.clock.advance(100);
  const tick = h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'));
  release();
  await poll;
  if (tick) await tick;
  await h.engine!.pollOrders();

  const placed = h.store.db.prepare("SELECT local_id, status FROM orders WHERE instance = 'a'").all();
  // Expected: only a-1. Actual: a second BUY a-2 the strategy would never have asked for had it seen its fill.
  expect(placed).toEqual([{ local_id: 'a-1', status: 'FILLED' }]);
  expect(fills).toHaveLength(1);
});
