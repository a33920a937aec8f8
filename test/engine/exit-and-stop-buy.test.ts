/**
 * The operator's manual exit and stop-buy in the engine, against the real matching engine: an exit pauses the
 * instance, cancels its orders and sells the position less dust through the one order path, exactly once (a
 * second exit sends nothing, a working exit order is not replaced); the kill switch blocks an exit, stop-buy
 * does not; a sale refused after the cancels puts the protective SELLs back; stop-buy refuses BUY intents only and holds across a restart; an instance held at start stays
 * paused without running onStart.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { D } from '../../src/market/decimal.js';
import { positionFromFills } from '../../src/market/position.js';
import { Harness, instance, strategy, venueError } from './harness.js';

let h: Harness;
/** On its first tick: buys 0.01 at market, rests a BUY below and an OCO SELL bracket above and below. */
const opener = () => {
  let started = 0;
  const definition = strategy({
    orderTypes: ['LIMIT', 'MARKET', 'OCO'],
    onStart() {
      started++;
    },
    onTick(ctx) {
      if (ctx.state.opened === true) return;
      ctx.state.opened = true;
      ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' });
      ctx.limit('BUY', '19000', '0.01', { tag: 'dip' });
      ctx.oco('SELL', { price: '21000', stopPrice: '19500', limitPrice: '19400' }, '0.005', { tag: 'bracket' });
    },
  });
  return { definition, starts: () => started };
};

/** The default pair's quantity step (the matching engine's BTCUSDT). */
const STEP = new D('0.000001');

describe('manual exit', () => {
  it('pauses, cancels the open orders and sells the position once; asking again sends nothing', async () => {
    h = new Harness();
    const { definition } = opener();
    const engine = await h.start([instance('a', definition)]);
    await h.tick(20_000);
    const before = h.store.orders.activeForInstance('a').map((o) => o.tag);
    expect(before.sort()).toEqual(['bracket', 'dip']);
    const creates = h.venue.creates;

    const exit = await engine.exitPosition('a', { type: 'MARKET' }, 'test exit');
    expect(engine.instances()[0]?.status).toBe('paused');
    expect(exit?.cancelled).toHaveLength(2);
    expect(exit?.refused).toBeUndefined();
    expect(exit?.sent).toMatchObject({ side: 'SELL', type: 'MARKET', tag: 'exit' });
    expect(h.venue.creates).toBe(creates + 1);
    await h.tick(20_010);
    expect(h.store.orders.activeForInstance('a')).toEqual([]);
    // Flat less dust: what is left is below the pair's quantity step.
    const left = positionFromFills(h.store.fills.forInstance('a')).position.quantity;
    expect(left.gte(0) && left.lt(STEP)).toBe(true);
    expect(new D(exit?.sent?.quantity ?? '0').plus(left).gt(0)).toBe(true);

    const again = await engine.exitPosition('a', { type: 'MARKET' }, 'test exit again');
    expect(again?.sent).toBeUndefined();
    expect(again?.refused).toBeUndefined();
    expect(h.venue.creates).toBe(creates + 1);
  });

  it('leaves a working LIMIT exit alone: a second exit does not sell twice', async () => {
    h = new Harness();
    const engine = await h.start([instance('a', opener().definition)]);
    await h.tick(20_000);
    const first = await engine.exitPosition('a', { type: 'LIMIT', price: new D('25000.004') }, 'exit at 25000');
    // A SELL rounds up onto the tick: never less than asked.
    expect(first?.sent).toMatchObject({ type: 'LIMIT', price: '25000.01', status: 'OPEN' });
    const creates = h.venue.creates;
    const second = await engine.exitPosition('a', { type: 'MARKET' }, 'exit again');
    expect(second?.sent).toBeUndefined();
    expect(second?.working.map((w) => w.localId)).toEqual([first?.sent?.localId]);
    expect(second?.cancelled).toEqual([]);
    expect(h.venue.creates).toBe(creates);
  });

  it('is blocked by the kill switch, not by stop-buy', async () => {
    h = new Harness();
    const killFile = join(h.dir, 'KILL');
    const engine = await h.start([instance('a', opener().definition)], { killSwitchFile: killFile });
    await h.tick(20_000);
    engine.setStopBuy(true, 'test');
    writeFileSync(killFile, '');
    const blocked = await engine.exitPosition('a', { type: 'MARKET' }, 'exit under the kill switch');
    expect(blocked?.sent).toBeUndefined();
    expect(blocked?.refused).toMatch(/kill switch file .* exists/);
    rmSync(killFile);
    const through = await engine.exitPosition('a', { type: 'MARKET' }, 'exit under stop-buy');
    expect(through?.refused).toBeUndefined();
    expect(through?.sent).toMatchObject({ side: 'SELL', tag: 'exit' });
  });
});

