import { describe, expect, it } from 'vitest';
import { MarketState } from '../../src/engine/market-state.js';
import { dec } from '../../src/market/decimal.js';
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

describe('MarketState balances between reads', () => {
  const wanted = new Set(['BTCUSDT']);
  const usdtFree = (market: MarketState) => market.balances.get('USDT')?.free.toFixed();
  const answer = (free: number) => ({ [String(usdt.id)]: { value: free, locked_value: 0 } });

  it("cannot be changed by a reader: a strategy's write throws, and a repeated read keeps the venue's figures", () => {
    const market = new MarketState();
    market.setPairs([simPairConfig(btc, usdt)], wanted);
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    // ctx.balances hands strategies these very entries; a repeated read keeps an entry without reading it again.
    const entry = market.balances.get('USDT') as { free: unknown };
    expect(() => (entry.free = dec(1_000_000))).toThrow(TypeError);
    market.reserve('USDT', dec(100));
    expect(() => ((market.balances.get('USDT') as { free: unknown }).free = dec(1_000_000))).toThrow(TypeError);
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    expect(market.free('USDT')?.toFixed()).toBe('1000');
  });

  it("lowers a read's answer again by what was reserved after the read began, and drops an answer older than one applied", () => {
    const market = new MarketState();
    market.setPairs([simPairConfig(btc, usdt)], wanted);
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    market.reserve('USDT', dec(100)); // before the next read began: its answer counts it
    const older = market.balanceReadStarted();
    market.reserve('USDT', dec(300)); // while it is out: its answer may not
    const newer = market.balanceReadStarted();
    market.spend('USDT', dec(5));
    expect(usdtFree(market)).toBe('595');
    market.setBalances(answer(900), newer); // written after the 300 were locked
    market.balanceReadEnded();
    expect(usdtFree(market)).toBe('895'); // only what came after it began: the 5
    market.setBalances(answer(1000), older); // an answer older than the one applied: dropped
    market.balanceReadEnded();
    expect(usdtFree(market)).toBe('895');
    const next = market.balanceReadStarted();
    market.setBalances(answer(600), next);
    market.balanceReadEnded();
    expect(usdtFree(market)).toBe('600'); // nothing out any more: the venue's figure as it is
  });

  it('keeps the entry a read repeats (the object a strategy saw), and takes the figures again after a local lowering', () => {
    const market = new MarketState();
    market.setPairs([simPairConfig(btc, usdt)], wanted);
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    const read = market.balances.get('USDT');
    const version = market.balancesVersion;
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    expect(market.balances.get('USDT')).toBe(read);
    expect(market.balancesVersion).toBe(version);
    // Lowered here: the same figures read again are the venue's balance, not the lowered one.
    market.reserve('USDT', dec(100));
    expect(usdtFree(market)).toBe('900');
    market.setBalances(answer(1000), market.balanceReadStarted());
    market.balanceReadEnded();
    expect(usdtFree(market)).toBe('1000');
    expect(market.balances.get('USDT')?.locked.toFixed()).toBe('0');
    market.setBalances(answer(700), market.balanceReadStarted());
    market.balanceReadEnded();
    expect(usdtFree(market)).toBe('700');
  });
});
