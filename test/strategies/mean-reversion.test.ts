import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../src/market/decimal.js';
import type { Intent } from '../../src/strategy/api.js';
import meanReversion from '../../strategies/mean-reversion.js';
import { Harness, type HarnessOptions } from '../../src/testing/strategy-harness.js';

type MrState = Parameters<typeof meanReversion.onTick>[0]['state'];

const ENTRY = 'mr:entry';
const EXIT = 'mr:exit';
const MINUTE = 60_000;
/** Five samples, one a minute. */
const PARAMS = {
  windowMinutes: 5,
  sampleSeconds: 60,
  bandPct: '1',
  repricePct: '0.2',
  stopLossPct: '1.5',
  stopLimitPct: '0.2',
  cooldownMinutes: 10,
  quantity: '0.002',
};
/** Averages 23000: the band is 22770. */
const WARM = ['23000', '23100', '22900', '23050', '22950'];
const ENTRY_22770 = 'LIMIT BUY 22770 qty 0.002 mr:entry';
/** Entry 22770: take profit at the average 23000; 22770 × 0.985 = 22428.45; × 0.998 = 22383.5931 → 22383.6. */
const BRACKET_22770 = 'OCO SELL tp 23000 stop 22428.45 limit 22383.6 qty 0.002 mr:exit';

function harness(options: Partial<HarnessOptions<MrState>> = {}): Harness<MrState> {
  return new Harness(meanReversion, { params: PARAMS, ...options });
}

