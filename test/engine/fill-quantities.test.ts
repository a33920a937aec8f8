/**
 * An order's executed quantity is read exactly (fromWire), fees at 15 digits, so float noise never becomes a fill.
 * An exchange that sums fills in binary floats reports executedQty 0.30000000000000004 for fills of 0.1 + 0.2 (the notes show such
 * noise in fees and executedPrice). The order then "owes" 4e-17 forever and, after fillGraceMs, a phantom delta
 * fill of 0.00000000000000004 is recorded and delivered to onFill.
 */
import { expect, it } from 'vitest';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import type { HistoryQuery } from '../../src/ports/venue.js';
import type { FillView } from '../../src/strategy/api.js';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
const noisy = (o: OrderRecord): OrderRecord => (o.executedQty === 0.3 ? { ...o, executedQty: 0.1 + 0.2 } : o);

it('float noise in executedQty does not become a phantom fill', async () => {
  h = new Harness();
  h.price(100);
  const fills: FillView[] = [];
  let done = false;
  await h.start(
    [
      instance(
        'a',
        strategy({
          onTick(ctx) {
            if (!done) ctx.limit('BUY', '99.5', '0.3');
            done = true;
          },
          onFill: (_c, f) => void fills.push(f),
        }),
      ),
    ],
    { fillGraceMs: 10_000 },
  );
  const v = h.venue as unknown as {
    orderHistory: (q?: HistoryQuery) => Promise<OrderRecord[]>;
    openOrders: (p?: string) => Promise<OrderRecord[]>;
  };
  const hist = v.orderHistory.bind(h.venue);
  const open = v.openOrders.bind(h.venue);
  v.orderHistory = async (q) => (await hist(q)).map(noisy);
  v.openOrders = async (p) => (await open(p)).map(noisy);
  await h.tick(100);
  await h.tick(99.4); // fills 0.3
  for (let i = 0; i < 5; i++) await h.tick(100, 5_000);
  expect(fills.map((f) => f.quantity.toFixed())).toEqual(['0.3']);
});
