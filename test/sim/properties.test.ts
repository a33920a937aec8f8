/**
 * Property tests of the matching engine: random engine settings, random price paths (small steps and gaps,
 * with and without traded volume) and random orders of every type and cancels, checked against the money
 * and matching invariants after every step and at the end.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { D, type Dec, fromWire } from '../../src/market/decimal.js';
import { SimRejectError } from '../../src/sim/error-codes.js';
import { MatchingEngine, type MatchingEngineOptions } from '../../src/sim/matching-engine.js';
import type { SimOrderInput } from '../../src/sim/order-input.js';
import type { SimOrderRecord } from '../../src/sim/records.js';

const KEY = 'prop';
const SYMBOL = 'BTCUSDT';
const START = { BTC: '3', USDT: '200000' };
const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const TICK = new D('0.01');

type Action =
  | { kind: 'tick'; move: number; volumeMicros: number | null }
  | {
      kind: 'level';
      pick: number;
      field: 'price' | 'stopPrice' | 'limitPrice';
      offset: number;
      volumeMicros: number | null;
    }
  | {
      kind: 'place';
      type: string;
      side: 'BUY' | 'SELL';
      qtyMicros: number;
      a: number;
      b: number;
      c: number;
      byQuote: boolean;
    }
  | { kind: 'cancel'; pick: number };

const tick = fc.record({
  kind: fc.constant('tick' as const),
  move: fc.oneof(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: -200000, max: 200000 })),
  volumeMicros: fc.option(fc.integer({ min: 0, max: 2_000_000 })),
});
/** A tick at (or a few ticks off) a price of an order already placed: touches and exact crossings. */
const level = fc.record({
  kind: fc.constant('level' as const),
  pick: fc.nat(),
  field: fc.constantFrom('price' as const, 'stopPrice' as const, 'limitPrice' as const),
  offset: fc.integer({ min: -4, max: 4 }),
  volumeMicros: fc.option(fc.integer({ min: 0, max: 2_000_000 })),
});
const placeAction = fc.record({
  kind: fc.constant('place' as const),
  type: fc.constantFrom('LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'),
  side: fc.constantFrom('BUY' as const, 'SELL' as const),
  qtyMicros: fc.integer({ min: 1, max: 400_000 }),
  a: fc.integer({ min: -100_000, max: 100_000 }),
  b: fc.integer({ min: -50, max: 100_000 }),
  c: fc.integer({ min: -20_000, max: 50_000 }),
  byQuote: fc.boolean(),
});
const cancel = fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() });
const actions = fc.array(
  fc.oneof(
    { arbitrary: tick, weight: 3 },
    { arbitrary: level, weight: 3 },
    { arbitrary: placeAction, weight: 3 },
    { arbitrary: cancel, weight: 1 },
  ),
  {
    minLength: 1,
    maxLength: 80,
    size: 'max',
  },
);
const settings = fc.record({
  fillThroughTicks: fc.constantFrom(0, 1, 3),
  makerFee: fc.constantFrom('0', '0.001', '0.0004'),
  takerFee: fc.constantFrom('0.001', '0.0003'),
  slippageBps: fc.constantFrom(0, 5),
  slippageJitterBps: fc.constantFrom(0, 20),
  participationRate: fc.constantFrom(undefined, '0.3'),
  seed: fc.integer({ min: 1, max: 1000 }),
});

const cents = (n: number) => new D(n).div(100).toFixed();

/** Turns an action into an order around the last price (in cents); many land on the right side of it. */
function orderFor(p: Extract<Action, { kind: 'place' }>, last: number): SimOrderInput {
  const quantity = new D(p.qtyMicros).div(1e6).toFixed();
  const up = p.side === 'BUY' ? 1 : -1;
  const base = { symbol: SYMBOL, side: p.side, type: p.type };
  switch (p.type) {
    case 'MARKET':
      return p.byQuote
        ? { ...base, quoteOrderQty: cents(Math.max(1, Math.round((p.qtyMicros * last) / 1e6))), useQuoteQty: true }
        : { ...base, quantity };
    case 'LIMIT':
      return { ...base, quantity, price: cents(Math.max(1, last + p.a)) };
    case 'STOP_LIMIT': {
      const stop = Math.max(1, last + up * p.b);
      return { ...base, quantity, stopPrice: cents(stop), price: cents(Math.max(1, stop + p.c)) };
    }
    default: {
      const price = Math.max(1, last - up * (Math.abs(p.a) + 1));
      const stop = Math.max(1, last + up * (p.b + 1));
      return {
        ...base,
        quantity,
        price: cents(price),
        stopPrice: cents(stop),
        limitPrice: cents(Math.max(1, stop + up * p.c)),
      };
    }
  }
}

function levelOf(action: Extract<Action, { kind: 'level' }>, placed: SimOrderRecord[], last: number): number {
  const o = placed[action.pick % Math.max(1, placed.length)];
  const at = o ? Math.round(o[action.field] * 100) : 0;
  return at > 0 ? at + action.offset : last + action.offset;
}

