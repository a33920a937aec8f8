import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../src/market/decimal.js';
import { priceProblem, quantityProblem } from '../../src/market/pair-rules.js';
import type { Intent } from '../../src/strategy/api.js';
import grid from '../../strategies/grid.js';
import { Harness, type HarnessOptions } from '../../src/testing/strategy-harness.js';

type GridState = Parameters<typeof grid.onTick>[0]['state'];

const PARAMS = { levels: 5, spacingPct: '0.3', quantity: '0.001' };
const FIRST = '23142.31';

function harness(options: Partial<HarnessOptions<GridState>> = {}): Harness<GridState> {
  return new Harness(grid, { params: PARAMS, ...options });
}

/** "SIDE price quantity tag" for each order intent, to compare decisions at a glance. */
function summary(intents: readonly Intent[]): string[] {
  return intents.map((i) =>
    i.kind === 'CANCEL'
      ? `CANCEL ${i.localId}`
      : `${i.side} ${i.kind === 'MARKET' ? '' : i.price.toFixed()} ${i.quantity?.toFixed()} ${i.tag}`,
  );
}

const INITIAL_BUYS = [
  'BUY 23072.88 0.001 grid:-1:buy',
  'BUY 23003.45 0.001 grid:-2:buy',
  'BUY 22934.02 0.001 grid:-3:buy',
  'BUY 22864.6 0.001 grid:-4:buy',
  'BUY 22795.17 0.001 grid:-5:buy',
];

describe('grid strategy: the ladder', () => {
  it('centres on the first price and places buys below it, on the tick, nearest first', async () => {
    const h = harness();
    const intents = await h.tick(FIRST);
    expect(summary(intents)).toEqual(INITIAL_BUYS);
    expect(h.state.reference).toBe(FIRST);
    for (const i of intents) if (i.kind === 'LIMIT') expect(priceProblem(h.rules, i.price)).toBeUndefined();
    expect(h.rejected).toEqual([]);
  });

  it('seeds sells above the reference from initialBase, SELL prices rounded up', async () => {
    const h = harness({ params: { ...PARAMS, initialBase: '0.0025' }, base: '0.0025' });
    const intents = await h.tick(FIRST);
    expect(summary(intents.filter((i) => i.kind === 'LIMIT' && i.side === 'SELL'))).toEqual([
      'SELL 23211.74 0.001 grid:1:sell',
      'SELL 23281.17 0.001 grid:2:sell',
      'SELL 23350.6 0.0005 grid:3:sell',
    ]);
    expect(intents).toHaveLength(8);
  });

  it('uses a given referencePrice and absolute spacing, and sizes buys from quotePerLevel', async () => {
    const h = harness({ params: { referencePrice: 23000, spacingAbs: '50', levels: 2, quotePerLevel: '25' } });
    const intents = await h.tick('23010');
    // 25 / 22950 = 0.0010893… and 25 / 22900 = 0.0010917…, rounded down to the 0.000001 step.
    expect(summary(intents)).toEqual(['BUY 22950 0.001089 grid:-1:buy', 'BUY 22900 0.001091 grid:-2:buy']);
    expect(h.state.reference).toBeUndefined();
    for (const i of intents) if (i.kind === 'LIMIT') expect(quantityProblem(h.rules, i.quantity)).toBeUndefined();
  });

  it('is idempotent: more ticks inside the ladder place nothing new', async () => {
    const h = harness();
    await h.tick(FIRST);
    for (const price of ['23100', '23130.5', FIRST, '23080']) expect(await h.tick(price)).toEqual([]);
    expect(h.orders).toHaveLength(5);
  });
});

