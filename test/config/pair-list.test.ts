/**
 * The pair list's rule (config/pair-list.ts): each filter leaves a pair out with the reason and the figures, the
 * ranking is highest first with ties by symbol, top N cuts it, and pairs of another quote asset are counted, not
 * listed. And check-config's view of an exchange's market watch now (a simulated exchange's server).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type PairFigures, PairListSchema, resolvePairList } from '../../src/config/pair-list.js';
import { figuresOnMarket } from '../../src/cli/pair-list-view.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { type SimServer, startSimServer } from '../../src/sim/sim-server.js';

const pair = (symbol: string, figures: Partial<PairFigures>): PairFigures => ({
  symbol,
  last: 10,
  high: 11,
  low: 9,
  quoteVolume: 1_000_000,
  tickSize: 0.01,
  ...figures,
});

const MARKET = [
  pair('AAAUSDT', { quoteVolume: 5_000_000 }),
  pair('BBBUSDT', { quoteVolume: 3_000_000 }),
  pair('CCCUSDT', { quoteVolume: 3_000_000 }),
  pair('DDDUSDT', { quoteVolume: 50_000 }),
  pair('EEEUSDT', { last: 0.0004, tickSize: 0.0001, high: 0.0005, low: 0.0003 }),
  pair('FFFUSDT', { last: 90_000, high: 91_000, low: 89_000 }),
  pair('GGGUSDT', { high: 20, low: 5 }),
  pair('HHHUSDT', { last: undefined }),
  pair('III', { quoteAsset: 'USDT' }),
  pair('AAABTC', { quoteAsset: 'BTC' }),
  pair('BBBBTC', {}),
];

describe('resolvePairList', () => {
  it('filters, ranks and cuts, and says why each other pair of its quote was left out', () => {
    const list = PairListSchema.parse({
      quote: 'USDT',
      minQuoteVolume: 100_000,
      minPrice: 0.001,
      maxPrice: 50_000,
      maxSpreadPct: 0.5,
      maxVolatilityPct: 100,
      exclude: ['GGGUSDT'],
      top: 2,
    });
    const result = resolvePairList(list, MARKET);
    expect(result.listed).toEqual([
      { symbol: 'AAAUSDT', rank: 1, value: 5_000_000 },
      { symbol: 'BBBUSDT', rank: 2, value: 3_000_000 },
    ]);
    expect(result.left).toEqual([
      { symbol: 'CCCUSDT', reason: 'ranked 3 by 24-hour quote volume, outside top 2' },
      { symbol: 'DDDUSDT', reason: '24-hour quote volume 50000 USDT below minQuoteVolume 100000' },
      { symbol: 'EEEUSDT', reason: 'price 0.0004 below minPrice 0.001' },
      { symbol: 'FFFUSDT', reason: 'price 90000 above maxPrice 50000' },
      { symbol: 'GGGUSDT', reason: 'excluded' },
      { symbol: 'HHHUSDT', reason: 'no ticker on the market watch' },
      { symbol: 'III', reason: 'ranked 4 by 24-hour quote volume, outside top 2' },
    ]);
    expect(result.otherQuote).toBe(2);
  });

  it('bounds the spread a tick forces and the 24-hour range, and ranks by range or by change', () => {
    const spread = resolvePairList(PairListSchema.parse({ quote: 'USDT', maxSpreadPct: 0.05 }), [
      pair('AAAUSDT', { tickSize: 0.01, last: 10 }),
    ]);
    expect(spread.left).toEqual([
      { symbol: 'AAAUSDT', reason: 'tick 0.01 is 0.1% of the price, above maxSpreadPct 0.05%' },
    ]);
    const range = resolvePairList(PairListSchema.parse({ quote: 'USDT', sortBy: 'volatility', minVolatilityPct: 15 }), [
      pair('AAAUSDT', { high: 11, low: 9 }),
      pair('BBBUSDT', { high: 13, low: 9 }),
      pair('CCCUSDT', { high: 10.5, low: 9.5 }),
    ]);
    expect(range.listed.map((p) => [p.symbol, p.value])).toEqual([
      ['BBBUSDT', 40],
      ['AAAUSDT', 20],
    ]);
    expect(range.left).toEqual([{ symbol: 'CCCUSDT', reason: '24-hour range 10% below minVolatilityPct 15%' }]);
    const change = resolvePairList(PairListSchema.parse({ quote: 'USDT', sortBy: 'change', top: 1 }), [
      pair('AAAUSDT', { changePct: 3 }),
      pair('BBBUSDT', { changePct: -7 }),
      pair('CCCUSDT', {}),
    ]);
    expect(change.listed).toEqual([{ symbol: 'BBBUSDT', rank: 1, value: 7 }]);
    expect(change.left).toEqual([
      { symbol: 'AAAUSDT', reason: 'ranked 2 by 24-hour change, outside top 1' },
      { symbol: 'CCCUSDT', reason: '24-hour change not known yet' },
    ]);
  });
});

describe('a pair list on an exchange now', () => {
  let server: SimServer | undefined;
  afterAll(() => server?.close());

  it("reads each pair's figures and rules from the market watch and the pair configs", async () => {
    const engine = new MatchingEngine();
    const t = Date.parse('2024-01-01T00:00:00Z');
    engine.onTicker({ s: 'BTCUSDT', p: 40_000, t, h: 41_000, l: 39_000, vq: 9e8 });
    engine.onTicker({ s: 'ETHUSDT', p: 2_000, t, h: 2_100, l: 1_950, vq: 4e8 });
    server = await startSimServer({ engine });
    const figures = await figuresOnMarket(server.url);
    const list = PairListSchema.parse({ quote: 'USDT', top: 1 });
    expect(figures.filter((f) => f.quoteAsset === 'USDT').map((f) => [f.symbol, f.quoteVolume, f.tickSize])).toEqual([
      ['BTCUSDT', 9e8, 0.01],
      ['ETHUSDT', 4e8, 0.01],
    ]);
    expect(resolvePairList(list, figures).listed.map((p) => p.symbol)).toEqual(['BTCUSDT']);
  });
});
