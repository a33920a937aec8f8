/**
 * One slow read cannot hold up every job (issue 36). The balance read after fills runs outside the engine's lock
 * (the daemon's `readBalancesApart`): while it stalls, the orders poll records fills and the declared exits sell,
 * and the strategy goes on placing orders. No order leaves that the venue's balance at that moment would refuse:
 * the read's answer may have been written before the orders sent while it was in flight, so what they reserved
 * is taken off it again (market-state.ts), and a fill's proceeds are not counted until a read brings them.
 * The real engine on the real matching engine; the venue's balance reads answer what the account held when they
 * arrived, but only when the test lets them.
 */
import { expect, it } from 'vitest';
import { D, type Dec } from '../../src/market/decimal.js';
import type { OrderRequest } from '../../src/ports/venue.js';
import type { Balances } from '../../src/ports/venue-records.js';
import { defineStrategy, type StrategyContext, z } from '../../src/strategy/api.js';
import { until } from '../support/until.js';
import { Harness, instance } from './harness.js';

/** Every balance read from now on answers what the account held when it arrived, once `release` is called. */
function stallBalanceReads(h: Harness) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const stalled = { held: 0, release };
  h.venue.balance = async (query) => {
    const answer: Balances = await h.venue.inner.balance(query);
    stalled.held++;
    await gate;
    return answer;
  };
  return stalled;
}

/** What the engine asks of the free balance for `request` (its fee margin on a BUY), and which asset. */
function need(request: OrderRequest): { asset: string; amount: Dec } {
  if (request.side === 'SELL') return { asset: 'BTC', amount: new D(request.quantity ?? '0') };
  return { asset: 'USDT', amount: new D(request.quantity ?? '0').mul(request.price ?? '0').mul('1.001') };
}

it(
  'a stalled balance read holds up neither the orders poll nor the exits, and no order goes out on a figure the venue would refuse',
  { timeout: 20_000 },
  async () => {
    // No cancel: the stop-loss acts on ticks (a stop held on the exchange is cancelled first, and the base that
    // frees is read under the lock: position-exit.ts).
    const h = new Harness({ balances: { USDT: '1000' }, canCancel: false, engine: { readBalancesApart: true } });
    h.price(20_000);
    // Each tick the strategy decides, it takes the next step (a declared exit's tick runs no onTick).
    const steps: ((ctx: StrategyContext) => void)[] = [
      (ctx) => ctx.limit('BUY', '20100', '0.01', { tag: 'first' }),
      (ctx) => ctx.limit('BUY', '20100', '0.01', { tag: 'second' }),
      (ctx) => ctx.limit('BUY', '19000', '0.025', { tag: 'rest' }),
      (ctx) => ctx.limit('BUY', '19000', '0.025', { tag: 'again' }),
    ];
    const def = defineStrategy({
      name: 'steps',
      params: z.object({}),
      exits: { stopLossPct: 2 },
      onTick: (ctx) => steps.shift()?.(ctx),
    });
    // Every order checked against what the venue holds as it arrives: the engine's own rule on the true figure.
    const beyond: string[] = [];
    h.venue.beforeCreate = (request) => {
      const { asset, amount } = need(request);
      const free = h.sim.balanceOf('k', asset).free;
      if (free.lt(amount)) beyond.push(`${request.side} needs ${amount.toFixed()} ${asset}, free ${free.toFixed()}`);
    };
    await h.start([instance('a', def)]);
    const engine = h.engine!;
    const fills = () => h.store.fills.forInstance('a').map((f) => h.store.orders.get(f.orderLocalId)?.tag);

    await h.tick(20_000); // `first` fills; its balance read answers at once
    expect(fills()).toEqual(['first']);

    const stalled = stallBalanceReads(h);
    await h.tick(20_000); // `second` fills, and the read after it stalls: the poll is not held by it
    expect(stalled.held).toBe(1);
    expect(fills()).toEqual(['first', 'second']);

    // The stop-loss triggers while the read stalls: it sells the base known free (the first fill's; the second's
    // comes with the read), and an orders poll records the sale.
    await h.tick(19_500);
    expect(fills()).toEqual(['first', 'second', 'exit:stop-loss']);
    expect(h.store.fills.forInstance('a').at(-1)?.qty).toBe('0.00999');

    // The strategy rests a BUY of 475 USDT while the read (answered before it) is still out.
    await h.tick(20_000);
    expect(h.sim.openOrders('k').map((o) => o.price)).toEqual([19_000]);
    expect(stalled.held).toBe(1);

    // The read answers what the account held before that BUY: its 475 USDT are taken off again.
    stalled.release();
    await until('the fills delivered after the read', () => h.store.fills.undelivered('a').length === 0);
    const usdt = engine.balances().find((b) => b.asset === 'USDT')!;
    expect(usdt.free.lte(h.sim.balanceOf('k', 'USDT').free)).toBe(true);

    // The same BUY again: the venue's free USDT no longer covers it, and neither does the engine's figure.
    await h.tick(20_000);
    expect(h.sim.openOrders('k')).toHaveLength(1);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(/^insufficient USDT: order needs 475\.475, free /);
    expect(beyond).toEqual([]);
  },
);