describe('grid strategy: fills', () => {
  it('re-arms a filled buy as a sell one level up, and that sell, once filled, as the buy again', async () => {
    const h = harness();
    await h.tick(FIRST);
    await h.tick('23070');
    expect(summary(await h.fill('grid:-1:buy'))).toEqual(['SELL 23142.31 0.001 grid:0:sell']);
    expect(await h.tick('23060')).toEqual([]);

    await h.tick('23150');
    expect(summary(await h.fill('grid:0:sell'))).toEqual(['BUY 23072.88 0.001 grid:-1:buy']);
    expect(h.position.quantity.isZero()).toBe(true);
    // One round trip harvested one spacing on 0.001 BTC: 0.001 × (23142.31 − 23072.88).
    expect(h.quote.minus(1_000_000).toFixed()).toBe('0.06943');
    expect(await h.tick('23150')).toEqual([]);
  });

  it('re-arms on the next tick when the engine reports the fill before the order leaves the open list', async () => {
    const h = harness();
    await h.tick(FIRST);
    const buy = h.order('grid:-1:buy');
    expect(summary(await h.fill(buy, { quantity: '0.0004' }))).toEqual([]);
    expect(await h.tick('23060')).toEqual([]);
    expect(summary(await h.fill(buy))).toEqual(['SELL 23142.31 0.001 grid:0:sell']);
  });

  it('sells what it received after a fee paid in base, never the gross quantity', async () => {
    const h = harness();
    await h.tick(FIRST);
    const intents = await h.fill('grid:-1:buy', { fee: '0.000001', feeAsset: 'BTC' });
    expect(summary(intents)).toEqual(['SELL 23142.31 0.000999 grid:0:sell']);
    expect(h.rejected).toEqual([]);
  });

  it('does not sell base it did not buy, however much the account holds', async () => {
    const h = harness({ base: '2' });
    const intents = await h.tick(FIRST);
    expect(intents.filter((i) => i.kind === 'LIMIT' && i.side === 'SELL')).toEqual([]);
  });

  it('survives a restart: journaled open orders (even pending or unknown) are never placed twice', async () => {
    const h = harness();
    await h.tick(FIRST);
    await h.fill('grid:-2:buy', { price: '23003.45' });
    h.order('grid:-1:buy').status = 'PENDING';
    h.order('grid:-1:sell').status = 'UNKNOWN';
    const again = h.restart();
    expect(await again.tick('23010')).toEqual([]);
    expect(again.orders.map((o) => o.tag).sort()).toEqual(
      ['grid:-1:buy', 'grid:-1:sell', 'grid:-3:buy', 'grid:-4:buy', 'grid:-5:buy'].sort(),
    );
    // After the restart the books still add up: the sell fills, the slot buys again.
    await again.tick('23080');
    expect(summary(await again.fill('grid:-1:sell'))).toEqual(['BUY 23003.45 0.001 grid:-2:buy']);
    expect(await again.tick('23080')).toEqual([]);
  });
});

