import { ATR, EMA, RSI } from 'trading-signals';
import { describe, expect, it } from 'vitest';
import { ema, type Intent, rsi } from '../../src/strategy/api.js';
import emaTrend from '../../strategies/ema-trend.js';
import { Harness } from '../../src/testing/strategy-harness.js';

const MINUTE = 60_000;
/** One tick a minute on '1m' candles: each tick closes the candle of the tick before. */
const PARAMS = {
  timeframe: '1m',
  fast: 3,
  slow: 6,
  rsiPeriod: 4,
  rsiMax: 90,
  atrPeriod: 3,
  atrStop: 2,
  quantity: '0.01',
};

type TrendState = Parameters<typeof emaTrend.onTick>[0]['state'];

function harness(params: Record<string, unknown> = {}): Harness<TrendState> {
  return new Harness(emaTrend, { params: { ...PARAMS, ...params }, quote: 100_000 });
}

const tags = (intents: readonly Intent[]) =>
  intents.map((i) => (i.kind === 'CANCEL' ? 'CANCEL' : `${i.kind} ${i.side} ${i.tag}`));

/** Candles the indicators need before they are ready (converged): the longest, RSI(4)'s. */
const WARM_UP = Math.max(ema('1m', 3).warmUp, ema('1m', 6).warmUp, rsi('1m', 4).warmUp);

/**
 * A gentle fall long enough for the indicators to converge, a slide, then a climb: the fast EMA crosses
 * above the slow one on the way up.
 */
const SLIDE_THEN_CLIMB = [
  ...Array.from({ length: WARM_UP }, (_, i) => 20_000 + (WARM_UP - i)),
  ...Array.from({ length: 12 }, (_, i) => 20_000 - i * 10),
  ...Array.from({ length: 12 }, (_, i) => 19_900 + i * 25),
];

/**
 * Index of the tick at which the strategy should buy: the candle closed by it shows the cross (library maths),
 * each indicator read once it has had its converged warm-up of candles.
 */
function expectedCross(prices: readonly number[], fastN: number, slowN: number, rsiN: number, rsiMax: number): number {
  const fast = new EMA(fastN);
  const slow = new EMA(slowN);
  const strength = new RSI(rsiN);
  const warm = (n: number) => (k: number) => k + 1 >= n;
  const [fastReady, slowReady, rsiReady] = [
    warm(ema('1m', fastN).warmUp),
    warm(ema('1m', slowN).warmUp),
    warm(rsi('1m', rsiN).warmUp),
  ];
  let before: { f: number; s: number } | undefined;
  // Candle k (one tick each) closes at tick k + 1.
  for (let k = 0; k < prices.length - 1; k++) {
    const f = fast.add(prices[k] as number);
    const s = slow.add(prices[k] as number);
    const r = strength.add(prices[k] as number);
    const ready = fastReady(k) && slowReady(k) && f !== null && s !== null;
    if (ready && before !== undefined && before.f <= before.s && f > s && rsiReady(k) && r !== null && r < rsiMax)
      return k + 1;
    before = ready ? { f, s } : undefined;
  }
  return -1;
}

describe('ema-trend', () => {
  it('buys on the candle that closes with the fast EMA crossing above the slow one, not before', async () => {
    const h = harness();
    const at = expectedCross(SLIDE_THEN_CLIMB, 3, 6, 4, 90);
    expect(at).toBeGreaterThan(WARM_UP + 12);
    for (let i = 0; i < SLIDE_THEN_CLIMB.length; i++) {
      const placed = await h.walk([SLIDE_THEN_CLIMB[i] as number], MINUTE);
      expect(tags(placed), `tick ${i}`).toEqual(i === at ? ['MARKET BUY ema:entry'] : []);
    }
    expect(h.position.quantity.toFixed()).toBe('0.01');
  });

  it('does not buy into a climb already under way when its indicators become ready (no cross seen)', async () => {
    const h = harness();
    // Up 20, down 8, up 20…: a climb with an RSI near 70, under rsiMax.
    const climb = Array.from(
      { length: WARM_UP + 20 },
      (_, i) => 20_000 + Math.ceil(i / 2) * 20 - Math.floor(i / 2) * 8,
    );
    expect(tags(await h.walk(climb, MINUTE))).toEqual([]);
  });

  it('does not buy a cross when the RSI is at or above rsiMax', async () => {
    const h = harness({ rsiMax: 50 });
    expect(tags(await h.walk(SLIDE_THEN_CLIMB, MINUTE))).toEqual([]);
  });

  it('sets the stop atrStop ATRs under the fill, and sells once when a tick reaches it', async () => {
    const h = harness();
    await h.walk(SLIDE_THEN_CLIMB, MINUTE);
    const stop = h.state.stop!;
    expect(stop).toBeLessThan(SLIDE_THEN_CLIMB.at(-1)!);
    // Within the same candle (ticks 10 s apart): no candle closes, only the stop is watched.
    expect(tags(await h.walk([stop + 1], 10_000))).toEqual([]);
    expect(tags(await h.walk([stop - 1], 10_000))).toEqual(['MARKET SELL ema:stop']);
    expect(h.position.quantity.toFixed()).toBe('0');
    expect(h.state.stop).toBeUndefined();
    expect(tags(await h.walk([stop - 2, stop - 3], 10_000))).toEqual([]);
  });

  it('trails the stop up by the ATR of each closed candle, never down', async () => {
    const h = harness();
    await h.walk(SLIDE_THEN_CLIMB, MINUTE);
    const atEntry = h.state.stop!;
    // The library's ATR(3) of the candles so far, each one tick (high = low = close).
    const range = new ATR(3);
    const climb = [20_200, 20_300, 20_400];
    const closes = [...SLIDE_THEN_CLIMB, ...climb];
    await h.walk(climb, MINUTE);
    for (const c of closes.slice(0, -1)) range.add({ high: c, low: c, close: c });
    const trailed = closes.at(-2)! - 2 * range.getResultOrThrow();
    expect(h.state.stop).toBeCloseTo(Math.max(atEntry, trailed), 6);
    expect(h.state.stop).toBeGreaterThan(atEntry);
  });

  it('sells when a candle closes with the fast EMA under the slow one', async () => {
    const h = harness({ atrStop: 50 });
    await h.walk(SLIDE_THEN_CLIMB, MINUTE);
    const fade = Array.from({ length: 10 }, (_, i) => 20_150 - i * 5);
    const placed = await h.walk(fade, MINUTE);
    expect(tags(placed)).toEqual(['MARKET SELL ema:trend']);
  });

  it('is ready from the candles it finds at start (a restart does not wait for the lookback)', async () => {
    const h = harness();
    await h.walk(SLIDE_THEN_CLIMB.slice(0, 12), MINUTE);
    expect(h.candleBook.candles('1m', 100)).toHaveLength(11);
    expect(h.definition.candles).toBeTypeOf('function');
    // The declared lookback (four slow lengths of the timeframe, 24) or the indicators' converged warm-up,
    // whichever is longer: RSI(4)'s.
    expect(h.candleBook.needs).toEqual({ '1m': WARM_UP });
    expect(WARM_UP).toBeGreaterThan(24);
  });

  it('refuses a fast EMA not shorter than the slow one, naming the field', () => {
    const result = emaTrend.params.safeParse({ ...PARAMS, fast: 30, slow: 20 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(['fast']);
  });
});
