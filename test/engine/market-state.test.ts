import { describe, expect, it } from 'vitest';
import { MarketState } from '../../src/engine/market-state.js';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';

const asset = (code: string) => DEFAULT_ASSETS.find((a) => a.code === code)!;
const [btc, usdt] = [asset('BTC'), asset('USDT')];

describe('MarketState pair rules', () => {
  it('keeps the rules while the venue hands out the same config, derives them again when it changes', () => {
    const market = new MarketState();
    const wanted = new Set(['BTCUSDT']);
    const config = simPairConfig(btc, usdt);
    market.setPairs([config], wanted);
    const rules = market.rules.get('BTCUSDT');
    const version = market.rulesVersion;
    expect(rules?.tickSize.toFixed()).toBe('0.01');

    market.setPairs([config], wanted);
    expect(market.rules.get('BTCUSDT')).toBe(rules);
    expect(market.rulesVersion).toBe(version);

    market.setPairs([simPairConfig(btc, usdt, { tickSize: 0.5 })], wanted);
    expect(market.rules.get('BTCUSDT')?.tickSize.toFixed()).toBe('0.5');
    expect(market.rulesVersion).toBeGreaterThan(version);
  });
});
