/** The simulated exchange's latency (issue 21): an order decided on a price never fills at that price. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { bal, engineAt, KEY, place, T0 } from './engine-fixture.js';

const STEP = 15_000;

describe('latency', () => {
  it('fills a MARKET order at the first price at or after the delay, not at the price it was decided on', () => {
    const e = engineAt(60000, { latencyMs: STEP });
    const rec = place(e, { side: 'BUY', type: 'MARKET', quantity: '0.1' });
    expect(rec.status).toBe('NEW');
    expect(e.fills(KEY)).toHaveLength(0);
    expect(bal(e, 'USDT')).toEqual(['94000', '6000']); // locked at the last price until it arrives
    e.onPrice('BTCUSDT', 59000, T0 + STEP - 1);
    expect(e.fills(KEY)).toHaveLength(0);
    e.onPrice('BTCUSDT', 61000, T0 + STEP);
    expect(e.fills(KEY).map((f) => [f.price.toFixed(), f.time])).toEqual([['61000', T0 + STEP]]);
    // The dearer price is paid from free funds; nothing stays locked.
    expect(bal(e, 'USDT')).toEqual(['93900', '0']);
    expect(e.openOrders(KEY)).toHaveLength(0);
  });

  it('counts the delay from the decision (the clock), not from the last price when the schedule decides later', () => {
    const clock = new VirtualClock(T0);
    const e = engineAt(60000, { latencyMs: STEP, clock });
    clock.time = T0 + 10_000; // the strategy decides 10 s after the last price
    place(e, { side: 'BUY', type: 'MARKET', quantity: '0.1' });
    clock.time = T0 + STEP; // a data step after the last price, before the decision's latency has passed
    e.onPrice('BTCUSDT', 59000, clock.time);
    expect(e.fills(KEY)).toHaveLength(0);
    clock.time = T0 + 10_000 + STEP;
    e.onPrice('BTCUSDT', 61000, clock.time);
    expect(e.fills(KEY).map((f) => [f.price.toFixed(), f.time])).toEqual([['61000', T0 + 10_000 + STEP]]);
  });

  it("counts from the last price where the clock is not the data's time (a lockstep replay on the wall clock)", () => {
    const wall = { now: () => T0 + 3 * 365 * 86_400_000 };
    const e = engineAt(60000, { latencyMs: STEP, clock: wall, clockIsDataTime: false });
    place(e, { side: 'BUY', type: 'MARKET', quantity: '0.1' });
    e.onPrice('BTCUSDT', 61000, T0 + STEP);
    expect(e.fills(KEY).map((f) => f.price.toFixed())).toEqual(['61000']);
  });

  it('without latency fills at the price it was decided on (the old model, still the engine default)', () => {
    const e = engineAt(60000);
    place(e, { side: 'BUY', type: 'MARKET', quantity: '0.1' });
    expect(e.fills(KEY).map((f) => f.price.toFixed())).toEqual(['60000']);
  });

  it('buys what a quote amount buys at the arrival price, and sells by quote amount no more than it locked', () => {
    const e = engineAt(60000, { latencyMs: STEP });
    place(e, { side: 'BUY', type: 'MARKET', quoteOrderQty: '6000', useQuoteQty: true });
    place(e, { side: 'SELL', type: 'MARKET', quoteOrderQty: '6000', useQuoteQty: true });
    e.onPrice('BTCUSDT', 50000, T0 + STEP);
    const [buy, sell] = e.fills(KEY);
    expect([buy?.baseQty.toFixed(), buy?.price.toFixed()]).toEqual(['0.12', '50000']);
    expect([sell?.baseQty.toFixed(), sell?.price.toFixed()]).toEqual(['0.1', '50000']);
  });

  it('cancels a MARKET BUY whose funds no longer cover it at the arrival price, releasing its lock', () => {
    const e = engineAt(60000, { latencyMs: STEP });
    place(e, { side: 'BUY', type: 'MARKET', quantity: '1.6' });
    expect(bal(e, 'USDT')).toEqual(['4000', '96000']);
    e.onPrice('BTCUSDT', 70000, T0 + STEP);
    expect(e.fills(KEY)).toHaveLength(0);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'CANCELED' });
    expect(bal(e, 'USDT')).toEqual(['100000', '0']);
  });

  it('takes a LIMIT marketable on arrival as a taker within its limit, and rests one that is not', () => {
    const e = engineAt(60000, { latencyMs: STEP });
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '60000' });
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    e.onPrice('BTCUSDT', 59500, T0 + STEP);
    expect(e.fills(KEY).map((f) => [f.price.toFixed(), f.maker])).toEqual([['59500', false]]);
    expect(e.openOrders(KEY).map((o) => o.price)).toEqual([59000]);
    e.onPrice('BTCUSDT', 58999, T0 + 2 * STEP);
    expect(e.fills(KEY).map((f) => [f.price.toFixed(), f.maker])).toEqual([
      ['59500', false],
      ['59000', true],
    ]);
  });

  it('cancels an order still on its way: it never reaches the book', () => {
    const e = engineAt(60000, { latencyMs: STEP });
    const rec = place(e, { side: 'SELL', type: 'MARKET', quantity: '0.5' });
    e.cancelOrder(KEY, 'BTCUSDT', rec.displayingId);
    e.onPrice('BTCUSDT', 61000, T0 + STEP);
    expect(e.fills(KEY)).toHaveLength(0);
    expect(bal(e, 'BTC')).toEqual(['2', '0']);
  });
});
