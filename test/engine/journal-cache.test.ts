/**
 * The journal cache keeps each instance's open exposure (what its orders may still bring, per side, and how
 * many are the strategy's) as rows change, so the risk check before an order does not walk every open order.
 * Whatever the sequence of inserts, outcomes, fills recorded and delivered and reloads, it must equal the fold
 * over the instance's view (activeFor) that the risk check used to make, and the unresolved rows it keeps apart
 * must be the view's PENDING and UNKNOWN ones. On a temp-file journal.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { expect, it, vi } from 'vitest';
import { HELD_STOP_TAG, isHeldExit } from '../../src/engine/exits/exit-orders.js';
import { JournalCache } from '../../src/engine/journal-cache.js';
import { D, type Dec, ZERO } from '../../src/market/decimal.js';
import { isUnresolved, type OrderRow, remainingBase } from '../../src/store/order-journal.js';
import { openStore } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('journal-cache');

const INSTANCES = ['a', 'b'] as const;
const STATUSES = ['PENDING', 'OPEN', 'PARTIALLY_FILLED', 'UNKNOWN', 'FILLED', 'CANCELED', 'REJECTED'] as const;
const LAST = new D('250');

/** The fold the risk check made over the view before the cache kept it. */
function folded(cache: JournalCache, instance: string): { buy: string; sell: string; count: number } {
  let buy: Dec = ZERO;
  let sell: Dec = ZERO;
  let count = 0;
  for (const row of cache.activeFor(instance)) {
    if (row.side === 'BUY') buy = buy.plus(remainingBase(row, LAST));
    else sell = sell.plus(remainingBase(row, LAST));
    if (!isHeldExit(row)) count++;
  }
  return { buy: buy.toFixed(), sell: sell.toFixed(), count };
}

/** The cache's exposure, read as the risk check reads it (orders by quote amount at the last price). */
function kept(cache: JournalCache, instance: string): { buy: string; sell: string; count: number } {
  const exposure = cache.exposure(instance);
  let { buy, sell } = exposure;
  for (const row of exposure.byQuote) {
    if (row.side === 'BUY') buy = buy.plus(remainingBase(row, LAST));
    else sell = sell.plus(remainingBase(row, LAST));
  }
  return { buy: buy.toFixed(), sell: sell.toFixed(), count: exposure.count };
}

const quantity = fc.integer({ min: 1, max: 5_000 }).map((n) => (n / 1000).toString());
const op = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    instance: fc.constantFrom(...INSTANCES),
    side: fc.constantFrom('BUY' as const, 'SELL' as const),
    quantity,
    byQuote: fc.boolean(),
    heldExit: fc.boolean(),
    status: fc.constantFrom('PENDING' as const, 'UNKNOWN' as const, 'OPEN' as const),
  }),
  fc.record({
    kind: fc.constant('save' as const),
    pick: fc.nat(),
    status: fc.constantFrom(...STATUSES),
    filledPart: fc.integer({ min: 0, max: 4 }),
    execAhead: fc.boolean(),
  }),
  fc.record({ kind: fc.constantFrom('fillRecorded' as const, 'fillDelivered' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('load' as const) }),
);

it('keeps every instance exposure equal to the fold over its view, whatever happens to its rows', () => {
  let run = 0;
  fc.assert(
    fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
      const store = openStore({ path: join(dir, `run-${run++}.db`), clock: { now: () => 1000 } });
      try {
        const cache = new JournalCache(store);
        cache.load();
        const rows: string[] = [];
        let seq = 0;
        for (const step of ops) {
          if (step.kind === 'insert') {
            seq++;
            const localId = `${step.instance}-${seq}`;
            rows.push(localId);
            cache.insert(
              orderRow({
                localId,
                instance: step.instance,
                seq,
                side: step.side,
                type: step.heldExit && step.side === 'SELL' ? 'STOP_LIMIT' : step.byQuote ? 'MARKET' : 'LIMIT',
                tag: step.heldExit ? HELD_STOP_TAG : undefined,
                quantity: step.byQuote && !step.heldExit ? undefined : step.quantity,
                quoteAmount: step.byQuote && !step.heldExit ? step.quantity : undefined,
                status: step.status,
              }),
            );
          } else if (step.kind === 'load') {
            cache.load();
          } else if (rows.length > 0) {
            const localId = rows[step.pick % rows.length]!;
            const row = cache.get(localId)!;
            if (step.kind === 'save') {
              // A quarter of the order filled per step of filledPart (by quote: of its quote amount).
              const whole = new D(row.quantity ?? row.quoteAmount!);
              const filled = whole.mul(step.filledPart).div(4);
              const filledQty = row.quantity === undefined ? filled.div(LAST) : filled;
              const next: OrderRow = {
                ...row,
                status: step.status,
                filledQty: filledQty.toFixed(),
                avgPrice: filledQty.isZero() ? undefined : LAST.toFixed(),
                execQty: (step.execAhead ? filledQty.plus('0.001') : filledQty).toFixed(),
                updatedAt: 2000,
              };
              cache.save(next);
            } else if (step.kind === 'fillRecorded') cache.fillRecorded(localId);
            else cache.fillDelivered(localId);
          }
          // The cache gives each row as the journal holds it (live, the last one dropped, or read back).
          for (const localId of rows) expect(cache.get(localId)).toEqual(store.orders.get(localId));
          for (const instance of INSTANCES) {
            expect(kept(cache, instance)).toEqual(folded(cache, instance));
            expect(
              cache
                .unresolvedFor(instance)
                .map((r) => r.localId)
                .sort(),
            ).toEqual(
              cache
                .activeFor(instance)
                .filter(isUnresolved)
                .map((r) => r.localId)
                .sort(),
            );
          }
        }
      } finally {
        store.close();
      }
    }),
    { numRuns: 60 },
  );
});

it('reads the row a fill closed back from memory when the fill is counted', () => {
  const store = openStore({ path: join(dir, 'dropped.db'), clock: { now: () => 1000 } });
  try {
    const cache = new JournalCache(store);
    cache.load();
    cache.insert(orderRow({ localId: 'a-1', instance: 'a', seq: 1, side: 'BUY', quantity: '0.01', status: 'OPEN' }));
    // The fill's transaction commits the final row (it leaves the live rows), then the fill is counted.
    const filled = { ...cache.get('a-1')!, status: 'FILLED', filledQty: '0.01', execQty: '0.01', updatedAt: 2000 };
    cache.save(filled);
    const read = vi.spyOn(store.orders, 'get');
    cache.fillRecorded('a-1');
    expect(read).not.toHaveBeenCalled();
    expect(cache.activeFor('a')).toEqual([filled]);
    cache.fillDelivered('a-1');
    expect(cache.activeFor('a')).toEqual([]);
    expect(cache.get('a-1')).toEqual(filled);
  } finally {
    store.close();
  }
});
