/**
 * Declared stops held on the exchange (held-exits.ts), by the real engine on the real matching engine: placed
 * once the entry fills, filled by the exchange itself, kept in line with the position (a second entry, a
 * strategy's own SELL, the operator's exit), cancelled when the position closes, and never sold twice with the
 * tick-based exits.
 */
import { describe, expect, it } from 'vitest';
import { defineStrategy, type ExitRulesDecl, type ProtectionsDecl, z } from '../../src/strategy/api.js';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Harness, instance, operatorActions, venueError } from './harness.js';

/** Buys 0.01 at MARKET `buys` times (one a tick, tag `entry`); sells what it holds when the price is `sellAt`. */
function buyer(exits: ExitRulesDecl, options: { buys?: number; sellAt?: number; protections?: ProtectionsDecl } = {}) {
  return defineStrategy({
    name: 'buyer',
    params: z.object({}),
    exits,
    protections: options.protections ?? {},
    onTick(ctx) {
      const st = ctx.state as { bought?: number; seen?: number };
      st.seen = Math.max(st.seen ?? 0, ctx.openOrders.length);
      const price = ctx.price?.toNumber();
      if (options.sellAt !== undefined && price !== undefined && price >= options.sellAt && ctx.position.quantity.gt(0))
        return void ctx.market('SELL', { quantity: ctx.position.quantity }, { tag: 'own-exit' });
      if ((st.bought ?? 0) >= (options.buys ?? 1) || ctx.openOrders.length > 0) return;
      st.bought = (st.bought ?? 0) + 1;
      ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' });
    },
  });
}

let h: Harness | undefined;
async function started(exits: ExitRulesDecl, options: Parameters<typeof buyer>[1] = {}) {
  h = new Harness({ balances: { USDT: '10000' } });
  h.price(20_000);
  const spec = instance('b', buyer(exits, options));
  // The operator layer's kill switch file (operatorActions), which the engine reads as well.
  await h.start([spec], { killSwitchFile: join(h.dir, 'KILL') });
  await h.tick(20_000);
  return { h, spec };
}

interface Row {
  localId: string;
  type: string;
  tag: string;
  status: string;
  quantity: string;
  price: string | null;
  stop_price: string | null;
  limit_price: string | null;
}

const rows = (h: Harness, where = "side = 'SELL'") =>
  h.store.db
    .prepare(
      `SELECT local_id AS localId, type, tag, status, quantity, price, stop_price, limit_price FROM orders WHERE ${where} ORDER BY seq`,
    )
    .all() as Row[];

/** The SELL orders as [type, tag, status]. */
const sellOrders = (h: Harness) => rows(h).map((r) => [r.type, r.tag, r.status]);

const sells = (h: Harness) => h.sells('b');