describe('an exit refused after its cancels', () => {
  it("puts the strategy's protective SELLs back as they were, not its BUYs; the instance stays paused", async () => {
    h = new Harness();
    const engine = await h.start([instance('a', opener().definition)]);
    await h.tick(20_000);
    h.venue.createFault = { when: 'before-place', error: venueError('rejected', 'E_EXCHANGE') };
    const exit = await engine.exitPosition('a', { type: 'MARKET' }, 'exit, rejected');
    expect(exit?.refused).toMatch(/^the SELL a-4 was REJECTED/);
    expect(exit?.cancelled.sort()).toEqual(['a-2', 'a-3']);
    expect(exit?.restored).toEqual(['a-5']);
    const active = h.store.orders.activeForInstance('a');
    expect(
      active.map((o) => [o.localId, o.type, o.side, o.tag, o.price, o.stopPrice, o.limitPrice, o.quantity]),
    ).toEqual([['a-5', 'OCO', 'SELL', 'bracket', '21000', '19500', '19400', '0.005']]);
    expect(exit?.protectedBy.map((o) => o.localId)).toEqual(['a-5']);
    expect(engine.instances()[0]?.status).toBe('paused');
  });
});

describe('stop-buy', () => {
  it('refuses BUY intents and lets SELLs through; it holds across a restart until turned off', async () => {
    h = new Harness();
    const both = () =>
      strategy({
        onTick(ctx) {
          const n = (ctx.state.n as number | undefined) ?? 0;
          ctx.state.n = n + 1;
          ctx.limit('BUY', '19000', '0.001', { tag: `buy-${n}` });
          ctx.limit('SELL', '21000', '0.001', { tag: `sell-${n}` });
        },
      });
    let engine = await h.start([instance('a', both())]);
    expect(engine.setStopBuy(true, 'api 127.0.0.1')).toBe(true);
    expect(engine.setStopBuy(true, 'api 127.0.0.1')).toBe(false);
    await h.tick(20_000);
    const tags = () => h.store.orders.activeForInstance('a').map((o) => o.tag);
    expect(tags()).toEqual(['sell-0']);
    expect(h.events('refused').at(0)?.data.reason).toBe('stop-buy is on: no new BUY orders');
    expect(h.events('stop-buy').map((e) => e.data)).toEqual([{ on: true, source: 'api 127.0.0.1' }]);

    engine = await h.restart([instance('a', both())]);
    expect(engine.brakes().stopBuy).toBe(true);
    await h.tick(20_000);
    expect(tags()).toEqual(['sell-0', 'sell-1']);
    engine.setStopBuy(false, 'telegram:1');
    await h.tick(20_000);
    expect(tags()).toEqual(['sell-0', 'sell-1', 'buy-2', 'sell-2']);
  });
});

describe('an instance held at start', () => {
  it('starts paused with its reason and runs no onStart', async () => {
    h = new Harness();
    const { definition, starts } = opener();
    const engine = await h.start([instance('a', definition)], {
      startPaused: new Map([['a', { reason: 'an exit was interrupted' }]]),
    });
    expect(engine.instances()[0]).toMatchObject({ status: 'paused', reason: 'an exit was interrupted' });
    expect(starts()).toBe(0);
    await h.tick(20_000);
    expect(h.store.orders.activeForInstance('a')).toEqual([]);
  });
});
