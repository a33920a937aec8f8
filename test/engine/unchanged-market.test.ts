/**
 * A schedule that fires again on a market that has not changed (the venue answers the same ticker) costs no
 * strategy call for a strategy that declares idempotentTick, as long as nothing else it sees changed since its
 * last call that changed nothing: its orders, fills, balances, state, and the clock when it read ctx.now().
 * The firing still counts as a tick and still runs the engine's own work (declared exits).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StrategyContext, StrategyDefinition } from '../../src/strategy/api.js';
import { captureLogger } from '../support/capture-logger.js';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
afterEach(() => h.close());

/** A strategy counting its onTick calls. */
function counted(
  tick: (ctx: StrategyContext) => void,
  idempotentTick = true,
  more: Partial<StrategyDefinition> = {},
): { definition: StrategyDefinition; calls: () => number } {
  let calls = 0;
  const definition = strategy({
    ...more,
    idempotentTick,
    onTick(ctx) {
      calls++;
      tick(ctx);
    },
  });
  return { definition, calls: () => calls };
}

/** The market job firing again: the venue's market watch, a new object saying what the last one said. */
async function refire(stepMs = 2_000): Promise<void> {
  h.clock.advance(stepMs);
  const p = h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'));
  if (p) await p;
}

const ticksOf = (name: string) => h.engine!.instances().find((i) => i.name === name)!.counters.ticks;

