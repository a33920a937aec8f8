/**
 * A pair-list strategy file for the tests of pairs listed after the start (test/engine/pair-list-listing.test.ts,
 * test/app/paper-live-listing.test.ts): its template over the USDT pairs and the strategy it runs.
 */
import { expandPairLists, fileInstances, StrategyFileSchema } from '../../src/config/strategy-file.js';
import type { InstanceSpec } from '../../src/engine/instance-runner.js';
import type { PairList } from '../../src/config/pair-list.js';
import { defineStrategy, ema, z } from '../../src/strategy/api.js';

/**
 * One resting BUY at half the price while none rests, on the list only (entries off it are refused); its EMA's
 * period is its param (the engine's indicatorSpecs show the params an instance runs with).
 */
export const restOnce = defineStrategy({
  name: 'rest-once',
  params: z.object({ period: z.number().default(3) }),
  indicators: (p) => ({ trend: ema('1m', p.period) }),
  onTick(ctx) {
    if (ctx.openOrders.length > 0 || ctx.price === undefined) return;
    ctx.limit('BUY', ctx.price.div(2).toFixed(), '0.01', { tag: 'rest' });
  },
});

/** A pair-list file over the USDT pairs, worked out every minute, its market job every 5 seconds. */
export const [usdtList] = fileInstances(
  StrategyFileSchema.parse({
    name: 'usdt',
    strategy: 'inline',
    pairlist: { quote: 'USDT', refresh: '0 * * * * *' },
    schedule: '*/5 * * * * *',
  }),
);

/**
 * The file's instances on `universe` (the pairs the market has at the start), running restOnce with `period`; `list`
 * sets filters of the pair list.
 */
export function usdtInstances(universe: readonly string[], period = 3, list: Partial<PairList> = {}): InstanceSpec[] {
  const config = { ...usdtList!, pairlist: { ...usdtList!.pairlist!, ...list } };
  return expandPairLists([{ config, definition: restOnce, params: { period } }], universe);
}