function summary(intents: readonly Intent[]): string[] {
  return intents.map((i) => {
    if (i.kind === 'CANCEL') return `CANCEL ${i.localId}`;
    if (i.kind === 'OCO')
      return `OCO ${i.side} tp ${i.price.toFixed()} stop ${i.stopPrice.toFixed()} limit ${i.limitPrice.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
    if (i.kind === 'LIMIT') return `LIMIT ${i.side} ${i.price.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
    return i.kind;
  });
}

/** Ten seconds later (no new sample) the price dips through the entry, which fills at its price. */
const dip = (h: Harness<MrState>, price = '22760') => h.walk([price], 10_000);

async function warm(h: Harness<MrState>): Promise<void> {
  expect(await h.walk(WARM.slice(0, 4), MINUTE)).toEqual([]);
  expect(summary(await h.walk(WARM.slice(4), MINUTE))).toEqual([ENTRY_22770]);
}

describe('mean reversion: the average and the entry', () => {
  it('fills its ring first, then places a LIMIT BUY bandPct below the average', async () => {
    const h = harness();
    await warm(h);
    // The average is read from the engine's candles: nothing of it in the state.
    expect(h.state).toEqual({});
    expect(h.rejected).toEqual([]);
  });

  it('asks for its entry at debug, not info: the engine may refuse it, and it asks again every tick', async () => {
    const h = harness();
    await warm(h);
    expect(h.logs.filter((l) => l.level === 'info' && /entry/.test(l.msg))).toEqual([]);
    expect(h.logs).toContainEqual({ level: 'debug', msg: 'entry asked for at the band below the average' });
  });

  it('averages the first price of each of the last windowMinutes / sampleSeconds periods on the clock', async () => {
    // repricePct 0.001: the entry follows every move of the band, so its price tells the average.
    const h = harness({ params: { ...PARAMS, repricePct: '0.001' } });
    // Every 10 s for half an hour, each minute opening one above the last: 30 samples, the last 5 averaged.
    const prices = Array.from({ length: 180 }, (_, i) => String(23000 + Math.floor(i / 6)));
    await h.walk(prices, 10_000);
    // 00:30:00 opened a period: the band moved, the entry is cancelled; the next tick places it at the band of
    // the opens of 00:26 to 00:30, 23025 to 23029: 23027 × 0.99 = 22796.73.
    expect(summary(await h.walk(['23029'], 10_000))).toEqual(['LIMIT BUY 22796.73 qty 0.002 mr:entry']);
  });

  it('is idempotent over ticks and restarts', async () => {
    const h = harness();
    await warm(h);
    expect(await h.walk(['23010', '22990', '23000'], MINUTE)).toEqual([]);
    const again = h.restart();
    expect(await again.walk(['23000', '23000'], MINUTE)).toEqual([]);
    expect(again.orders.map((o) => o.tag)).toEqual([ENTRY]);
  });

  it('averages afresh after a gap longer than the window, instead of trusting stale prices', async () => {
    const h = harness();
    await warm(h);
    // Half an hour later at 23500: the band would have moved 2 %, but no average is trusted yet.
    expect(await h.tick('23500', 30 * MINUTE)).toEqual([]);
    expect(await h.walk(['23500', '23500', '23500'], MINUTE)).toEqual([]);
    // The fifth sample since the gap: the band is 23265, far from the entry at 22770.
    expect(summary(await h.walk(['23500'], MINUTE))).toEqual(['CANCEL L1']);
  });
});

describe('mean reversion: a moving band', () => {
  // Two samples of 23200 move the average to 23060, the band to 22829.4: 0.26 % from 22770.
  const rise = ['23200', '23200'];

  it('with cancel: cancels the entry once the band moved more than repricePct, then re-places it', async () => {
    const h = harness();
    await warm(h);
    expect(summary(await h.walk(rise, MINUTE))).toEqual(['CANCEL L1']);
    // Average 23120 at the next sample: 23120 × 0.99 = 22888.8.
    expect(summary(await h.walk(['23200'], MINUTE))).toEqual(['LIMIT BUY 22888.8 qty 0.002 mr:entry']);
  });

  it('without cancel: places once and waits, and says so at start', async () => {
    const h = harness({ canCancel: false });
    await h.start();
    expect(h.logs.map((l) => l.msg).join('\n')).toContain('placed once and waits');
    await warm(h);
    expect(await h.walk([...rise, '23300', '23400', '23500'], MINUTE)).toEqual([]);
    expect(h.rejected).toEqual([]);
  });
});

describe('mean reversion: the bracket', () => {
  it('brackets the fill: take profit at the average, stop loss below the entry', async () => {
    const h = harness();
    await warm(h);
    expect(summary(await dip(h))).toEqual([BRACKET_22770]);
    expect(h.rejected).toEqual([]);
  });

  it('takes profit at takeProfitPct when given, and at least bandPct above the entry otherwise', async () => {
    const fixed = harness({ params: { ...PARAMS, takeProfitPct: '0.5' } });
    await warm(fixed);
    // 22770 × 1.005 = 22883.85.
    expect(summary(await dip(fixed))).toEqual(['OCO SELL tp 22883.85 stop 22428.45 limit 22383.6 qty 0.002 mr:exit']);

    // Without cancel the entry stays while the average sinks to 22830: 22770 × 1.01 = 22997.7 is the least.
    const sinking = harness({ canCancel: false });
    await warm(sinking);
    expect(await sinking.walk(['22800', '22800', '22800', '22800'], MINUTE)).toEqual([]);
    expect(summary(await dip(sinking))).toEqual(['OCO SELL tp 22997.7 stop 22428.45 limit 22383.6 qty 0.002 mr:exit']);
  });

  it('brackets only what filled: a partial fill at once, the rest when it fills', async () => {
    const h = harness();
    await warm(h);
    const entry = h.order(ENTRY);
    expect(summary(await h.fill(entry, { quantity: '0.0005' }))).toEqual([BRACKET_22770.replace('0.002', '0.0005')]);
    expect(await h.tick('22800', 10_000)).toEqual([]);
    expect(summary(await h.fill(entry))).toEqual([BRACKET_22770.replace('0.002', '0.0015')]);
    expect(await h.tick('22800', 10_000)).toEqual([]);
  });

  it('cools down after a stop loss, not after a take profit', async () => {
    const h = harness();
    await warm(h);
    await dip(h);
    // The stop triggers at 22420 and fills there, within its limit.
    await h.walk(['22420'], MINUTE);
    expect(h.position.quantity.isZero()).toBe(true);
    expect(h.logs.some((l) => l.msg.startsWith('cooling down'))).toBe(true);
    expect(
      await h.walk(['22500', '22600', '22700', '22800', '22900', '23000', '23000', '23000', '23000'], MINUTE),
    ).toEqual([]);
    expect(summary(await h.walk(['23000'], MINUTE))).toEqual([expect.stringMatching(/^LIMIT BUY .* mr:entry$/)]);

    const lucky = harness();
    await warm(lucky);
    await dip(lucky);
    await lucky.walk(['23000'], MINUTE);
    expect(lucky.position.realisedPnl.toFixed()).toBe('0.46');
    expect(summary(await lucky.walk(['23000'], MINUTE))).toEqual([expect.stringMatching(/^LIMIT BUY .* mr:entry$/)]);
  });
});

describe('mean reversion: any price path', () => {
  it('brackets on the right sides of the market, one position at a time, every base covered', () => {
    const path = fc.array(fc.integer({ min: -200, max: 200 }), { minLength: 10, maxLength: 80 });
    return fc.assert(
      fc.asyncProperty(path, fc.boolean(), async (moves, canCancel) => {
        const h = harness({ canCancel });
        let price = dec(23000);
        for (const m of moves) {
          price = price.plus(m);
          for (const i of [...(await h.tick(price, MINUTE)), ...(await h.fillCrossed())]) {
            if (i.kind === 'OCO') expect(i.price.gt(price) && i.stopPrice.lt(price)).toBe(true);
            if (i.kind === 'CANCEL') expect(canCancel).toBe(true);
          }
          expect(h.orders.filter((o) => o.tag === ENTRY).length).toBeLessThanOrEqual(1);
          expect(h.position.quantity.lte('0.002')).toBe(true);
          const exits = h.orders.filter((o) => o.tag === EXIT);
          expect(
            exits.reduce((s, o) => s.plus(o.quantity.minus(o.filledQuantity)), dec(0)).eq(h.position.quantity),
          ).toBe(true);
        }
        expect(h.rejected).toEqual([]);
      }),
      { numRuns: 80 },
    );
  });
});

describe('mean reversion: params', () => {
  const messages = (p: object) => meanReversion.params.safeParse(p).error?.issues.map((i) => i.message);

  it('accepts the defaults with a size', () => {
    expect(meanReversion.params.safeParse({ quoteAmount: '50' }).success).toBe(true);
  });

  it('names what is wrong', () => {
    expect(messages({})).toEqual(['expected exactly one of quoteAmount and quantity, found neither']);
    expect(messages({ quantity: 1, bandPct: 100 })).toEqual(['expected below 100, found 100']);
    expect(messages({ quantity: 1, windowMinutes: 1, sampleSeconds: 60 })).toEqual([
      'expected windowMinutes × 60 / sampleSeconds between 2 and 1440 samples, found 1',
    ]);
    expect(messages({ quantity: 1, sampleSeconds: 90 })).toEqual([
      'expected whole minutes (60, 120 … 3600: the average reads one-minute candles), found 90',
    ]);
    expect(messages({ quantity: 0 })).toEqual(['expected a positive decimal, found 0']);
  });
});
