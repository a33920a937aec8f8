/**
 * MatchingEngine.quietPrice, the backtest's way of moving most ticks: a tick strictly between the resting orders'
 * thresholds only moves the last price and time; one that reaches an order (or brings an order's arrival) is left
 * to onTicker, untouched. The market-watch entry is the last one given (onTicker, setTicker).
 */
import { describe, expect, it } from 'vitest';
import { engineAt, place, T0 } from './engine-fixture.js';

describe('quietPrice', () => {
  it('moves the price and the time between the thresholds, and refuses a tick that reaches an order', () => {
    const engine = engineAt(60000);
    const buy = place(engine, { side: 'BUY', type: 'LIMIT', price: '59000', quantity: '0.1' });
    expect(engine.quietPrice('BTCUSDT', 59500, T0 + 1000)).toBe(true);
    expect(engine.lastPrice('BTCUSDT')).toBe(59500);
    expect(engine.now()).toBe(T0 + 1000);
    // At the order's price (no fill on touch) still quiet; through it: not quiet, nothing moved, the order open.
    expect(engine.quietPrice('BTCUSDT', 59000, T0 + 1500)).toBe(true);
    expect(engine.quietPrice('BTCUSDT', 58990, T0 + 2000)).toBe(false);
    expect(engine.lastPrice('BTCUSDT')).toBe(59000);
    expect(engine.now()).toBe(T0 + 1500);
    expect(engine.openOrders('test-key', 'BTCUSDT').map((o) => o.displayingId)).toEqual([buy.displayingId]);
    engine.onPrice('BTCUSDT', 58990, T0 + 2000);
    expect(engine.openOrders('test-key', 'BTCUSDT')).toEqual([]);
  });

  it('leaves the market-watch entry as last given until setTicker', () => {
    const engine = engineAt(null);
    engine.onTicker({ s: 'BTCUSDT', p: 60000, t: T0, vb: 5 });
    expect(engine.quietPrice('BTCUSDT', 60100, T0 + 1000)).toBe(true);
    expect(engine.tickers('BTCUSDT')[0]).toMatchObject({ p: 60100, vb: 5 });
    engine.setTicker({ s: 'BTCUSDT', p: 60100, t: T0 + 1000, vb: 7 });
    expect(engine.tickers('BTCUSDT')[0]).toMatchObject({ p: 60100, vb: 7 });
  });
});
