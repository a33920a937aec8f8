/**
 * The orders poll's requests: the open orders of every pair with working orders come in one read, so a
 * many-pair account's poll fits the exchange's request budget (bench:live-pairs measured one read a pair: 4
 * requests a second at 20 pairs, the whole budget at 100). A failed read polls no pair and names them all.
 */
import { describe, expect, it } from 'vitest';
import { firstTick, Harness, instance } from './harness.js';

const restingBuy = (price: string) => firstTick((ctx) => ctx.limit('BUY', price, '0.01', { tag: 'rest' }));

async function twoPairs(): Promise<Harness> {
  const h = new Harness();
  h.price(100);
  h.price(50, 'ETHUSDT');
  await h.start([instance('btc', restingBuy('90')), instance('eth', restingBuy('40'), { symbol: 'ETHUSDT' })]);
  await h.marketTick(100);
  await h.marketTick(50, 0, 'ETHUSDT');
  expect(
    h.store.orders
      .active()
      .map((o) => o.symbol)
      .sort(),
  ).toEqual(['BTCUSDT', 'ETHUSDT']);
  return h;
}

describe('the orders poll', () => {
  it('reads the open orders of every pair with working orders in one request', async () => {
    const h = await twoPairs();
    h.venue.openOrdersAsked.length = 0;
    await h.engine!.pollOrders();
    expect(h.venue.openOrdersAsked).toEqual([undefined]);
    // Both orders still known as working after the poll: the one read served both pairs.
    expect(h.store.orders.active()).toHaveLength(2);
  });

  it('polls no pair when that read fails, and names them all', async () => {
    const h = await twoPairs();
    h.venue.outage = new Error('connection reset');
    await expect(h.engine!.pollOrders()).rejects.toThrow(/orders poll of BTCUSDT, ETHUSDT failed: .*connection reset/);
    h.venue.outage = undefined;
    await h.engine!.pollOrders();
    expect(h.store.orders.active()).toHaveLength(2);
  });
});
