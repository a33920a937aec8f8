/**
 * A fill is the strategy's before any hook can see its order gone (design.md, fill delivery): the engine delivers
 * every fill it recorded (engine/fill-delivery.ts) before it runs another hook of that instance, and runs no hook
 * while the intents of the previous one are not journaled. Without it a strategy sees its order leave the open
 * orders with no fill and places it again, or arms a second exit:
 * - at start, fills made while the bot was down reach onFill before onStart decides;
 * - a tick while the poll awaits the balance refresh, between recording a fill and delivering it, does not
 *   re-place the filled order (the engine's test strategy, and the shipped grid on a level that just filled);
 * - issue 28, "one position, two exits": onTick queued the exit of a position whose fill the running poll had
 *   recorded but not yet delivered; before that intent was journaled, the poll delivered the fill and onFill
 *   (which could not see the queued exit in ctx.openOrders) armed a second exit. Both sold.
 */
import { expect, it } from 'vitest';
import grid from '../../strategies/grid.js';
import type { FillView, StrategyContext, StrategyDefinition } from '../../src/strategy/api.js';
import { Harness, holdNextBalanceRead, instance, strategy, tickWhilePollDelivers } from './harness.js';

let h: Harness;

it('onStart sees fills made while the bot was down before it decides', async () => {
  h = new Harness();
  h.price(100);
  const fills: FillView[] = [];
  const entry = () =>
    strategy({
      onStart(ctx) {
        if (ctx.state.entered !== true && ctx.openOrders.length === 0) ctx.limit('BUY', '99', '0.01', { tag: 'entry' });
      },
      onFill(ctx, f) {
        fills.push(f);
        ctx.state.entered = true;
      },
    });
  await h.start([instance('a', entry())]);
  expect(h.sim.openOrders('k')).toHaveLength(1);
  await h.engine!.stop();
  h.store.close();
  // While the bot is down, the entry fills.
  h.clock.advance(60_000);
  h.sim.onPrice('BTCUSDT', 98.9, h.clock.now());
  h.store = h.openStore();
  await h.start([instance('a', entry())]);
  expect(fills).toHaveLength(1);
  // Expected: no second entry. Actual: onStart ran before the fill was delivered and placed a-2.
  expect(h.store.db.prepare("SELECT local_id FROM orders WHERE instance = 'a'").pluck().all()).toEqual(['a-1']);
});

it('a tick while the poll awaits the balance refresh does not re-place a filled order', async () => {
  h = new Harness();
  h.price(100);
  const fills: FillView[] = [];
  // The engine's own test strategy: one BUY while none is open and none has filled.
  const def = strategy({
    onTick(ctx: StrategyContext) {
      if (ctx.openOrders.length === 0 && fills.length === 0) ctx.limit('BUY', '99.5', '0.01', { tag: 'entry' });
    },
    onFill(_ctx, fill) {
      fills.push(fill);
    },
  });
  await h.start([instance('a', def)]);
  await h.tick(100); // places a-1
  expect(h.store.orders.get('a-1')?.status).toBe('OPEN');

  // a-1 fills; the poll records the fill, and while it awaits the balance refresh before delivering it, the
  // market job fires (a different cron job): the tick runs outside the lock.
  await tickWhilePollDelivers(h, 99.4);
  await h.engine!.pollOrders();

  const placed = h.store.db.prepare("SELECT local_id, status FROM orders WHERE instance = 'a'").all();
  // Expected: only a-1. Actual: a second BUY a-2 the strategy would never have asked for had it seen its fill.
  expect(placed).toEqual([{ local_id: 'a-1', status: 'FILLED' }]);
  expect(fills).toHaveLength(1);
});

it('grid: no second BUY on a level whose fill is recorded but not yet delivered', async () => {
  h = new Harness();
  h.price(100);
  const def = grid as unknown as StrategyDefinition;
  await h.start([
    instance('g', def, { params: { referencePrice: '100', levels: 2, spacingAbs: '1', quantity: '0.01' } }),
  ]);
  await h.tick(100);
  // Hold the next balance read: the one the poll makes after recording a fill, before delivering it.
  const { inBalance, release } = holdNextBalanceRead(h);
  h.clock.advance(5000);
  h.sim.onPrice('BTCUSDT', 98.9, h.clock.now()); // the BUY at 99 fills
  const poll = h.engine!.pollOrders()!;
  await inBalance;
  h.clock.advance(100);
  h.sim.onPrice('BTCUSDT', 99.5, h.clock.now());
  const tick = h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'));
  release();
  await poll;
  if (tick) await tick;
  const rows = h.store.db.prepare("SELECT local_id, side, price, status FROM orders WHERE instance='g'").all();
  const buysAt99 = (rows as { side: string; price: string }[]).filter((r) => r.side === 'BUY' && r.price === '99');
  expect(buysAt99).toHaveLength(1);
});

