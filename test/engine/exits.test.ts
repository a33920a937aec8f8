/**
 * Exits and protections a strategy declares, enforced on ticks by the real engine on the real matching engine
 * (a venue without cancel: no stop held on the exchange): each triggers at the first tick that reaches its level, sells the position less dust once (tag `exit:<reason>`),
 * is recorded as an `exit-triggered` event, and is not sent again after a crash between trigger and fill.
 */
import { describe, expect, it } from 'vitest';
import { defineStrategy, type ExitRulesDecl, type ProtectionsDecl, z } from '../../src/strategy/api.js';
import { Harness, instance, venueError } from './harness.js';

const MINUTE = 60_000;

/** Buys 0.01 at MARKET once (tag `entry`), then as often as `rebuy` says; declares the given exits. */
function buyer(exits: ExitRulesDecl, protections: ProtectionsDecl = {}, rebuy = false) {
  return defineStrategy({
    name: 'buyer',
    params: z.object({}),
    exits,
    protections,
    onTick(ctx) {
      const st = ctx.state as { bought?: boolean };
      if (ctx.openOrders.length > 0 || ctx.position.quantity.gt(0)) return;
      if (st.bought === true && !rebuy) return;
      st.bought = true;
      ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' });
    },
  });
}

let h: Harness | undefined;
/**
 * One instance `b` that bought 0.01 at 20 000. The tick-based exits are tested on a venue without cancel: there
 * the engine cannot hold a stop on the exchange (held-exits.test.ts tests the held ones).
 */
async function started(
  exits: ExitRulesDecl,
  protections: ProtectionsDecl = {},
  rebuy = false,
  options: { canCancel?: boolean } = { canCancel: false },
) {
  h = new Harness({ balances: { USDT: '10000' }, ...options });
  h.price(20_000);
  const spec = instance('b', buyer(exits, protections, rebuy));
  await h.start([spec]);
  await h.tick(20_000);
  expect(h.store.fills.forInstance('b')).toHaveLength(1);
  return { h, spec };
}

const sells = (h: Harness) => h.sells('b');

describe('declared exits', () => {
  it('stopLossPct sells at the first tick at or under entry x (1 - pct), once', async () => {
    const { h } = await started({ stopLossPct: 2 });
    // The fee was paid in base: 0.00999 held at an average of 20020.02…, so the stop is at 19619.62.
    await h.tick(19_800);
    await h.tick(19_620);
    expect(sells(h)).toEqual([]);
    await h.tick(19_619);
    expect(sells(h)).toEqual([{ price: '19619', qty: '0.00999', tag: 'exit:stop-loss' }]);
    await h.tick(19_500);
    await h.tick(19_000);
    expect(sells(h)).toHaveLength(1);
    const events = h.events('exit-triggered');
    expect(events).toHaveLength(1);
    expect(events[0]!.data).toMatchObject({ reason: 'stop-loss', price: 19_619, quantity: '0.00999' });
    expect(events[0]!.data.level).toBeCloseTo(20_020.02002 * 0.98, 3);
  });

  it('trailingStopPct arms at trailingActivationPct above the entry and sells pct under the high since', async () => {
    const { h } = await started({ trailingStopPct: 1, trailingActivationPct: 1 });
    // Entry 20000 (fee in base: average 20020.02…); armed from 20220.22; the high 20500 puts the stop at 20295.
    await h.tick(20_100);
    await h.tick(19_950);
    expect(sells(h)).toEqual([]);
    await h.tick(20_500);
    await h.tick(20_296);
    expect(sells(h)).toEqual([]);
    await h.tick(20_295);
    expect(sells(h)).toEqual([{ price: '20295', qty: '0.00999', tag: 'exit:trailing-stop' }]);
  });

  it('roi sells once the profit reaches the target for the time held', async () => {
    const { h } = await started({ roi: { '0': 5, '30': 1 } });
    await h.tick(20_600, 10 * MINUTE); // +2.9 % after 10 min: under 5 %
    expect(sells(h)).toEqual([]);
    await h.tick(20_200, 21 * MINUTE); // 31 min: target 1 % of 20020.02 = 20220.22
    expect(sells(h)).toEqual([]);
    await h.tick(20_221, MINUTE);
    expect(sells(h)).toEqual([{ price: '20221', qty: '0.00999', tag: 'exit:roi' }]);
  });

  it('protections.cooldownMinutes refuses new entries after a stop-out until the cooldown ends', async () => {
    const { h } = await started({ stopLossPct: 1 }, { cooldownMinutes: 60 }, true);
    await h.tick(19_700, MINUTE);
    expect(sells(h)).toHaveLength(1);
    for (let i = 0; i < 5; i++) await h.tick(19_700, 10 * MINUTE);
    expect(h.store.fills.forInstance('b').filter((f) => f.side === 'BUY')).toHaveLength(1);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(/^cooldown after a stop-out until /);
    await h.tick(19_700, 15 * MINUTE);
    expect(h.store.fills.forInstance('b').filter((f) => f.side === 'BUY')).toHaveLength(2);
  });

  it("a kill -9 between the entry's fill and the watch's save: the restart counts the time held from that fill", async () => {
    const { h, spec } = await started({ roi: { '0': 5, '60': 1 } });
    // What the kill leaves: the fill recorded, the watch never told of the position.
    await h.engine!.stop();
    h.store.db.prepare("DELETE FROM strategy_state WHERE instance = 'b/exits'").run();
    await h.restart([spec]);
    // 61 minutes after the fill, +1.4 % over the average entry (20,020.02): the 1 % row's target is met.
    await h.tick(20_300, 61 * MINUTE);
    expect(sells(h)).toEqual([{ price: '20300', qty: '0.00999', tag: 'exit:roi' }]);
    expect(h.events('exit-triggered')[0]!.data.level).toBeCloseTo(20_020.02002 * 1.01, 3);
  });

  it('a crash between trigger and fill (the answer lost): the restart reconciles the exit and never sells twice', async () => {
    const { h, spec } = await started({ stopLossPct: 2 });
    // The exit reaches the venue (and fills there), its answer is lost, and from then on the venue cannot be
    // read: the process dies knowing only that it sent it (its row UNKNOWN).
    h.venue.createFault = { when: 'after-place', error: venueError('outcome-unknown', 'E_TIMEOUT') };
    h.venue.beforeCreate = () => queueMicrotask(() => (h.venue.outage = venueError('temporary', 'E_TIMEOUT')));
    await h.tick(19_500).catch(() => undefined);
    const exitRows = () => h.store.db.prepare("SELECT status FROM orders WHERE tag = 'exit:stop-loss'").all();
    expect(exitRows()).toEqual([{ status: 'UNKNOWN' }]);
    h.venue.beforeCreate = undefined;
    h.venue.outage = undefined;
    await h.restart([spec]);
    await h.tick(19_400);
    await h.tick(19_300);
    expect(exitRows()).toEqual([{ status: 'FILLED' }]);
    expect(sells(h)).toEqual([{ price: '19500', qty: '0.00999', tag: 'exit:stop-loss' }]);
    expect(h.events('exit-triggered')).toHaveLength(1);
  });
});
