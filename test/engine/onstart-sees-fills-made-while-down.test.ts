/**
 * Regression test for a review finding (fixed): at start, fills recorded by the start-up reconciliation (made while the bot was down) are delivered
 * to onFill only AFTER onStart ran and its intents were sent. onStart sees the order gone from openOrders with
 * its fill not delivered, and re-issues it.
 */
import { expect, it } from 'vitest';
import type { FillView } from '../../src/strategy/api.js';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
it('onStart sees fills made while the bot was down before it decides', async () => {
  h = new Harness();
  h.price(100);
  const fills: FillView[] = [];
  const entry = () =>
    strategy({
      onStart(ctx) {
        if (ctx.state.entered !== true && ctx.openOrders.length === 0) ctx.limit('BUY', '99', '0.01', { tag: 'entry' });
      },
      onFill(ctx, f) {
        fills.push(f);
        ctx.state.entered = true;
      },
    });
  await h.start([instance('a', entry())]);
  expect(h.sim.openOrders('k')).toHaveLength(1);
  await h.engine!.stop();
  h.store.close();
  // While the bot is down, the entry fills.
  h.clock.advance(60_000);
  h.sim.onPrice('BTCUSDT', 98.9, h.clock.now());
  h.store = h.openStore();
  await h.start([instance('a', entry())]);
  expect(fills).toHaveLength(1);
  // Expected: no second entry. Actual: onStart ran before the fill was delivered and placed a-2.
  expect(h.store.db.prepare("SELECT local_id FROM orders WHERE instance = 'a'").pluck().all()).toEqual(['a-1']);
});
