/** Finding 1 with the shipped grid strategy: a tick during the poll's balance refresh re-buys a level that just filled. */
import { expect, it } from 'vitest';
import grid from '../../strategies/grid.js';
import type { StrategyDefinition } from '../../src/strategy/api.js';
import { Harness, holdNextBalanceRead, instance } from './harness.js';

let h: Harness;
it('grid: no second BUY on a level whose fill is recorded but not yet delivered', async () => {
  h = new Harness();
  h.price(100);
  const def = grid as unknown as StrategyDefinition;
  await h.start([
    instance('g', def, { params: { referencePrice: '100', levels: 2, spacingAbs: '1', quantity: '0.01' } }),
  ]);
  await h.tick(100);
  const buysBefore = h.store.db.prepare("SELECT local_id, price, status FROM orders WHERE instance='g'").all();
  // Hold the next balance read: the one the poll makes after recording a fill, before delivering it.
  const { inBalance, release } = holdNextBalanceRead(h);
  h.clock.advance(5000);
  h.sim.onPrice('BTCUSDT', 98.9, h.clock.now()); // the BUY at 99 fills
  const poll = h.engine!.pollOrders()!;
  await inBalance;
  h.clock.advance(100);
  h.sim.onPrice('BTCUSDT', 99.5, h.clock.now());
  const tick = h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'));
  release();
  await poll;
  if (tick) await tick;
  const rows = h.store.db.prepare("SELECT local_id, side, price, status FROM orders WHERE instance='g'").all();
  console.log(JSON.stringify({ buysBefore, rows }));
  const buysAt99 = (rows as { side: string; price: string }[]).filter((r) => r.side === 'BUY' && r.price === '99');
  expect(buysAt99).toHaveLength(1);
});