describe('grid strategy: limits', () => {
  it('keeps quote in open buys plus inventory cost within budgetQuote', async () => {
    const h = harness({ params: { ...PARAMS, budgetQuote: '50' } });
    expect(summary(await h.tick(FIRST))).toEqual(INITIAL_BUYS.slice(0, 2));
    expect(summary(await h.fill('grid:-1:buy'))).toEqual(['SELL 23142.31 0.001 grid:0:sell']);
    // 23.07 of inventory and 23.00 in the open buy: a third buy would break the budget.
    expect(await h.tick('22990')).toEqual([]);
    await h.tick('23150');
    expect(summary(await h.fill('grid:0:sell'))).toEqual(['BUY 23072.88 0.001 grid:-1:buy']);
    expect(h.logs.filter((l) => l.msg.includes('budget'))).toHaveLength(1);
  });

  it('places only the buys the free quote can pay for, instead of intents the engine would refuse', async () => {
    const h = harness({ quote: '50' });
    expect(summary(await h.tick(FIRST))).toEqual(INITIAL_BUYS.slice(0, 2));
    expect(await h.tick(FIRST)).toEqual([]);
    expect(h.rejected).toEqual([]);
    expect(h.logs.filter((l) => l.msg.includes('free quote'))).toHaveLength(1);
  });

  it('on any price path: within budget, never sells more than it holds, every order valid, no duplicates', () => {
    const path = fc.array(fc.integer({ min: -120, max: 120 }), { minLength: 10, maxLength: 60 });
    return fc.assert(
      fc.asyncProperty(path, fc.constantFrom('0.001', '0.0013'), fc.boolean(), async (moves, quantity, seeded) => {
        const budget = dec(100);
        const h = harness({
          params: { ...PARAMS, quantity, budgetQuote: '100', ...(seeded ? { initialBase: '0.002' } : {}) },
          base: seeded ? '0.002' : 0,
          quote: 1000,
        });
        let price = dec(FIRST);
        for (const move of moves) {
          price = price.plus(move);
          await h.tick(price);
          await h.fillCrossed();
          const taken = dec(1000).minus(h.balances().get('USDT')!.free);
          expect(taken.lte(budget)).toBe(true);
          expect(h.base.gte(0)).toBe(true);
          const tags = h.orders.map((o) => o.tag);
          expect(new Set(tags).size).toBe(tags.length);
        }
        expect(h.rejected).toEqual([]);
        expect(h.placed.every((i) => i.kind === 'LIMIT')).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('works without cancel, deciding exactly as with it', async () => {
    const path = ['23142.31', '23050', '22990', '23100', '23160', '23230', '23000', '22800', '23300'];
    const run = async (canCancel: boolean) => {
      const h = harness({ canCancel });
      for (const price of path) {
        await h.tick(price);
        await h.fillCrossed();
      }
      return h;
    };
    const without = await run(false);
    const withCancel = await run(true);
    expect(summary(without.placed)).toEqual(summary(withCancel.placed));
    expect(without.placed.some((i) => i.kind === 'CANCEL')).toBe(false);
    expect(without.rejected).toEqual([]);
    expect(without.placed.length).toBeGreaterThan(10);
  });

  it('does not chase a price that leaves the range, and says so once per excursion', async () => {
    const h = harness();
    await h.tick(FIRST);
    for (const price of ['30000', '31000', '32000']) {
      await h.tick(price);
      await h.fillCrossed();
    }
    // Unseeded, the ladder only buys below the reference: the same five buys wait, nothing follows the price.
    expect(summary(h.placed)).toEqual(INITIAL_BUYS);
    for (const price of ['15000', '14000']) {
      await h.tick(price);
      await h.fillCrossed();
    }
    // Everything bought: only sells rest, one level above each buy, and no buy below the ladder.
    expect(h.orders.every((o) => o.side === 'SELL')).toBe(true);
    expect(h.position.quantity.toFixed()).toBe('0.005');
    expect(h.orders.map((o) => o.tag)).toEqual([
      'grid:0:sell',
      'grid:-1:sell',
      'grid:-2:sell',
      'grid:-3:sell',
      'grid:-4:sell',
    ]);
    expect(h.logs.filter((l) => l.msg.startsWith('price left the grid')).map((l) => l.msg)).toEqual([
      'price left the grid above its range: waiting, not chasing',
      'price left the grid below its range: waiting, not chasing',
    ]);
  });
});

describe('grid strategy: params', () => {
  const parse = (p: object) => grid.params.safeParse(p);
  const messages = (p: object) => parse(p).error?.issues.map((i) => i.message);

  it('accepts the shipped configuration', () => {
    expect(parse({ ...PARAMS, budgetQuote: '200' }).success).toBe(true);
  });

  it('requires exactly one spacing and exactly one order size', () => {
    expect(messages({ levels: 5, quantity: 1 })).toEqual([
      'expected exactly one of spacingPct and spacingAbs, found neither',
    ]);
    expect(messages({ ...PARAMS, spacingAbs: 10, quotePerLevel: 20 })).toEqual([
      'expected exactly one of spacingPct and spacingAbs, found both',
      'expected exactly one of quantity and quotePerLevel, found both',
    ]);
  });

  it('keeps the lowest level above zero and rejects non-positive decimals', () => {
    expect(messages({ ...PARAMS, spacingPct: 25, levels: 4 })).toEqual([
      'expected spacingPct × levels below 100 (the lowest level must stay above zero), found 25 × 4',
    ]);
    expect(messages({ ...PARAMS, quantity: '-0.001' })).toEqual(['expected a positive decimal, found "-0.001"']);
  });
});
