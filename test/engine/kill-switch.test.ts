/**
 * No order leaves once the kill switch is on, whenever it was switched on. Was: OrderManager.submit checks the kill switch / auth halt / breaker (guard.orderBlock) BEFORE it awaits
 * the reconciliation of unresolved rows, and never again before createOrder. A kill switch turned on (or an
 * auth failure seen) during that reconciliation does not stop the order.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { Harness, instance, strategy, venueError } from './harness.js';

let h: Harness;
it('no order leaves once the kill switch is on, even if it was switched on during reconciliation', async () => {
  h = new Harness();
  h.price(100);
  const file = join(h.dir, 'STOP');
  let done = false;
  // Two orders in one tick (as a grid does).
  const two = strategy({
    onTick(ctx) {
      if (done) return;
      done = true;
      ctx.limit('BUY', '90', '0.01', { tag: 'l1' });
      ctx.limit('BUY', '89', '0.01', { tag: 'l2' });
    },
  });
  await h.start([instance('a', two)], { killSwitchFile: file });
  // The first create is placed but its answer is lost: UNKNOWN, so the second submit reconciles first.
  h.venue.createFault = { when: 'after-place', error: venueError('outcome-unknown', 'E_OUTCOME_UNKNOWN') };
  const venue = h.venue as unknown as { openOrders: (pair?: string) => Promise<OrderRecord[]> };
  const original = venue.openOrders.bind(h.venue);
  venue.openOrders = (pair) => {
    // The operator switches trading off while the reconciliation read is in flight.
    writeFileSync(file, '');
    return original(pair);
  };
  await h.tick(100);
  expect(h.store.orders.get('a-1')?.status).toBe('OPEN'); // reconciled
  // Expected: 1 create (the kill switch was on before the second one left). Actual: 2.
  expect(h.venue.creates).toBe(1);
});
