/**
 * What a strategy's informative pairs ask of the engine (issue 41): the candles kept of each pair (its declared count,
 * at least its indicators' warm-up), the symbols a run needs data of, the longer warm-up, and each wrong declaration
 * named.
 */
import { describe, expect, it } from 'vitest';
import { candleNeedsProblems, informativeNeeds, warmUpMs, watchedSymbols } from '../../src/strategy/candle-needs.js';
import { defineStrategy, ema, informative, z } from '../../src/strategy/api.js';

const reader = defineStrategy({
  name: 'reader',
  params: z.object({}),
  informative: [
    { symbol: 'BTCUSDT', timeframe: '1h', count: 5 },
    { symbol: 'ETHUSDT', timeframe: '15m' },
  ],
  indicators: () => ({ trend: informative('BTCUSDT', ema('1h', 3)), own: ema('5m', 3) }),
  onTick() {},
});

describe('informative pairs', () => {
  it('keeps each pair its count (default 100) and at least its indicators’ warm-up, and widens the warm-up', () => {
    const warm = ema('1h', 3).warmUp;
    expect(informativeNeeds(reader, {})).toEqual(
      new Map([
        ['BTCUSDT', { '1h': Math.max(5, warm) }],
        ['ETHUSDT', { '15m': 100 }],
      ]),
    );
    const spec = { config: { symbol: 'ADAUSDT' }, definition: reader, params: {} };
    expect(watchedSymbols([spec])).toEqual(['ADAUSDT', 'BTCUSDT', 'ETHUSDT']);
    // The longest lookback: ETHUSDT's 100 quarter-hours (and the forming one), then a day for the volume.
    expect(warmUpMs([spec])).toBe(101 * 900_000 + 86_400_000);
    expect(candleNeedsProblems(reader, {})).toEqual([]);
  });

  it('names each wrong declaration, and an indicator on a pair not declared', () => {
    const wrong = defineStrategy({
      name: 'wrong',
      params: z.object({}),
      informative: [{ symbol: 'btc', timeframe: '2h' as '1h', count: 0 }],
      indicators: () => ({ trend: informative('ETHUSDT', ema('1h', 3)) }),
      onTick() {},
    });
    expect(candleNeedsProblems(wrong, {})).toEqual([
      'informative[0].symbol: expected an exchange symbol such as "BTCUSDT", found "btc"',
      expect.stringMatching(/^informative\[0\]\.timeframe: expected a timeframe of .*, found "2h"$/),
      'informative[0].count: expected a whole number from 1 to 100000, found 0',
      'indicators.trend: reads "ETHUSDT", expected a pair the definition\'s informative lists',
    ]);
  });
});