describe('a declared stop held on the exchange', () => {
  it('is placed as a STOP_LIMIT once the entry fills, and the exchange fills it: one sell, none on ticks', async () => {
    const { h } = await started({ stopLossPct: 2 });
    // 0.00999 held (fee in base) at an average of 20020.02…: stop 19619.62 (rounded up), limit 0.5 % under it.
    expect(rows(h)).toEqual([
      {
        localId: 'b-2',
        type: 'STOP_LIMIT',
        tag: 'exit:stop-loss',
        status: 'OPEN',
        quantity: '0.00999',
        price: '19521.52',
        stop_price: '19619.62',
        limit_price: null,
      },
    ]);
    expect(h.events('exit-held')).toHaveLength(1);
    // The strategy does not see the engine's order (it saw none at any tick).
    await h.tick(19_900);
    expect(JSON.parse(h.store.state.get('b') ?? '{}')).toMatchObject({ seen: 0 });
    // The price falls through the stop, above its limit: the exchange fills it; the ticks sell nothing more.
    await h.tick(19_600);
    await h.tick(19_550);
    await h.tick(19_400);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
    expect(rows(h).map((r) => [r.type, r.status])).toEqual([['STOP_LIMIT', 'FILLED']]);
    expect(h.events('held-exit-filled').map((e) => e.data)).toEqual([
      {
        symbol: 'BTCUSDT',
        reason: 'stop-loss',
        price: '19600',
        entry: expect.stringMatching(/^20020\.02/) as string,
        localId: 'b-2',
      },
    ]);
    expect(h.events('exit-triggered')).toEqual([]);
    expect(h.events('exit-held')).toHaveLength(1);
  });

  it('gapped under its limit, it is cancelled and the position sold at market, once', async () => {
    const { h } = await started({ stopLossPct: 2 });
    await h.tick(19_000);
    await h.tick(18_900);
    expect(sellOrders(h)).toEqual([
      ['STOP_LIMIT', 'exit:stop-loss', 'CANCELED'],
      ['MARKET', 'exit:stop-loss', 'FILLED'],
    ]);
    expect(sells(h)).toEqual([{ price: '19000', qty: '0.00999', tag: 'exit:stop-loss' }]);
    expect(h.events('exit-triggered')).toHaveLength(1);
  });

  it('with a roi "0" target it is an OCO bracket whose take-profit leg can fill', async () => {
    const { h } = await started({ stopLossPct: 2, roi: { '0': 3 } });
    expect(rows(h)).toEqual([
      {
        localId: 'b-2',
        type: 'OCO',
        tag: 'exit:bracket',
        status: 'OPEN',
        quantity: '0.00999',
        price: '20620.63',
        stop_price: '19619.62',
        limit_price: '19521.52',
      },
    ]);
    await h.tick(20_700);
    await h.tick(20_800);
    expect(sells(h)).toEqual([{ price: '20620.63', qty: '0.00999', tag: 'exit:bracket' }]);
    expect(h.events('held-exit-filled').map((e) => e.data.reason)).toEqual(['roi']);
    expect(h.events('exit-triggered')).toEqual([]);
  });

  it('follows the position: a second entry replaces it with the whole position at the new average', async () => {
    const { h } = await started({ stopLossPct: 2 }, { buys: 2 });
    await h.tick(21_000);
    expect(rows(h).map((r) => [r.localId, r.status, r.quantity, r.stop_price])).toEqual([
      ['b-2', 'CANCELED', '0.00999', '19619.62'],
      // 0.01998 at an average of (200 + 210) / 0.01998 = 20520.52…: stop 20110.12 (rounded up).
      ['b-4', 'OPEN', '0.01998', '20110.12'],
    ]);
    // Nothing to change on the next polls: it stays.
    await h.tick(21_050);
    await h.tick(21_000);
    expect(rows(h).filter((r) => r.status === 'OPEN')).toHaveLength(1);
  });

  it("is released for the strategy's own SELL and not placed again once flat", async () => {
    const { h } = await started({ stopLossPct: 2 }, { sellAt: 20_500 });
    await h.tick(20_600);
    await h.tick(20_650);
    expect(sellOrders(h)).toEqual([
      ['STOP_LIMIT', 'exit:stop-loss', 'CANCELED'],
      ['MARKET', 'own-exit', 'FILLED'],
    ]);
    expect(sells(h)).toEqual([{ price: '20600', qty: '0.00999', tag: 'own-exit' }]);
  });

  it("stays held when a pause lands between the strategy's SELL and its turn of the lock (the SELL is dropped)", async () => {
    h = new Harness({ balances: { USDT: '10000' } });
    h.price(20_000);
    h.price(50, 'ETHUSDT');
    const restsOnce = defineStrategy({
      name: 'rests',
      params: z.object({}),
      onTick(ctx) {
        if (ctx.openOrders.length === 0) ctx.limit('BUY', '40', '0.5', { tag: 'rest' });
      },
    });
    await h.start([
      instance('b', buyer({ stopLossPct: 2 }, { sellAt: 20_500 })),
      instance('e', restsOnce, { symbol: 'ETHUSDT' }),
    ]);
    await h.tick(20_000);
    expect(sellOrders(h)).toEqual([['STOP_LIMIT', 'exit:stop-loss', 'OPEN']]);
    // e's order holds the engine's lock (its create waits, as for the request budget) ...
    let release!: () => void;
    let held!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inCreate = new Promise<void>((r) => (held = r));
    const create = h.venue.createOrder.bind(h.venue);
    h.venue.createOrder = async (request) => {
      if (request.symbol === 'ETHUSDT') {
        held();
        await gate;
      }
      return create(request);
    };
    const eth = h.marketTick(50, 1_000, 'ETHUSDT');
    await inCreate;
    // ... while b decides to sell and waits for its turn, and the operator pauses b meanwhile.
    const btc = h.marketTick(20_600, 1_000);
    await new Promise((r) => setImmediate(r)); // the in-process market watch answered and b's onTick ran
    expect(h.engine!.pauseInstance('b', 'paused by the operator (test)')).toBe(true);
    release();
    await Promise.all([eth, btc]);
    await h.engine!.pollOrders();
    // The SELL was dropped (b no longer runs), and the stop that protects the position is still on the exchange.
    expect(sellOrders(h)).toEqual([['STOP_LIMIT', 'exit:stop-loss', 'OPEN']]);
    expect(sells(h)).toEqual([]);
  });

  it("is cancelled by the operator's exit, which sells the position once", async () => {
    const { h } = await started({ stopLossPct: 2 });
    const exit = await h.engine!.exitPosition('b', { type: 'MARKET' }, 'operator exit');
    expect(exit?.cancelled).toEqual(['b-2']);
    expect(exit?.refused).toBeUndefined();
    await h.tick(20_000);
    await h.tick(19_000);
    expect(sellOrders(h)).toEqual([
      ['STOP_LIMIT', 'exit:stop-loss', 'CANCELED'],
      ['MARKET', 'exit', 'FILLED'],
    ]);
    expect(sells(h)).toEqual([{ price: '20000', qty: '0.00999', tag: 'exit' }]);
  });

  it('stays on the exchange when the kill switch refuses the exit; the answer names what protects the position', async () => {
    const { h } = await started({ stopLossPct: 2 });
    writeFileSync(join(h.dir, 'KILL'), '');
    const actions = operatorActions(h, h.engine!);
    const refusal = await actions.exitPosition('b', { type: 'MARKET' }, { source: 'test' }).catch((e: unknown) => e);
    expect(refusal).toMatchObject({ code: 'E_EXIT_REFUSED' });
    // Nothing cancelled, nothing paused: the held stop protects the position as before.
    expect((refusal as Error).message).toMatch(
      /^exit of b refused: kill switch file .* exists: no new orders \(nothing cancelled\); the position is protected by b-2 \(STOP_LIMIT SELL 0\.00999, stop 19619\.62 limit 19521\.52\)$/,
    );
    expect(sellOrders(h)).toEqual([['STOP_LIMIT', 'exit:stop-loss', 'OPEN']]);
    expect(h.engine!.instances()[0]?.status).toBe('running');
    // The exchange still holds it: the price falls through it and it fills, with the kill switch on.
    await h.tick(19_600);
    await h.tick(19_550);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it('is put back when the exit cancelled it and its SELL was rejected', async () => {
    const { h } = await started({ stopLossPct: 2 });
    h.venue.createFault = { when: 'before-place', error: venueError('rejected', 'E_EXCHANGE') };
    const actions = operatorActions(h, h.engine!);
    const refusal = await actions.exitPosition('b', { type: 'MARKET' }, { source: 'test' }).catch((e: unknown) => e);
    expect((refusal as Error).message).toMatch(
      /^exit of b refused: the SELL b-3 was REJECTED .*; cancelled b-2; put back b-4; the position is protected by b-4 \(STOP_LIMIT SELL 0\.00999, stop 19619\.62 limit 19521\.52\)$/,
    );
    expect(sellOrders(h)).toEqual([
      ['STOP_LIMIT', 'exit:stop-loss', 'CANCELED'],
      ['MARKET', 'exit', 'REJECTED'],
      ['STOP_LIMIT', 'exit:stop-loss', 'OPEN'],
    ]);
    // Paused by the exit, the stop it put back still fills on the exchange.
    expect(h.engine!.instances()[0]?.status).toBe('paused');
    await h.tick(19_600);
    await h.tick(19_550);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it('a trailing stop that triggers cancels it first and sells once', async () => {
    const { h } = await started({ stopLossPct: 5, trailingStopPct: 1 });
    await h.tick(20_600);
    await h.tick(20_390);
    await h.tick(20_000);
    expect(sellOrders(h)).toEqual([
      ['STOP_LIMIT', 'exit:stop-loss', 'CANCELED'],
      ['MARKET', 'exit:trailing-stop', 'FILLED'],
    ]);
    expect(sells(h)).toEqual([{ price: '20390', qty: '0.00999', tag: 'exit:trailing-stop' }]);
  });

  it('stays as it is across a restart (no second one), and fills while the engine is stopped', async () => {
    const { h, spec } = await started({ stopLossPct: 2 });
    await h.engine!.stop();
    // The engine is down; the exchange goes on: the price falls through the stop.
    h.clock.advance(5000);
    h.sim.onPrice('BTCUSDT', 19_600, h.clock.now());
    await h.restart([spec]);
    await h.tick(19_500);
    await h.tick(19_000);
    expect(rows(h).map((r) => [r.type, r.status])).toEqual([['STOP_LIMIT', 'FILLED']]);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it('is not held where the venue cannot cancel: the stop acts on ticks', async () => {
    h = new Harness({ balances: { USDT: '10000' }, canCancel: false });
    h.price(20_000);
    await h.start([instance('b', buyer({ stopLossPct: 2 }))]);
    await h.tick(20_000);
    expect(rows(h)).toEqual([]);
    await h.tick(19_600);
    expect(sells(h)).toEqual([{ price: '19600', qty: '0.00999', tag: 'exit:stop-loss' }]);
  });

  it("is placed on the pair's PRICE_FILTER tick and quantity step (a coarse pair)", async () => {
    const [btc, usdt] = ['BTC', 'USDT'].map((code) => DEFAULT_ASSETS.find((a) => a.code === code)!) as [
      (typeof DEFAULT_ASSETS)[number],
      (typeof DEFAULT_ASSETS)[number],
    ];
    const pair = simPairConfig(btc, usdt, { tickSize: 5, stepSize: '0.001', minQty: '0.001' });
    h = new Harness({ balances: { USDT: '10000' }, sim: { pairs: [pair] } });
    h.price(20_000);
    await h.start([instance('b', buyer({ stopLossPct: 2 }))]);
    await h.tick(20_000);
    // 0.00999 held: 0.009 on the step. Stop 19619.62 rounded up onto the 5 tick (19620); limit 0.5 % under it,
    // rounded down (19521.9 to 19520).
    expect(rows(h).map((r) => [r.type, r.status, r.quantity, r.stop_price, r.price])).toEqual([
      ['STOP_LIMIT', 'OPEN', '0.009', '19620', '19520'],
    ]);
  });
});
