import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../src/market/decimal.js';
import type { Intent } from '../../src/strategy/api.js';
import breakout from '../../strategies/breakout.js';
import { Harness, type HarnessOptions } from '../../src/testing/strategy-harness.js';

type BreakoutState = Parameters<typeof breakout.onTick>[0]['state'];

const ENTRY = 'breakout:entry';
const EXIT = 'breakout:exit';
/** Ten minutes of lookback, watched at one tick per 30 s. */
const STEP = 30_000;
const PARAMS = {
  lookbackMinutes: 10,
  triggerPct: '0.1',
  slippagePct: '0.1',
  quantity: '0.002',
  takeProfitPct: '1.5',
  stopLossPct: '0.75',
  stopLimitPct: '0.2',
  repriceMinutes: 2,
};
/** The entry above a high of 23100: stop 23100 × 1.001, limit 23123.1 × 1.001 = 23146.2231 rounded down. */
const ENTRY_23100 = 'STOP_LIMIT BUY stop 23123.1 limit 23146.22 qty 0.002 breakout:entry';

/** The first tick on a minute: the lookback is watched from the open of that minute's candle. */
function harness(options: Partial<HarnessOptions<BreakoutState>> = {}): Harness<BreakoutState> {
  const h = new Harness(breakout, { params: PARAMS, ...options });
  h.time -= STEP;
  return h;
}

