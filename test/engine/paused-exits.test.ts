/**
 * Protection outlives decisions (design.md invariant 13): a paused instance, whoever paused it (the operator, an
 * exit, its strategy's failure, a pause kept across a restart), decides nothing more, yet its declared exits and
 * protections run on every tick and the stop held for it on the exchange follows its position. The real engine on
 * the real matching engine.
 */
import { describe, expect, it } from 'vitest';
import { defineStrategy, type ExitRulesDecl, type ProtectionsDecl, z } from '../../src/strategy/api.js';
import { Harness, instance, operatorActions } from './harness.js';

const MINUTE = 60_000;

/**
 * Buys 0.01 at MARKET once (tag `entry`), and rests a BUY of 0.01 at `restAt` beside it when given; throws on
 * every tick once it holds a position when `failHolding`.
 */
function buyer(
  exits: ExitRulesDecl,
  options: { restAt?: number; failHolding?: boolean; protections?: ProtectionsDecl } = {},
) {
  return defineStrategy({
    name: 'buyer',
    params: z.object({}),
    exits,
    protections: options.protections ?? {},
    onTick(ctx) {
      const st = ctx.state as { bought?: boolean };
      if (options.failHolding === true && ctx.position.quantity.gt(0)) throw new Error('strategy bug');
      if (st.bought === true) return;
      st.bought = true;
      ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' });
      if (options.restAt !== undefined) ctx.limit('BUY', String(options.restAt), '0.01', { tag: 'rest' });
    },
  });
}

let h: Harness | undefined;
/** One instance `b` that bought 0.01 at 20 000 (0.00999 held at 20020.02… after the fee in base). */
async function bought(exits: ExitRulesDecl, options: Parameters<typeof buyer>[1] & { canCancel?: boolean } = {}) {
  h = new Harness({ balances: { USDT: '10000' }, canCancel: options.canCancel ?? false });
  h.price(20_000);
  const spec = instance('b', buyer(exits, options));
  await h.start([spec]);
  await h.tick(20_000);
  expect(h.store.fills.forInstance('b').filter((f) => f.side === 'BUY')).toHaveLength(1);
  return { h, spec };
}

const sells = (h: Harness) => h.sells('b');

const status = (h: Harness) => h.engine!.instances()[0]!;

describe('a paused instance', () => {
  it.each([
    { exits: { stopLossPct: 2 }, path: [19_700, 19_619], sold: { price: '19619', tag: 'exit:stop-loss' } },
    {
      exits: { trailingStopPct: 1, trailingActivationPct: 1 },
      path: [20_500, 20_296, 20_295],
      sold: { price: '20295', tag: 'exit:trailing-stop' },
    },
    { exits: { roi: { '0': 2 } }, path: [20_300, 20_421], sold: { price: '20421', tag: 'exit:roi' } },
  ])('paused by the operator, still sells as $exits declares, and its strategy decides nothing', async (c) => {
    const { h } = await bought(c.exits);
    expect(h.engine!.pauseInstance('b', 'paused by the operator (test)')).toBe(true);
    const ticks = status(h).counters.ticks;
    for (const price of c.path) await h.tick(price);
    expect(sells(h)).toEqual([{ ...c.sold, qty: '0.00999' }]);
    expect(h.events('exit-triggered').map((e) => e.data.reason)).toEqual([c.sold.tag.slice('exit:'.length)]);
    // Its strategy saw none of these ticks, and the exit did not resume it.
    expect(status(h)).toMatchObject({ status: 'paused', reason: 'paused by the operator (test)' });
    expect(status(h).counters.ticks).toBe(ticks);
  });

  it("paused by its strategy's failure, the stop-loss still sells once", async () => {
    const { h } = await bought({ stopLossPct: 2 }, { failHolding: true });
    await h.tick(20_000);
    expect(status(h)).toMatchObject({
      status: 'paused',
      reason: expect.stringMatching(/^onTick threw: Error: strategy bug/) as string,
    });
    await h.tick(19_619);
    await h.tick(19_500);
    expect(sells(h)).toEqual([{ price: '19619', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it('paused across a restart, the stop-loss sells', async () => {
    const { h, spec } = await bought({ stopLossPct: 2 });
    await h.restart([spec], { startPaused: new Map([['b', { reason: 'paused by the operator (test)' }]]) });
    expect(status(h).status).toBe('paused');
    await h.tick(19_619);
    expect(sells(h)).toEqual([{ price: '19619', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it('keeps the stop held on the exchange in line with its position: an entry filled while paused is protected', async () => {
    const { h } = await bought({ stopLossPct: 2 }, { restAt: 19_900, canCancel: true });
    const open = () =>
      h.store.db
        .prepare(
          "SELECT local_id AS id, quantity, stop_price AS stop FROM orders WHERE tag = 'exit:stop-loss' AND status = 'OPEN'",
        )
        .all();
    expect(open()).toEqual([{ id: 'b-3', quantity: '0.00999', stop: '19619.62' }]);
    h.engine!.pauseInstance('b', 'paused by the operator (test)');
    // The BUY the strategy left resting (at 19 900) fills while it is paused: the held stop is placed again for both.
    await h.tick(19_850);
    expect(h.store.fills.forInstance('b').filter((f) => f.side === 'BUY')).toHaveLength(2);
    // 0.01998 at an average of (200 + 199) / 0.01998 = 19969.96…: stop 19570.58 (rounded up).
    expect(open()).toEqual([{ id: 'b-4', quantity: '0.01998', stop: '19570.58' }]);
    // The exchange fills it: the whole position is sold, once.
    await h.tick(19_560);
    await h.tick(19_500);
    expect(sells(h)).toEqual([{ price: '19560', qty: '0.01998', tag: 'exit:stop-loss' }]);
    expect(h.events('held-exit-filled')).toHaveLength(1);
  });

  it('paused with its orders cancelled, keeps the stop held for its position, which fills on the exchange', async () => {
    const { h } = await bought({ stopLossPct: 2 }, { restAt: 19_000, canCancel: true });
    const actions = operatorActions(h, h.engine!);
    const paused = await actions.pauseInstance('b', { source: 'test', cancelOrders: true });
    expect(paused).toMatchObject({ outcome: 'paused', details: { cancelled: ['b-2'] } });
    const orders = () => h.store.db.prepare('SELECT local_id AS id, tag, status FROM orders ORDER BY seq').all();
    expect(orders()).toEqual([
      { id: 'b-1', tag: 'entry', status: 'FILLED' },
      { id: 'b-2', tag: 'rest', status: 'CANCELED' },
      { id: 'b-3', tag: 'exit:stop-loss', status: 'OPEN' },
    ]);
    await h.tick(19_600);
    await h.tick(19_550);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
    expect(status(h).status).toBe('paused');
  });

  it("lifts a protection whose pause ends while it is paused, and starts a stop-out's cooldown", async () => {
    const protections = { cooldownMinutes: 30, losingTrades: { count: 1, windowMinutes: 60, pauseMinutes: 10 } };
    const { h } = await bought({ stopLossPct: 2 }, { protections });
    h.engine!.pauseInstance('b', 'paused by the operator (test)');
    await h.tick(19_600, MINUTE);
    expect(
      h
        .events('protection-tripped')
        .map((e) => e.data.protection)
        .sort(),
    ).toEqual(['cooldown', 'losingTrades']);
    await h.tick(19_600, 11 * MINUTE);
    expect(h.events('protection-lifted').map((e) => e.data)).toEqual([{ protection: 'losingTrades' }]);
  });
});
