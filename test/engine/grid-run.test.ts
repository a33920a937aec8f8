/**
 * The engine with a real strategy (strategies/grid.ts) over the real matching engine, through a price walk
 * with a restart in the middle: the journal and the venue must agree order for order and fill for fill.
 */
import { expect, it } from 'vitest';
import grid from '../../strategies/grid.js';
import { D } from '../../src/market/decimal.js';
import type { StrategyDefinition } from '../../src/strategy/api.js';
import { Harness, instance } from './harness.js';

let h: Harness;
it('keeps the journal and the venue in agreement through a price walk and a restart', async () => {
  h = new Harness({ balances: { USDT: '10000', BTC: '0.01' } });
  const delivered: string[] = [];
  const definition = grid as unknown as StrategyDefinition;
  const counted: StrategyDefinition = {
    ...definition,
    onFill: (ctx, fill) => {
      delivered.push(fill.fillId);
      return definition.onFill?.(ctx, fill);
    },
  };
  const spec = () =>
    instance('grid', counted, {
      params: { levels: 5, spacingPct: '0.5', quantity: '0.001', initialBase: '0.003' },
      risk: { maxOpenOrders: 12 },
    });
  h.price(60000);
  await h.start([spec()]);
  const walk = (i: number) => Math.round(60000 * (1 + 0.02 * Math.sin(i / 7) + 0.004 * Math.sin(i * 1.3)) * 100) / 100;
  for (let i = 0; i < 120; i++) await h.tick(walk(i));
  await h.restart([spec()]);
  for (let i = 120; i < 240; i++) await h.tick(walk(i));

  const venueFills = h.sim.fills('k');
  expect(venueFills.length).toBeGreaterThan(10);
  // Every venue fill recorded once, delivered once.
  const stored = h.store.fills.forInstance('grid');
  expect(stored.map((f) => f.fillKey).sort()).toEqual(venueFills.map((f) => `sim-trade-${f.id}`).sort());
  expect(new Set(delivered).size).toBe(delivered.length);
  expect(delivered.sort()).toEqual(stored.map((f) => f.fillKey).sort());
  // Journal and venue agree on what is open.
  const open = h.sim.openOrders('k').map((o) => String(o.displayingId));
  expect(
    h.store.orders
      .activeForInstance('grid')
      .map((o) => o.exchangeId)
      .sort(),
  ).toEqual(open.sort());
  // Each order's recorded fills add up to what the venue executed.
  for (const order of h.sim.orderHistory('k', { pageSize: 100 })) {
    const row = h.store.orders.byExchangeId(String(order.displayingId));
    expect(row?.instance).toBe('grid');
    expect(new D(row!.filledQty).eq(order.executedQty)).toBe(true);
  }
  // No two live orders at the same level and side (the grid's own idempotency, through the engine's views).
  const tags = h.store.orders.activeForInstance('grid').map((o) => o.tag);
  expect(new Set(tags).size).toBe(tags.length);
  expect(h.events('order-unknown')).toEqual([]);
  expect(h.events('paused')).toEqual([]);
});
