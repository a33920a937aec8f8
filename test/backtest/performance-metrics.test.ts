/** The metrics on hand-made equity curves and fills, each expected value worked out by hand. */
import { describe, expect, it } from 'vitest';
import { EquityTracker } from '../../src/backtest/equity-tracker.js';
import fc from 'fast-check';
import {
  exposure,
  periodKey,
  periodReturns,
  periodSpan,
  type ReturnPeriod,
  riskRatios,
} from '../../src/backtest/performance-metrics.js';
import type { TradeFill } from '../../src/market/round-trips.js';
import { D, type Dec } from '../../src/market/decimal.js';

const HOUR = 3_600_000;
const d = (x: string | number): Dec => new D(x);

/** A fill without fees: `value` is its quote amount. */
function fill(book: string, side: 'BUY' | 'SELL', quantity: string, value: string, time: number): TradeFill {
  return { book, side, quantity: d(quantity), price: d(value).div(quantity), fee: d(0), feeIn: 'quote', time };
}

describe('max drawdown', () => {
  it('is the deepest fall from a previous peak, exact at both ends', () => {
    // One unit of base, no quote: equity = price. Peaks 120 then 130; falls to 90 (-25 %) and 117 (-10 %).
    const tracker = new EquityTracker(1);
    tracker.setBalances(d(0), [d(1)]);
    const prices = [100, 120, 90, 110, 130, 117, 125];
    prices.forEach((p, i) => {
      tracker.prices[0] = p;
      tracker.update(i);
    });
    const dd = tracker.drawdown()!;
    expect(dd.peak).toEqual({ time: 1, equity: d(120) });
    expect(dd.trough).toEqual({ time: 2, equity: d(90) });
  });

  it('follows balance changes, and is undefined when equity never falls', () => {
    const tracker = new EquityTracker(1);
    tracker.setBalances(d(100), [d(0)]);
    tracker.prices[0] = 50;
    tracker.update(0);
    tracker.setBalances(d(50), [d('1.01')]); // bought 1.01 for 50: worth 50.5
    tracker.update(1);
    expect(tracker.drawdown()).toBeUndefined();
    tracker.prices[0] = 40; // 50 + 1.01 x 40 = 90.4
    tracker.update(2);
    expect(tracker.drawdown()!.trough.equity.toFixed()).toBe('90.4');
    expect(tracker.drawdown()!.peak.equity.toFixed()).toBe('100.5');
  });
});

describe('Sharpe and Sortino', () => {
  it('annualise the mean over the deviations of hourly returns', () => {
    // Returns +10 %, -10 %, +10 %: mean 1/30; sample sd sqrt(((2/30)^2 x 2 + (4/30)^2) / 2) = sqrt(12)/30;
    // downside sqrt(0.01 / 3). Annualised by sqrt(8760).
    const ratios = riskRatios([d(100), d(110), d(99), d('108.9')], HOUR);
    const annual = Math.sqrt(8760);
    expect(ratios.sharpe).toBeCloseTo((1 / 30 / (Math.sqrt(12) / 30)) * annual, 9);
    expect(ratios.sortino).toBeCloseTo((1 / 30 / Math.sqrt(0.01 / 3)) * annual, 9);
  });

  it('are undefined without deviation or without enough returns', () => {
    expect(riskRatios([d(100), d(101), d('102.01')], HOUR)).toEqual({ sharpe: undefined, sortino: undefined });
    expect(riskRatios([d(100), d(101)], HOUR)).toEqual({ sharpe: undefined, sortino: undefined });
  });
});

describe('exposure', () => {
  it('is the share of time with a non-zero net position in any book', () => {
    // Long from 10 to 30, book b from 25 to 40 and again from 90 to the end (100): 30 + 10 of 100.
    const fills = [
      fill('a', 'BUY', '1', '100', 10),
      fill('b', 'BUY', '2', '200', 25),
      fill('a', 'SELL', '1', '100', 30),
      fill('b', 'SELL', '2', '200', 40),
      fill('b', 'BUY', '1', '100', 90),
    ];
    expect(exposure(fills, 0, 100)).toBeCloseTo(0.4, 12);
    expect(exposure([], 0, 100)).toBe(0);
  });

  it('does not count fee dust below the quantity step as a position', () => {
    // Bought 1 net of a base fee (0.999), sold the 0.999 the step allows, 0.0005 left for ever: flat at 30.
    const step = new D('0.001');
    const fills = [
      { ...fill('a', 'BUY', '0.9995', '100', 10), step },
      { ...fill('a', 'SELL', '0.999', '101', 30), step },
    ];
    expect(exposure(fills, 0, 100)).toBeCloseTo(0.2, 12);
    expect(
      exposure(
        fills.map(({ step: _, ...f }) => f),
        0,
        100,
      ),
    ).toBeCloseTo(0.9, 12);
  });
});

describe('period returns', () => {
  const PERIODS: ReturnPeriod[] = ['day', 'week', 'month'];
  // 1969 to 2101: leap years, a century, the epoch and times before it.
  const time = fc.integer({ min: -86_400_000 * 400, max: Date.UTC(2101, 0, 1) });
  // Around midnights (every week's and month's start among them): a millisecond either side, or on it.
  const edge = fc
    .tuple(fc.integer({ min: 19_000, max: 19_070 }), fc.constantFrom(-1, 0, 1, 43_200_000))
    .map(([day, offset]) => day * 86_400_000 + offset);

  it("spans each time's period exactly as its key names it", () => {
    fc.assert(
      fc.property(fc.oneof(time, edge), fc.constantFrom(...PERIODS), (ms, period) => {
        const [from, to] = periodSpan(ms, period);
        const key = periodKey(ms, period);
        expect([from <= ms, ms < to]).toEqual([true, true]);
        expect([periodKey(from, period), periodKey(to - 1, period)]).toEqual([key, key]);
        expect([periodKey(from - 1, period), periodKey(to, period)]).not.toContain(key);
      }),
      { numRuns: 500 },
    );
  });

  it('keys every sample as periodKey does, in or out of time order', () => {
    fc.assert(
      fc.property(
        fc.array(time, { maxLength: 60 }),
        fc.boolean(),
        fc.constantFrom(...PERIODS),
        (times, sort, period) => {
          if (sort) times.sort((a, b) => a - b);
          const samples = times.map((t, i) => ({ time: t, equity: new D(100 + i) }));
          // The definition: a period closes where the next sample's key differs.
          const naive: { period: string; ret: string | undefined }[] = [];
          let base = samples[0]?.equity;
          for (let i = 0; i < samples.length; i++) {
            const s = samples[i]!;
            const next = samples[i + 1];
            if (next !== undefined && periodKey(next.time, period) === periodKey(s.time, period)) continue;
            naive.push({ period: periodKey(s.time, period), ret: s.equity.minus(base!).div(base!).toFixed() });
            base = s.equity;
          }
          expect(periodReturns(samples, period).map((r) => ({ period: r.period, ret: r.ret?.toFixed() }))).toEqual(
            naive,
          );
        },
      ),
    );
  });
});
