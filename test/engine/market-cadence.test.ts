/**
 * The market watch keeps its cadence while decisions wait (issue 41): on a clock that runs by itself (the
 * daemon's: decideApart), a market job ends once its tickers are in, and one that fires while the decisions of
 * the last are still placing orders (behind a full request budget: bench:live-pairs at 100 pairs saw no
 * market-watch request in a minute) brings its tickers to them: the instances not yet ticked decide on those.
 */
import { expect, it } from 'vitest';
import type { OrderRequest } from '../../src/ports/venue.js';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { Harness, instance, strategy } from './harness.js';

const SCHEDULE = '*/2 * * * * *';

it('a market job fired while the last one still places its orders brings fresh tickers to its decisions', async () => {
  const h = new Harness({ balances: { USDT: '100000', BTC: '2', ETH: '2' } });
  h.price(100);
  h.price(50, 'ETHUSDT');
  const decided: string[] = [];
  const buyOnce = () => {
    let done = false;
    return strategy({
      onTick(ctx) {
        decided.push(`${ctx.symbol} at ${ctx.price?.toFixed()}`);
        if (!done) ctx.limit('BUY', ctx.price!.mul('0.9'), '0.01', { tag: 'rest' });
        done = true;
      },
    });
  };
  await h.start(
    [
      instance('btc', buyOnce(), { schedule: SCHEDULE }),
      instance('eth', buyOnce(), { symbol: 'ETHUSDT', schedule: SCHEDULE }),
    ],
    { decideApart: true },
  );
  // The first order waits (for the request budget, as it were) until released.
  let release!: () => void;
  let held!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const inCreate = new Promise<void>((r) => (held = r));
  const create = h.venue.createOrder.bind(h.venue);
  let first = true;
  h.venue.createOrder = async (request: OrderRequest): Promise<OrderRecord> => {
    if (first) {
      first = false;
      held();
      await gate;
    }
    return create(request);
  };
  const watched = () => h.venue.marketWatchAsked;
  await h.engine!.marketCycle(SCHEDULE);
  await inCreate;
  expect(decided).toHaveLength(1);
  // The next firing, while the first instance's order is still held: the job ends with its tickers in.
  h.clock.advance(2_000);
  h.price(102);
  h.price(51, 'ETHUSDT');
  await h.engine!.marketCycle(SCHEDULE);
  expect(watched()).toBe(2);
  expect(decided).toHaveLength(1);
  release();
  await h.engine!.stop();
  // The second instance decided after the first's order went out, on the second job's ticker.
  expect(decided).toEqual([expect.stringMatching(/ at (100|50)$/), expect.stringMatching(/ at (102|51)$/)]);
  expect(h.venue.creates).toBe(2);
});
