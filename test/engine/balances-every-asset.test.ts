/**
 * The account's balances as the engine reads them name every asset the account holds, also those of pairs no
 * instance trades (the operator's /balance and the metrics list what the engine read): a daemon trading
 * BTCUSDT alone reads that pair's config only, so USDC and ETH had no name and were left out.
 */
import { describe, expect, it } from 'vitest';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
describe('the balances the engine reads', () => {
  it('list every asset with a balance, not only those of the traded pair', async () => {
    h = new Harness({ balances: { USDT: '1000', BTC: '0.5', USDC: '250', ETH: '1.25' } });
    h.price(60_000);
    const engine = await h.start([instance('only-btc', strategy({}))]);
    const held = Object.fromEntries(engine.balances().map((b) => [b.asset, b.free.toFixed()]));
    expect(held).toEqual({ USDT: '1000', BTC: '0.5', USDC: '250', ETH: '1.25' });
    // Named once: the next refresh reads the traded pair's config alone again.
    let allPairs = 0;
    const venue = h.venue as unknown as { pairConfig: (symbol?: string) => Promise<unknown> };
    const original = venue.pairConfig.bind(h.venue);
    venue.pairConfig = (symbol) => {
      if (symbol === undefined) allPairs++;
      return original(symbol);
    };
    await engine.refresh();
    expect(allPairs).toBe(0);
    expect(
      engine
        .balances()
        .map((b) => b.asset)
        .sort(),
    ).toEqual(['BTC', 'ETH', 'USDC', 'USDT']);
  });
});