/** An exit over the whole position once there is one, unless an exit is open already (DCA's armExit). */
function armExit(ctx: StrategyContext): void {
  const held = ctx.position.quantity;
  if (held.lte(0) || ctx.openOrders.some((o) => o.tag === 'exit')) return;
  ctx.limit('SELL', '120', held, { tag: 'exit' });
}

/** One entry on the first tick, then armExit on every tick (and on every fill when `onFill`). */
function entryThenExit(entry: (ctx: StrategyContext) => void, onFill: boolean): StrategyDefinition {
  let entered = false;
  return strategy({
    onTick(ctx) {
      if (entered) return armExit(ctx);
      entered = true;
      entry(ctx);
    },
    ...(onFill ? { onFill: armExit } : {}),
  });
}

function sells(): unknown[] {
  return h.store.db.prepare("SELECT local_id FROM orders WHERE instance = 'a' AND side = 'SELL'").all();
}

it('a tick that queues an exit while the poll delivers the entry fill: onFill sees it, one exit', async () => {
  h = new Harness();
  h.price(100);
  await h.start([
    instance(
      'a',
      entryThenExit((ctx) => ctx.limit('BUY', '99.5', '0.01', { tag: 'entry' }), true),
    ),
  ]);
  await h.tick(100); // places a-1, the entry
  expect(h.store.orders.get('a-1')?.status).toBe('OPEN');

  // The entry fills; the poll records it (the position grows at once) and, before delivering it to onFill, a
  // tick sees the position and queues the exit, which waits for the lock.
  await tickWhilePollDelivers(h, 99.4);
  await h.engine!.pollOrders();
  await h.tick(99.6);

  expect(sells()).toHaveLength(1);
  expect(h.engine!.instances()[0]?.counters.fills).toBe(1);
});

it('two ticks in a row while the exit of the first waits for the lock: one exit', async () => {
  h = new Harness();
  h.price(100);
  await h.start([
    instance(
      'a',
      entryThenExit((ctx) => ctx.market('BUY', { quantity: '0.01' }), false),
    ),
  ]);
  await h.tick(100); // the entry fills at once; its fill is delivered by the poll
  expect(h.engine!.instances()[0]?.counters.fills).toBe(1);

  // A refresh holds the lock (held in its balance read); two market ticks come meanwhile.
  h.clock.advance(5000);
  const { inBalance, release } = holdNextBalanceRead(h);
  const refresh = h.engine!.refresh();
  await inBalance;
  const tickers = await h.venue.inner.marketWatch('BTCUSDT');
  const first = h.engine!.observe(tickers);
  const second = h.engine!.observe(tickers);
  release();
  await refresh;
  if (first) await first;
  if (second) await second;

  expect(sells()).toHaveLength(1);
});

it('a fill whose delivery mark rolled back is delivered again, before the next one, as the journal says (kept in memory as it)', async () => {
  h = new Harness();
  h.price(100);
  const told: string[] = [];
  const def = strategy({
    onStart(ctx) {
      if (ctx.state.placed === true) return;
      ctx.state.placed = true;
      ctx.limit('BUY', '99', '0.01', { tag: 'first' });
      ctx.limit('BUY', '98', '0.01', { tag: 'second' });
    },
    onFill(_ctx, fill) {
      told.push(fill.order.tag as string);
    },
  });
  const engine = await h.start([instance('a', def)]);
  // What waits for onFill is the recorded row itself, shared: frozen, so no reader can change it for another.
  const recorded: object[] = [];
  const fillRecorded = engine.fillRecorded.bind(engine);
  engine.fillRecorded = (row, fill) => {
    recorded.push(fill);
    fillRecorded(row, fill);
  };
  // The first fill's delivery mark fails inside its transaction: the mark and the state are rolled back.
  const fills = h.store.fills;
  const mark = fills.markDelivered.bind(fills);
  let refuse = true;
  fills.markDelivered = (key) => {
    mark(key);
    if (refuse) {
      refuse = false;
      throw new Error('mark refused');
    }
  };
  h.clock.advance(5000);
  h.sim.onPrice('BTCUSDT', 98.9, h.clock.now());
  await expect(Promise.resolve(h.engine!.pollOrders())).rejects.toThrow(/mark refused/);
  expect(told).toEqual(['first']);
  expect(fills.undelivered('a').map((f) => f.qty)).toEqual(['0.01']);
  // The next fill's delivery tells the first again (still undelivered in the journal), then the second.
  await h.tick(97.9);
  expect(told).toEqual(['first', 'first', 'second']);
  expect(fills.undelivered('a')).toEqual([]);
  expect(recorded).toHaveLength(2);
  expect(recorded.every((fill) => Object.isFrozen(fill))).toBe(true);
  // A restart reads what is left undelivered from the journal: nothing, so nothing is told again.
  await h.restart([instance('a', def)]);
  expect(told).toEqual(['first', 'first', 'second']);
});