function summary(intents: readonly Intent[]): string[] {
  return intents.map((i) => {
    switch (i.kind) {
      case 'CANCEL':
        return `CANCEL ${i.localId}`;
      case 'STOP_LIMIT':
        return `STOP_LIMIT ${i.side} stop ${i.stopPrice.toFixed()} limit ${i.price.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
      case 'OCO':
        return `OCO ${i.side} tp ${i.price.toFixed()} stop ${i.stopPrice.toFixed()} limit ${i.limitPrice.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
      case 'LIMIT':
        return `LIMIT ${i.side} ${i.price.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
      default:
        return `MARKET ${i.side}`;
    }
  });
}

const flat = (n: number): string[] => Array<string>(n).fill('23000');

/** 23000 with a high of 23100 half a minute before a whole lookback has been watched (10 min, 21 ticks). */
async function warm(h: Harness<BreakoutState>): Promise<Intent[]> {
  const quiet = await h.walk([...flat(19), '23100'], STEP);
  expect(quiet).toEqual([]);
  return h.walk(['23000'], STEP);
}

describe('breakout: the entry', () => {
  it('watches a whole lookback first, then arms one STOP_LIMIT BUY above the recent high', async () => {
    const h = harness();
    expect(summary(await warm(h))).toEqual([ENTRY_23100]);
    expect(h.rejected).toEqual([]);
    // The window is read from the engine's candles: nothing of it in the state.
    await h.walk(flat(200), STEP);
    expect(h.state).toEqual({});
  });

  it('sizes the entry from quoteAmount at its limit price, rounded down to the step', async () => {
    const h = harness({ params: { ...PARAMS, quantity: undefined, quoteAmount: '50' } });
    // 50 / 23146.22 = 0.0021601…
    expect(summary(await warm(h))).toEqual([ENTRY_23100.replace('0.002 ', '0.00216 ')]);
  });

  it('places nothing more on further ticks, and nothing twice after a restart', async () => {
    const h = harness();
    await warm(h);
    expect(await h.walk(['23010', '23050', '23000'], STEP)).toEqual([]);
    const again = h.restart();
    expect(await again.walk(['23020', '23000'], STEP)).toEqual([]);
    expect(again.orders.map((o) => o.tag)).toEqual([ENTRY]);
  });

  it('does not place a stop that would trigger at once when rounding leaves it at the last price', async () => {
    const h = harness({ params: { ...PARAMS, triggerPct: '0.00001' } });
    // 23000 × 1.0000001 = 23000.23 rounded down: above. With a flat price at the high, 23000.0023 → 23000.
    await h.walk(flat(21), STEP);
    expect(h.placed).toEqual([]);
    expect(h.logs.some((l) => l.msg.includes('would trigger at once'))).toBe(true);
  });
});

describe('breakout: the bracket', () => {
  it('brackets the filled entry with an OCO SELL, take profit above and stop below the market', async () => {
    const h = harness();
    await warm(h);
    // The stop triggers at 23130 and fills there, within its limit.
    const placed = await h.walk(['23130'], STEP);
    expect(h.position.quantity.toFixed()).toBe('0.002');
    // 23130 × 1.015 = 23476.95; 23130 × 0.9925 = 22956.525 → 22956.53; × 0.998 = 22910.61694 → 22910.62.
    expect(summary(placed)).toEqual(['OCO SELL tp 23476.95 stop 22956.53 limit 22910.62 qty 0.002 breakout:exit']);
    expect(h.rejected).toEqual([]);
  });

  it('holds one position at a time, and arms a new entry once the exit has sold it', async () => {
    const h = harness();
    await warm(h);
    await h.walk(['23130'], STEP);
    // New highs while holding: no entry.
    expect(await h.walk(['23300', '23400', '23300'], STEP)).toEqual([]);
    await h.walk(['23477'], STEP);
    expect(h.position.quantity.isZero()).toBe(true);
    // Recent high 23477: stop 23500.477 → 23500.47, limit 23523.97047 → 23523.97.
    expect(summary(await h.walk(['23400'], STEP))).toEqual([
      'STOP_LIMIT BUY stop 23500.47 limit 23523.97 qty 0.002 breakout:entry',
    ]);
    // The take profit rests at 23476.95 and fills at its own price.
    expect(h.position.realisedPnl.toFixed()).toBe('0.6939');
  });

  it('brackets only what filled: a partial fill at once, the rest when it fills', async () => {
    const h = harness();
    await warm(h);
    const entry = h.order(ENTRY);
    expect(summary(await h.fill(entry, { quantity: '0.0008', price: '23130' }))).toEqual([
      'OCO SELL tp 23476.95 stop 22956.53 limit 22910.62 qty 0.0008 breakout:exit',
    ]);
    expect(await h.tick('23140', STEP)).toEqual([]);
    expect(summary(await h.fill(entry, { price: '23140' }))).toEqual([
      // Average entry 23136: × 1.015 = 23483.04, × 0.9925 = 22962.48, × 0.998 = 22916.55504 → 22916.56.
      'OCO SELL tp 23483.04 stop 22962.48 limit 22916.56 qty 0.0012 breakout:exit',
    ]);
    expect(await h.tick('23150', STEP)).toEqual([]);
  });

  it('brackets what it received after a fee paid in base', async () => {
    const h = harness();
    await warm(h);
    const placed = await h.fill(ENTRY, { price: '23130', fee: '0.000002', feeAsset: 'BTC' });
    // The average entry carries the fee: 46.26 / 0.001998 = 23153.153…
    expect(summary(placed)).toEqual(['OCO SELL tp 23500.46 stop 22979.51 limit 22933.56 qty 0.001998 breakout:exit']);
  });

  it('sells at once when the price is already past a leg at the fill', async () => {
    const gapUp = harness({ canCancel: false });
    await warm(gapUp);
    await gapUp.tick('23600', STEP);
    // 23146.22 × 1.015 = 23493.4133 → 23493.42, below the last price: a LIMIT SELL there fills at once.
    expect(summary(await gapUp.fill(ENTRY))).toEqual(['LIMIT SELL 23493.42 qty 0.002 breakout:exit']);

    const gapDown = harness({ canCancel: false });
    await warm(gapDown);
    await gapDown.tick('22000', STEP);
    expect(summary(await gapDown.fill(ENTRY))).toEqual(['LIMIT SELL 22000 qty 0.002 breakout:exit']);
    expect([...gapUp.rejected, ...gapDown.rejected]).toEqual([]);
  });
});

describe('breakout: a stale entry', () => {
  it('with cancel: cancels it once the high moved and repriceMinutes passed, then arms it anew', async () => {
    const h = harness();
    await warm(h);
    // A lower high of 23050 a minute later; the 23100 leaves the window 10 min after it was seen.
    expect(await h.walk(['23000', '23050', ...flat(17)], STEP)).toEqual([]);
    expect(summary(await h.walk(flat(1), STEP))).toEqual(['CANCEL L1']);
    // 23050 × 1.001 = 23073.05; × 1.001 = 23096.12305 → 23096.12.
    expect(summary(await h.walk(flat(1), STEP))).toEqual([
      'STOP_LIMIT BUY stop 23073.05 limit 23096.12 qty 0.002 breakout:entry',
    ]);
    // The 23050 leaves the window one minute later: the entry is stale but younger than repriceMinutes.
    expect(await h.walk(flat(3), STEP)).toEqual([]);
    expect(summary(await h.walk(flat(1), STEP))).toEqual(['CANCEL L2']);
    expect(summary(await h.walk(flat(1), STEP))).toEqual([
      'STOP_LIMIT BUY stop 23023 limit 23046.02 qty 0.002 breakout:entry',
    ]);
    expect(await h.walk(flat(30), STEP)).toEqual([]);
  });

  it('without cancel: leaves it to wait for its stop or the price to come back, and says so at start', async () => {
    const h = harness({ canCancel: false });
    await h.start();
    expect(h.logs.map((l) => l.msg).join('\n')).toContain('waits for its stop to trigger or the price to come back');
    await warm(h);
    expect(await h.walk(flat(40), STEP)).toEqual([]);
    expect(summary(h.placed)).toEqual([ENTRY_23100]);
    expect(h.rejected).toEqual([]);
  });

  it('never cancels an entry that has started to fill', async () => {
    const h = harness();
    await warm(h);
    await h.fill(ENTRY, { quantity: '0.001', price: '23130' });
    const placed = await h.walk(flat(40), STEP);
    expect(placed.some((i) => i.kind === 'CANCEL')).toBe(false);
  });
});

describe('breakout: any price path', () => {
  it('never places a BUY stop at or below the last price, brackets on the right sides, one position at a time', () => {
    const move = fc.integer({ min: -150, max: 150 });
    const path = fc.array(move, { minLength: 25, maxLength: 90 });
    return fc.assert(
      fc.asyncProperty(path, fc.boolean(), fc.integer({ min: 5, max: 90 }), async (moves, canCancel, seconds) => {
        const h = harness({ canCancel });
        let price = dec(23000);
        for (const m of moves) {
          price = price.plus(m);
          const placed = [...(await h.tick(price, seconds * 1000)), ...(await h.fillCrossed())];
          for (const i of placed) {
            if (i.kind === 'STOP_LIMIT') expect(i.stopPrice.gt(price)).toBe(true);
            if (i.kind === 'OCO') expect(i.price.gt(price) && i.stopPrice.lt(price)).toBe(true);
            if (i.kind === 'CANCEL') expect(canCancel).toBe(true);
          }
          expect(h.orders.filter((o) => o.tag === ENTRY).length).toBeLessThanOrEqual(1);
          expect(h.position.quantity.lte('0.002')).toBe(true);
          // Everything held is covered by exits, whenever nothing is still waiting to fill.
          const covered = h.orders
            .filter((o) => o.tag === EXIT)
            .reduce((s, o) => s.plus(o.quantity.minus(o.filledQuantity)), dec(0));
          expect(covered.eq(h.position.quantity)).toBe(true);
        }
        expect(h.rejected).toEqual([]);
      }),
      { numRuns: 80 },
    );
  });
});

describe('breakout: params', () => {
  const messages = (p: object) => breakout.params.safeParse(p).error?.issues.map((i) => i.message);

  it('accepts the shipped configuration and fills in defaults', () => {
    const parsed = breakout.params.parse({ quoteAmount: 50 });
    expect(parsed.lookbackMinutes).toBe(60);
    expect(parsed.takeProfitPct.toFixed()).toBe('1.5');
  });

  it('names what is wrong: size given twice or not at all, percentages out of range, non-positive decimals', () => {
    expect(messages({})).toEqual(['expected exactly one of quoteAmount and quantity, found neither']);
    expect(messages({ quoteAmount: 50, quantity: '0.001' })).toEqual([
      'expected exactly one of quoteAmount and quantity, found both',
    ]);
    expect(messages({ quantity: '0.001', stopLossPct: 100 })).toEqual(['expected below 100, found 100']);
    expect(messages({ quantity: '-1' })).toEqual(['expected a positive decimal, found "-1"']);
  });
});
