/**
 * Size costs money (issue 38): with a participation rate and market impact, a taker takes at most its share of
 * each tick's volume, pays the square-root impact of what it takes (src/sim/market-impact.ts) on the 24-hour
 * ticker's range and volume, and a MARKET order takes the rest over the following ticks.
 */
import { describe, expect, it } from 'vitest';
import { impactRatio } from '../../src/sim/market-impact.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { bal, KEY, place, T0 } from './engine-fixture.js';

/** A day of 4 % range (61200 / 58800) and 1000 BTC traded, last at 60000. */
const DAY = { h: 61200, l: 58800, vb: 1000 };

function engine(options: { participationRate?: string; marketImpact?: boolean; usdt?: string } = {}) {
  const e = new MatchingEngine({ latencyMs: 1000, participationRate: '0.1', marketImpact: true, ...options });
  e.createAccount({ apiKey: KEY, balances: { USDT: options.usdt ?? '100000', BTC: '2' } });
  e.onTicker({ s: 'BTCUSDT', p: 60000, t: T0, ...DAY });
  return e;
}

/** Each fill, oldest first: price, quantity, maker. */
const fills = (e: MatchingEngine) => e.fills(KEY).map((f) => [f.price.toNumber(), f.baseQty.toNumber(), f.maker]);

const tick = (e: MatchingEngine, t: number, p: number, volume?: number) =>
  e.onTicker({ s: 'BTCUSDT', p, t: T0 + t, ...DAY }, volume);

describe('market impact', () => {
  it('is σ√(Q/V) with σ from the 24-hour high and low (Parkinson), none without them', () => {
    const sigma = Math.log(61200 / 58800) / (2 * Math.sqrt(Math.log(2)));
    expect(impactRatio(DAY, 0.4)).toBeCloseTo(sigma * Math.sqrt(0.4 / 1000), 15);
    // Four times the size, twice the cost per unit.
    expect(impactRatio(DAY, 1.6) / impactRatio(DAY, 0.4)).toBeCloseTo(2, 12);
    expect(impactRatio({ h: 61200, l: 58800 }, 1)).toBe(0);
    expect(impactRatio({ ...DAY, vb: 0 }, 1)).toBe(0);
    expect(impactRatio(undefined, 1)).toBe(0);
  });
});

describe('a MARKET order pays for its size', () => {
  it('takes at most its share of each tick, at the price there moved by its impact, the rest on the next ticks', () => {
    const e = engine();
    place(e, { side: 'BUY', type: 'MARKET', quantity: '1' });
    // 10 % of 4 BTC per tick: 0.4, 0.4, then the 0.2 left; each part pays σ√(part/1000) of its tick's price
    // (4.81 bp, then 3.40 bp), rounded up onto the tick.
    tick(e, 1000, 60000, 4);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'PARTIALLY_FILLED', executedQty: 0.4 });
    tick(e, 2000, 60100, 4);
    tick(e, 3000, 60000, 4);
    expect(fills(e)).toEqual([
      [60028.86, 0.4, false],
      [60128.91, 0.4, false],
      [60020.4, 0.2, false],
    ]);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'FILLED', executedQty: 1 });
    expect(e.openOrders(KEY)).toEqual([]);
    // Every fill says the market's price it moved from.
    expect(e.fills(KEY).map((f) => f.market?.toNumber())).toEqual([60000, 60100, 60000]);
    // What it paid, exactly: nothing stays locked.
    const spent = 60028.86 * 0.4 + 60128.91 * 0.4 + 60020.4 * 0.2;
    expect(bal(e, 'USDT')).toEqual([String(Math.round((100000 - spent) * 1e4) / 1e4), '0']);
  });

  it('shares a tick’s volume with resting orders, first', () => {
    const e = engine();
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '0.3', price: '59990' });
    tick(e, 1000, 60000);
    place(e, { side: 'BUY', type: 'MARKET', quantity: '0.5' });
    // The MARKET order reaches the book at 2000 on 2 BTC traded, where the resting limit is crossed: the taker
    // takes the tick's 0.2 first.
    tick(e, 2000, 59980, 2);
    expect(e.tradeHistory(KEY).map((t) => [t.orderId, t.baseQty])).toEqual([[2, 0.2]]);
    tick(e, 3000, 59980);
    // No volume known on a tick: no cap, as for resting orders.
    expect(
      e
        .orderHistory(KEY)
        .map((o) => [o.displayingId, o.status])
        .sort(),
    ).toEqual([
      [1, 'FILLED'],
      [2, 'FILLED'],
    ]);
  });

  it('a BUY whose funds no longer cover the rest at the price there is CANCELED with what it got', () => {
    const e = engine({ usdt: '61000' });
    place(e, { side: 'BUY', type: 'MARKET', quantity: '1' });
    tick(e, 1000, 60000, 5);
    tick(e, 2000, 70000, 5);
    expect(e.orderHistory(KEY)[0]).toMatchObject({ status: 'CANCELED', executedQty: 0.5 });
    expect(bal(e, 'USDT')[1]).toBe('0');
  });

  it('a marketable limit takes its share as a taker and rests for the remainder', () => {
    const e = engine();
    place(e, { side: 'BUY', type: 'LIMIT', quantity: '1', price: '60050' });
    tick(e, 1000, 60000, 4);
    expect(fills(e)).toEqual([[60028.86, 0.4, false]]);
    expect(e.openOrders(KEY).map((o) => [o.status, o.executedQty])).toEqual([['PARTIALLY_FILLED', 0.4]]);
  });

  it('fills in full at the price there with neither cap nor impact', () => {
    const e = engine({ participationRate: undefined, marketImpact: false });
    place(e, { side: 'BUY', type: 'MARKET', quantity: '1' });
    tick(e, 1000, 60000, 4);
    expect(fills(e)).toEqual([[60000, 1, false]]);
    expect(e.fills(KEY)[0]?.market?.toNumber()).toBe(60000);
  });
});
