/**
 * Candles and indicators through the real engine: built from the ticks it observes, read by onTick, fed to the
 * indicators once per closed candle, and (persistCandles) saved in the store so a restart has them at once.
 */
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../src/market/candles.js';
import { defineStrategy, sma, type StrategyContext, z } from '../../src/strategy/api.js';
import { Harness, instance } from './harness.js';

const MINUTE = 60_000;
const START = Date.UTC(2023, 2, 1);

interface Seen {
  candles: readonly Candle[];
  sma: number | undefined;
  inputs: number;
}

function probe(seen: Seen[]) {
  const record = (ctx: StrategyContext) => {
    const view = ctx.indicators.avg!;
    seen.push({ candles: ctx.candles('1m', 10), sma: view.value as number | undefined, inputs: view.inputs });
  };
  return defineStrategy({
    name: 'probe',
    params: z.object({}),
    candles: { '1m': 5 },
    indicators: () => ({ avg: sma('1m', 3) }),
    onStart: record,
    onTick: record,
  });
}

let h: Harness | undefined;
describe('candles in the engine', () => {
  it('hands onTick the closed candles of the ticks it observed, at most the declared count, and feeds the indicators', async () => {
    h = new Harness();
    const seen: Seen[] = [];
    h.clock.time = START;
    h.price(100);
    await h.start([instance('p', probe(seen))]);
    // Two ticks a minute for eight minutes: 100, 101 in minute 0; 102, 103 in minute 1…
    for (let m = 0; m < 8; m++) {
      await h.tick(100 + 2 * m, m === 0 ? 1 : MINUTE / 2);
      await h.tick(101 + 2 * m, MINUTE / 2);
    }
    const last = seen.at(-1)!;
    // Minute 7 is forming; 5 of the 7 closed ones are kept.
    expect(last.candles.map((c) => [c.open, c.high, c.low, c.close])).toEqual(
      [2, 3, 4, 5, 6].map((m) => [100 + 2 * m, 101 + 2 * m, 100 + 2 * m, 101 + 2 * m]),
    );
    expect(last.candles[0]!.time).toBe(START + 2 * MINUTE);
    expect(last.inputs).toBe(7);
    expect(last.sma).toBeCloseTo((109 + 111 + 113) / 3, 10);
  });

  it('with persistCandles, a restarted engine has the candles and a ready indicator at onStart', async () => {
    h = new Harness();
    const seen: Seen[] = [];
    h.clock.time = START;
    h.price(100);
    await h.start([instance('p', probe(seen))], { persistCandles: true });
    for (let m = 0; m < 6; m++) await h.tick(100 + m, MINUTE);
    const before = seen.at(-1)!;
    const after: Seen[] = [];
    await h.restart([instance('p', probe(after))], { persistCandles: true });
    expect(after[0]!.candles).toEqual(before.candles);
    expect(after[0]!.sma).toBe(before.sma);
    expect(after[0]!.sma).toBeDefined();
    // And without it, a restart starts from nothing.
    const cold: Seen[] = [];
    await h.restart([instance('p', probe(cold))]);
    expect(cold[0]!.candles).toEqual([]);
    expect(cold[0]!.sma).toBeUndefined();
  });
});