interface Run {
  engine: MatchingEngine;
  /** Tick prices (cents) by step; undefined where the step was not a tick. */
  ticks: (number | undefined)[];
  placedAt: Map<number, number>;
  canceledAt: Map<number, number>;
  fillStep: Map<number, number>;
}

function run(options: MatchingEngineOptions, list: Action[], check?: (r: Run) => void): Run {
  const engine = new MatchingEngine(options);
  engine.createAccount({ apiKey: KEY, balances: START });
  let last = 6_000_000;
  engine.onPrice(SYMBOL, last / 100, T0);
  const r: Run = { engine, ticks: [], placedAt: new Map(), canceledAt: new Map(), fillStep: new Map() };
  const placed: SimOrderRecord[] = [];
  list.forEach((action, step) => {
    r.ticks.push(undefined);
    try {
      if (action.kind === 'tick' || action.kind === 'level') {
        last = Math.max(100, action.kind === 'tick' ? last + action.move : levelOf(action, placed, last));
        r.ticks[step] = last;
        engine.onPrice(
          SYMBOL,
          last / 100,
          T0 + (step + 1) * 1000,
          action.volumeMicros === null ? undefined : action.volumeMicros / 1e6,
        );
      } else if (action.kind === 'place') {
        const rec = engine.placeOrder(KEY, orderFor(action, last));
        r.placedAt.set(rec.displayingId, step);
        placed.push(rec);
      } else if (placed.length > 0) {
        const id = (placed[action.pick % placed.length] as SimOrderRecord).displayingId;
        engine.cancelOrder(KEY, SYMBOL, String(id));
        r.canceledAt.set(id, step);
      }
    } catch (err) {
      if (!(err instanceof SimRejectError)) throw err;
    }
    for (const f of engine.fills(KEY)) if (!r.fillStep.has(f.id)) r.fillStep.set(f.id, step);
    check?.(r);
  });
  return r;
}

function allOrders(engine: MatchingEngine): Map<number, SimOrderRecord> {
  return new Map(engine.orderHistory(KEY, { pageSize: 100 }).map((o) => [o.displayingId, o]));
}

const x = (n: number): Dec => fromWire(n);

/** Free and locked never negative, and the locks are exactly what the open orders still hold. */
function checkLocks(r: Run): void {
  const { engine } = r;
  let quoteLock = new D(0);
  let baseLock = new D(0);
  for (const o of engine.openOrders(KEY)) {
    const remaining = x(o.quantity).minus(x(o.executedQty));
    if (o.side === 'BUY') quoteLock = quoteLock.plus(x(o.priceToCalLockAndFee ?? NaN).mul(remaining));
    else baseLock = baseLock.plus(remaining);
  }
  const btc = engine.balanceOf(KEY, 'BTC');
  const usdt = engine.balanceOf(KEY, 'USDT');
  for (const v of [btc.free, btc.locked, usdt.free, usdt.locked]) expect(v.gte(0)).toBe(true);
  expect(usdt.locked.toFixed()).toBe(quoteLock.toFixed());
  expect(btc.locked.toFixed()).toBe(baseLock.toFixed());
}

/** The limit price in force when an order filled: an OCO's leg, else its price. */
function legLimit(o: SimOrderRecord): Dec {
  return x(o.type === 'OCO' && o.executedType === 'STOP_LIMIT' ? o.limitPrice : o.price);
}

/** The first tick after the order was placed at which the price crossed its stop. */
function firstStopCross(r: Run, o: SimOrderRecord): number | undefined {
  const from = r.placedAt.get(o.displayingId) as number;
  for (let step = from + 1; step < r.ticks.length; step++) {
    const p = r.ticks[step];
    if (p === undefined) continue;
    const price = new D(p).div(100);
    if (o.side === 'BUY' ? price.gte(x(o.stopPrice)) : price.lte(x(o.stopPrice))) return step;
  }
  return undefined;
}

/** Stops and pathological runs shrink slowly through 80 actions: cap the search, never the verdict. */
const PROPERTY = { numRuns: 150, plugins: [fc.interruptAfterTimeLimit(20_000)] };

