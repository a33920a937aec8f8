/**
 * The chart's data (strategy/indicator-chart.ts): candles on one slot per bucket, a hole in the data an empty slot
 * (the axis stays linear in time), and the declared indicators recomputed where the strategy could first read
 * them, equal to what the strategy's own indicator set reads at that moment.
 */
import { describe, expect, it } from 'vitest';
import { CandleBuilder } from '../../src/market/candles.js';
import { chartData } from '../../src/strategy/indicator-chart.js';
import { bollinger, ema, IndicatorSet, rsi, sma } from '../../src/strategy/indicators.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2024, 0, 1);

/** Two hours and a half of minutes (4 ticks each), with minutes 60 to 74 missing (a hole of a quarter hour). */
function book(): { book: CandleBuilder; prices: Map<number, number> } {
  const b = new CandleBuilder({ '1m': 1000, '1h': 10 });
  const prices = new Map<number, number>();
  for (let m = 0; m < 150; m++) {
    if (m >= 60 && m < 75) continue;
    const close = 100 + 10 * Math.sin(m / 7);
    prices.set(m, close);
    for (const [k, p] of [close - 0.5, close + 1, close - 1, close].entries())
      b.tick(T0 + m * MINUTE + k * 15_000, p, NaN);
  }
  return { book: b, prices };
}

describe('a chart of candles and declared indicators', () => {
  it('lays the candles on one slot per minute, the hole left empty, the forming candle last', () => {
    const { book: b, prices } = book();
    const chart = chartData(b, '1m', [], 2000);
    expect(chart.start).toBe(T0);
    expect(chart.step).toBe(MINUTE);
    expect(chart.candles).toHaveLength(150);
    for (let m = 0; m < 150; m++) {
      const slot = chart.candles[m];
      if (m >= 60 && m < 75) expect(slot, `minute ${m}`).toBeNull();
      else expect(slot?.[3], `minute ${m}`).toBeCloseTo(prices.get(m)!, 6);
    }
    // The latest slots only, when they are more than asked for.
    const short = chartData(b, '1m', [], 40);
    expect(short.start).toBe(T0 + 110 * MINUTE);
    expect(short.candles).toHaveLength(40);
  });

  it("places each value where the strategy first read it: after its candle closed, equal to the strategy's own", () => {
    const { book: b } = book();
    const specs = { fast: ema('1m', 5), rsi: rsi('1m', 5), bands: bollinger('1m', 20), hourly: sma('1h', 2) };
    const chart = chartData(b, '1m', [{ instance: 'trend', specs }], 2000);
    const line = (name: string, key = 'value') =>
      chart.indicators.find((i) => i.name === name)!.lines.find((l) => l.key === key)!.values;
    expect(chart.indicators.map((i) => [i.name, i.pane])).toEqual([
      ['fast', 'price'],
      ['rsi', 'own'],
      ['bands', 'price'],
      ['hourly', 'price'],
    ]);
    expect(
      chart.indicators
        .find((i) => i.name === 'bands')!
        .lines.map((l) => l.key)
        .sort(),
    ).toEqual(['lower', 'middle', 'upper']);
    // The strategy's own set, fed as the engine feeds it: at a slot's open it has every candle closed before it.
    const own = new IndicatorSet(specs);
    const candlesBefore = (t: number) => ({
      closedCount: t,
      lastClosedTime: (tf: '1m' | '1h') =>
        b
          .candles(tf, 1000)
          .filter((c) => c.time + (tf === '1m' ? MINUTE : 60 * MINUTE) <= t)
          .at(-1)?.time ?? -Infinity,
      candlesSince: (tf: '1m' | '1h', since: number) =>
        b.candles(tf, 1000).filter((c) => c.time > since && c.time + (tf === '1m' ? MINUTE : 60 * MINUTE) <= t),
    });
    for (let m = 0; m < 150; m++) {
      const t = T0 + m * MINUTE;
      own.feed(candlesBefore(t));
      if (chart.candles[m] === null) {
        for (const name of ['fast', 'rsi', 'hourly']) expect(line(name)[m], `${name} at ${m}`).toBeNull();
        continue;
      }
      const fast = own.views.fast!.value as number | undefined;
      const hourly = own.views.hourly!.value as number | undefined;
      if (fast === undefined) expect(line('fast')[m]).toBeNull();
      else expect(line('fast')[m], `fast at ${m}`).toBeCloseTo(fast, 6);
      if (hourly === undefined) expect(line('hourly')[m], `hourly at ${m}`).toBeNull();
      else expect(line('hourly')[m], `hourly at ${m}`).toBeCloseTo(hourly, 6);
    }
    // The hourly SMA of 2 is ready at 02:00, once its second hour closed, and holds until the next.
    expect(
      line('hourly')
        .slice(0, 120)
        .every((v) => v === null),
    ).toBe(true);
    expect(new Set(line('hourly').slice(120)).size).toBe(1);
  });
});
