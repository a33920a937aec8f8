/**
 * Protections a strategy file declares, enforced by the real engine on the real matching engine: after N losing
 * trades within a window, or a drawdown of the closed trades, the instance's new BUY orders are refused until
 * the pause is over; tripping and lifting are recorded once each (events: status, API, notifications), and the
 * state survives a restart.
 */
import { describe, expect, it } from 'vitest';
import { defineStrategy, type ProtectionsDecl, z } from '../../src/strategy/api.js';
import { readStatus } from '../../src/status/status-report.js';
import { Harness, instance } from './harness.js';

const MINUTE = 60_000;

/** Flat: buys 0.01 at MARKET; holding: sells it all at MARKET. One round trip every two ticks. */
const flipper = defineStrategy({
  name: 'flipper',
  params: z.object({}),
  onTick(ctx) {
    if (ctx.openOrders.length > 0) return;
    if (ctx.position.quantity.gte('0.001')) ctx.market('SELL', { quantity: ctx.position.quantity.toFixed(6, 1) });
    else ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' });
  },
});

let h: Harness | undefined;
async function started(protections: ProtectionsDecl) {
  h = new Harness({ balances: { USDT: '10000' } });
  h.price(20_000);
  const spec = instance('f', flipper, { protections });
  await h.start([spec]);
  return { h, spec };
}

const buys = (h: Harness) => h.store.fills.forInstance('f').filter((f) => f.side === 'BUY').length;

/** One losing round trip: bought at `at`, sold 1 % lower. */
async function losingTrade(h: Harness, at: number) {
  await h.tick(at, MINUTE);
  await h.tick(at * 0.99, MINUTE);
}

describe('protections', () => {
  it('losingTrades: N losses within the window stop entries for pauseMinutes, then lift', async () => {
    const { h } = await started({ losingTrades: { count: 2, windowMinutes: 60, pauseMinutes: 30 } });
    await losingTrade(h, 20_000);
    expect(h.events('protection-tripped')).toEqual([]);
    await losingTrade(h, 20_000);
    const tripped = h.events('protection-tripped');
    expect(tripped).toHaveLength(1);
    expect(tripped[0]!.data).toMatchObject({
      protection: 'losingTrades',
      reason: '2 losing trades within 60 min (protections.losingTrades)',
      until: tripped[0]!.time + 30 * MINUTE,
    });
    // Within the pause every BUY is refused, naming the protection.
    for (let i = 0; i < 5; i++) await h.tick(20_000, 5 * MINUTE);
    expect(buys(h)).toBe(2);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(
      /^2 losing trades within 60 min \(protections\.losingTrades\): no new entries until /,
    );
    expect(readStatus(h.store, { now: h.clock.now() }).instances[0]!.protections).toEqual([
      expect.objectContaining({ protection: 'losingTrades', until: tripped[0]!.data.until }),
    ]);
    // The pause ends: lifted once, and the next tick buys again.
    await h.tick(20_000, 6 * MINUTE);
    await h.tick(20_000, MINUTE);
    expect(h.events('protection-lifted').map((e) => e.data)).toEqual([{ protection: 'losingTrades' }]);
    expect(buys(h)).toBe(3);
    expect(readStatus(h.store, { now: h.clock.now() }).instances[0]!.protections).toEqual([]);
    // The losses before the trip do not count again: one more loss does not trip it.
    await h.tick(19_800, MINUTE);
    expect(h.events('protection-tripped')).toHaveLength(1);
  });

  it('losingTrades: losses further apart than the window do not trip it', async () => {
    const { h } = await started({ losingTrades: { count: 2, windowMinutes: 10, pauseMinutes: 30 } });
    await losingTrade(h, 20_000);
    // Bought again 15 minutes later, and sold at a loss: two losses, 16 minutes apart.
    await h.tick(19_800, 15 * MINUTE);
    await h.tick(19_602, MINUTE);
    const sells = h.store.fills.forInstance('f').filter((f) => f.side === 'SELL');
    expect(sells.map((f) => f.price)).toEqual(['19800', '19602']);
    expect(h.events('protection-tripped')).toEqual([]);
  });

  it('maxDrawdown: the closed trades compounded pct under their best stop entries', async () => {
    const { h } = await started({ maxDrawdown: { pct: 2.5, pauseMinutes: 60 } });
    // Each round trip loses 1 % of the price and both fees (0.1 % each): about 1.2 % a trade.
    await losingTrade(h, 20_000);
    await losingTrade(h, 20_000);
    expect(h.events('protection-tripped')).toEqual([]);
    await losingTrade(h, 20_000);
    const tripped = h.events('protection-tripped');
    expect(tripped.map((e) => e.data.protection)).toEqual(['maxDrawdown']);
    expect(String(tripped[0]!.data.reason)).toMatch(
      /^closed trades 3\.\d\d % under their best \(protections\.maxDrawdown, 2\.5 %\)$/,
    );
    await h.tick(20_000, MINUTE);
    await h.tick(20_000, MINUTE);
    expect(buys(h)).toBe(3);
  });

  it('a tripped protection survives a restart: still refused, not tripped again, lifted when due', async () => {
    const { h, spec } = await started({ losingTrades: { count: 2, windowMinutes: 60, pauseMinutes: 30 } });
    await losingTrade(h, 20_000);
    await losingTrade(h, 20_000);
    expect(h.events('protection-tripped')).toHaveLength(1);
    await h.restart([spec]);
    await h.tick(20_000, 10 * MINUTE);
    await h.tick(20_000, 10 * MINUTE);
    expect(buys(h)).toBe(2);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(/protections\.losingTrades/);
    await h.tick(20_000, 11 * MINUTE);
    await h.tick(20_000, MINUTE);
    expect(buys(h)).toBe(3);
    expect(h.events('protection-tripped')).toHaveLength(1);
    expect(h.events('protection-lifted')).toHaveLength(1);
  });

  it('a trip decided but not saved before a kill -9 is decided again at the restart', async () => {
    const { h, spec } = await started({ losingTrades: { count: 2, windowMinutes: 60, pauseMinutes: 30 } });
    await losingTrade(h, 20_000);
    await losingTrade(h, 20_000);
    // What a kill between the losing fill's commit and the watch's save leaves: the fills, no trip.
    await h.engine!.stop();
    h.store.db.prepare("DELETE FROM strategy_state WHERE instance = 'f/exits'").run();
    h.store.db.prepare("DELETE FROM events WHERE kind = 'protection-tripped'").run();
    await h.restart([spec]);
    expect(h.events('protection-tripped').map((e) => e.data.protection)).toEqual(['losingTrades']);
    await h.tick(20_000, 5 * MINUTE);
    expect(buys(h)).toBe(2);
    // Restarted again with the trip saved: not tripped a second time.
    await h.restart([spec]);
    expect(h.events('protection-tripped')).toHaveLength(1);
  });
});