describe('firings on an unchanged market', () => {
  it('does not call an idempotent onTick again until the ticker changes; each firing still counts', async () => {
    h = new Harness();
    h.price(100);
    const quiet = counted(() => undefined);
    const every = counted(() => undefined, false);
    await h.start([instance('quiet', quiet.definition), instance('every', every.definition)]);
    await h.marketTick(100);
    await refire();
    await refire();
    expect(quiet.calls()).toBe(1);
    expect(every.calls()).toBe(3);
    expect(ticksOf('quiet')).toBe(3);
    await h.marketTick(101); // a new ticker (its time and price)
    await refire();
    expect(quiet.calls()).toBe(2);
    expect(every.calls()).toBe(5);
  });

  it('calls it again when the last call read the clock, queued an intent or wrote its state', async () => {
    h = new Harness();
    h.price(100);
    const clock = counted((ctx) => void ctx.now());
    const writes = counted((ctx) => {
      ctx.state.seen = ctx.ticker?.last;
    });
    const buys = counted((ctx) => {
      if (ctx.openOrders.length === 0 && ctx.position.quantity.isZero()) ctx.limit('BUY', '90', '0.01');
    });
    await h.start([
      instance('clock', clock.definition),
      instance('writes', writes.definition),
      instance('buys', buys.definition),
    ]);
    await h.marketTick(100);
    await refire();
    await refire();
    expect(clock.calls()).toBe(3);
    // A key of its state assigned on every call (even to the same value): every call is made.
    expect(writes.calls()).toBe(3);
    // The first call placed the buy, the second saw it open and placed nothing, the third is not made.
    expect(buys.calls()).toBe(2);
    expect(h.sim.openOrders('k')).toHaveLength(1);
  });

  it('calls it again after a fill, a change of its orders or of the balances, with the market unchanged', async () => {
    h = new Harness();
    h.price(100);
    const buys = counted((ctx) => {
      if (ctx.openOrders.length === 0 && ctx.position.quantity.isZero()) ctx.limit('BUY', '90', '0.01');
    });
    await h.start([instance('buys', buys.definition)]);
    await h.marketTick(100);
    await refire();
    await refire();
    expect(buys.calls()).toBe(2);

    // The balances read again: the venue's figures replace what the engine reserved for the buy (a change)…
    await h.engine!.refresh();
    await refire();
    expect(buys.calls()).toBe(3);
    // …then again, the same figures: no change.
    await h.engine!.refresh();
    await refire();
    expect(buys.calls()).toBe(3);
    // Funds locked on the venue by an order from elsewhere: the next refresh finds the balances changed.
    h.sim.placeOrder('k', { symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', price: '500', quantity: '0.5' });
    await h.engine!.refresh();
    await refire();
    expect(buys.calls()).toBe(4);
    await refire();
    expect(buys.calls()).toBe(4);

    await h.tick(89); // the buy fills (a new ticker too), the poll records and delivers the fill
    const afterFill = buys.calls();
    await refire(); // the position changed since the last call: called, and places nothing (holding)
    expect(buys.calls()).toBe(afterFill + 1);
    await refire();
    expect(buys.calls()).toBe(afterFill + 1);
    expect(h.sim.openOrders('k').map((o) => o.side)).toEqual(['SELL']); // only the order from elsewhere
  });
});

describe('a quiet price band (ctx.quietBetween)', () => {
  /** Declares the prices from 95 to 105 (exclusive) quiet. */
  const band = (ctx: StrategyContext) => ctx.quietBetween(95, 105);

  it('does not call onTick on a new ticker whose price lies in the band its last quiet call declared', async () => {
    h = new Harness();
    h.price(100);
    const banded = counted(band);
    const plain = counted(() => undefined);
    await h.start([instance('banded', banded.definition), instance('plain', plain.definition)]);
    await h.marketTick(100);
    await h.marketTick(101);
    await h.marketTick(95.01);
    await refire();
    expect(banded.calls()).toBe(1);
    expect(plain.calls()).toBe(3); // new tickers: the plain idempotent one is called on each
    expect(ticksOf('banded')).toBe(4); // every firing counts
    await h.marketTick(105); // the band's ends are out of it, and a band that does not hold the price is none
    await h.marketTick(104.9);
    expect(banded.calls()).toBe(3);
    await h.marketTick(104);
    expect(banded.calls()).toBe(3);
    await h.marketTick(94);
    expect(banded.calls()).toBe(4);
  });

  it('holds only what a quiet call of an idempotent strategy that reads no candles declared about its price', async () => {
    h = new Harness();
    h.price(100);
    const notIdempotent = counted(band, false);
    const readsCandles = counted(band, true, { candles: { '1m': 5 } });
    const aside = counted((ctx) => ctx.quietBetween(101, 110)); // does not hold the price it saw
    const buys = counted((ctx) => {
      band(ctx);
      if (ctx.openOrders.length === 0) ctx.limit('BUY', '90', '0.01');
    });
    const log = captureLogger();
    await h.start(
      [
        instance('notIdempotent', notIdempotent.definition),
        instance('readsCandles', readsCandles.definition),
        instance('aside', aside.definition),
        instance('buys', buys.definition),
      ],
      { logger: log.logger },
    );
    await h.marketTick(100);
    await h.marketTick(100.5);
    await h.marketTick(101.5); // in `aside`'s band now, but its last call saw 100.5, outside it
    expect(notIdempotent.calls()).toBe(3);
    expect(readsCandles.calls()).toBe(3);
    expect(aside.calls()).toBe(3);
    // The first call placed the buy (not quiet: no band); the second saw it open, placed nothing, declared it.
    expect(buys.calls()).toBe(2);
    // A band that can never count is told once an instance, with the reason; one that missed its price is not.
    const warned = log.lines.map((l) => JSON.parse(l) as { instance?: string; msg: string });
    const ignored = warned.filter((l) => l.msg.startsWith('ctx.quietBetween is ignored'));
    expect(ignored.map((l) => [l.instance, /: (.*) \(docs/.exec(l.msg)?.[1]])).toEqual([
      ['notIdempotent', 'the strategy does not declare idempotentTick'],
      ['readsCandles', 'the strategy reads candles or indicators'],
    ]);
  });

  it('calls onTick in the band again once something else it sees changed', async () => {
    h = new Harness();
    h.price(100);
    const banded = counted(band);
    await h.start([instance('banded', banded.definition)]);
    await h.marketTick(100);
    await h.marketTick(101);
    expect(banded.calls()).toBe(1);
    // Funds locked by an order from elsewhere: the next refresh finds the balances changed.
    h.sim.placeOrder('k', { symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', price: '500', quantity: '0.5' });
    await h.engine!.refresh();
    await h.marketTick(102);
    expect(banded.calls()).toBe(2);
    await h.marketTick(103);
    expect(banded.calls()).toBe(2);
  });
});