describe('matching engine properties', () => {
  it('conserves every asset exactly and keeps balances and locks consistent', () => {
    fc.assert(
      fc.property(settings, actions, (options, list) => {
        const { engine } = run(options, list, checkLocks);
        let btc = new D(START.BTC);
        let usdt = new D(START.USDT);
        for (const f of engine.fills(KEY)) {
          if (f.side === 'BUY') {
            btc = btc.plus(f.baseQty).minus(f.fee);
            usdt = usdt.minus(f.quoteQty);
          } else {
            btc = btc.minus(f.baseQty);
            usdt = usdt.plus(f.quoteQty).minus(f.fee);
          }
          expect(f.fee.toFixed()).toBe((f.side === 'BUY' ? f.baseQty : f.quoteQty).mul(f.feeRatio).toFixed());
        }
        const b = engine.balanceOf(KEY, 'BTC');
        const u = engine.balanceOf(KEY, 'USDT');
        expect(b.free.plus(b.locked).toFixed()).toBe(btc.toFixed());
        expect(u.free.plus(u.locked).toFixed()).toBe(usdt.toFixed());
        for (const o of engine.openOrders(KEY)) engine.cancelOrder(KEY, SYMBOL, String(o.displayingId));
        for (const [asset, total] of [
          ['BTC', btc],
          ['USDT', usdt],
        ] as const) {
          const after = engine.balanceOf(KEY, asset);
          expect(after.locked.isZero()).toBe(true);
          expect(after.free.toFixed()).toBe(total.toFixed());
        }
      }),
      PROPERTY,
    );
  });

  it('fills limits never worse than their limit, resting ones only when traded through, never after a cancel', () => {
    fc.assert(
      fc.property(settings, actions, (options, list) => {
        const r = run(options, list);
        const orders = allOrders(r.engine);
        const through = TICK.mul(options.fillThroughTicks);
        const filled = new Map<number, Dec>();
        for (const f of r.engine.fills(KEY)) {
          const o = orders.get(f.orderId) as SimOrderRecord;
          const step = r.fillStep.get(f.id) as number;
          filled.set(o.displayingId, (filled.get(o.displayingId) ?? new D(0)).plus(f.baseQty));
          expect(step).toBeLessThan(r.canceledAt.get(o.displayingId) ?? Infinity);
          if (o.type === 'MARKET') continue;
          const limit = legLimit(o);
          expect(o.side === 'BUY' ? f.price.lte(limit) : f.price.gte(limit)).toBe(true);
          if (f.maker) {
            expect(f.price.eq(limit)).toBe(true);
            const tickPrice = new D(r.ticks[step] as number).div(100);
            expect(o.side === 'BUY' ? tickPrice.lte(limit.minus(through)) : tickPrice.gte(limit.plus(through))).toBe(
              true,
            );
          }
        }
        for (const [id, qty] of filled) {
          const o = orders.get(id) as SimOrderRecord;
          expect(qty.lte(x(o.quantity))).toBe(true);
          expect(qty.toFixed()).toBe(x(o.executedQty).toFixed());
        }
      }),
      PROPERTY,
    );
  });

  it('never fills both OCO legs, and no stop triggers before the price crosses it', () => {
    fc.assert(
      fc.property(settings, actions, (options, list) => {
        const r = run(options, list);
        const orders = allOrders(r.engine);
        for (const o of orders.values()) {
          if (o.type !== 'STOP_LIMIT' && o.type !== 'OCO') continue;
          const steps = r.engine
            .fills(KEY)
            .filter((f) => f.orderId === o.displayingId)
            .map((f) => ({ step: r.fillStep.get(f.id) as number, price: f.price }));
          const crossed = firstStopCross(r, o);
          const stopLeg = o.type === 'STOP_LIMIT' || o.executedType === 'STOP_LIMIT';
          if (stopLeg && (steps.length > 0 || o.type === 'OCO')) expect(crossed).toBeDefined();
          if (stopLeg) for (const f of steps) expect(f.step).toBeGreaterThanOrEqual(crossed as number);
          if (o.type === 'OCO' && steps.length > 0) expect(o.executedType).not.toBeNull();
          if (o.executedType === 'LIMIT') for (const f of steps) expect(f.price.eq(x(o.price))).toBe(true);
        }
      }),
      PROPERTY,
    );
  });

  it('gives the same records when read after every step (shared, rebuilt on change) as when read once at the end', () => {
    const records = (e: MatchingEngine) => ({
      open: e.openOrders(KEY),
      orders: e.orderHistory(KEY, { pageSize: 100 }),
      trades: e.tradeHistory(KEY, { pageSize: 100 }),
    });
    fc.assert(
      fc.property(settings, actions, (options, list) => {
        const everyStep = run(options, list, (r) => {
          const read = records(r.engine);
          for (const o of [...read.open, ...read.orders, ...read.trades]) {
            expect(Object.isFrozen(o)).toBe(true);
            expect(Object.isFrozen(o.feeMetadata)).toBe(true);
          }
        });
        expect(records(everyStep.engine)).toEqual(records(run(options, list).engine));
      }),
      PROPERTY,
    );
  });

  it('is deterministic: the same settings, prices and orders give identical records', () => {
    fc.assert(
      fc.property(settings, actions, (options, list) => {
        const snapshot = (e: MatchingEngine) => ({
          orders: e.orderHistory(KEY, { pageSize: 100 }),
          trades: e.tradeHistory(KEY, { pageSize: 100 }),
          balances: e.balances(KEY),
          revision: e.revision,
        });
        expect(snapshot(run(options, list).engine)).toEqual(snapshot(run(options, list).engine));
      }),
      { ...PROPERTY, numRuns: 60 },
    );
  });
});
