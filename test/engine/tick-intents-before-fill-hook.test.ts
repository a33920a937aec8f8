/**
 * Issue 28, "one position, two exits": onTick queued the exit of a position whose fill the running poll had
 * recorded but not yet delivered; before that intent was journaled, the poll delivered the fill and onFill
 * (which could not see the queued exit in ctx.openOrders) armed a second exit. Both sold. The engine must not
 * run another hook of an instance while the intents of its previous hook are not journaled yet.
 */
import { expect, it } from 'vitest';
import type { StrategyContext, StrategyDefinition } from '../../src/strategy/api.js';
import { Harness, holdNextBalanceRead, instance, strategy, tickWhilePollDelivers } from './harness.js';

let h: Harness;
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
