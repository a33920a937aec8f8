import { describe, expect, it } from 'vitest';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { D, dec } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { intentBuilders } from '../../src/engine/intent-builders.js';
import { checkOrder } from '../../src/engine/order-checks.js';
import { createOutcome } from '../../src/engine/order-manager.js';
import { matchUnresolved, sameOrder } from '../../src/engine/outcome-matching.js';
import { PositionTracker, utcDay } from '../../src/market/position.js';
import { CircuitBreaker, isEntry, riskProblem } from '../../src/engine/risk.js';
import { VenueError, type VenueErrorMeaning } from '../../src/ports/venue-errors.js';
import type { Intent } from '../../src/strategy/api.js';
import { type OrderRow, remainingBase } from '../../src/store/order-journal.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { orderRow } from '../store/fixtures.js';
import { matching } from './harness.js';

const rules = pairRulesFrom(DEFAULT_PAIRS[0]!); // BTCUSDT: tick 0.01, base precision 6, quote precision 2

describe('a failed create, by what the failure means', () => {
  const failure = (meaning: VenueErrorMeaning) => new VenueError('E_EXCHANGE', meaning, meaning);
  it('is certain only where the venue refused or the request never left', () => {
    expect(createOutcome(failure('rejected'))).toBe('REJECTED');
    expect(createOutcome(failure('authentication'))).toBe('REJECTED');
    expect(createOutcome(failure('not-sent'))).toBe('NOT_SENT');
  });
  it('treats everything else as an unknown outcome, never as failed', () => {
    for (const err of [
      failure('outcome-unknown'),
      failure('temporary'),
      // Duck-typed look-alikes are not classified: only an adapter gives an error its meaning.
      Object.assign(new Error('refused'), { code: 'E_EXCHANGE', meaning: 'rejected' }),
      new TypeError('bug in an adapter'),
      'a string',
    ])
      expect(createOutcome(err)).toBe('UNKNOWN');
  });
});

describe('intent builders', () => {
  it('round prices never worse for the side and quantities down, exactly', () => {
    const queue: Intent[] = [];
    const b = intentBuilders(() => rules, queue);
    const buy = b.limit('BUY', '100.019', '0.1234567');
    const sell = b.limit('SELL', 100.011, '0.1234567');
    expect(buy.price.toFixed()).toBe('100.01');
    expect(sell.price.toFixed()).toBe('100.02');
    expect(buy.quantity.toFixed()).toBe('0.123456');
    const oco = b.oco('SELL', { price: '110.001', stopPrice: '90.001', limitPrice: '89.999' }, 1, { tag: 'exit' });
    expect([oco.price, oco.stopPrice, oco.limitPrice].map((d) => d.toFixed())).toEqual(['110.01', '90.01', '90']);
    expect(oco.tag).toBe('exit');
    const m = b.market('BUY', { quoteAmount: '10.129' });
    expect(m.quoteAmount?.toFixed()).toBe('10.12');
    b.cancel('x-1');
    expect(queue.map((i) => i.kind)).toEqual(['LIMIT', 'LIMIT', 'OCO', 'MARKET', 'CANCEL']);
  });
});

describe('order checks', () => {
  const last = new D('100');
  const stop = (side: 'BUY' | 'SELL', stopPrice: string) =>
    checkOrder(
      { kind: 'STOP_LIMIT', side, stopPrice: dec(stopPrice), price: dec(stopPrice), quantity: dec('1') },
      rules,
      last,
    );
  it('refuses a stop that would trigger at once', () => {
    expect(stop('BUY', '100')).toMatchObject({ ok: false, reason: matching(/would trigger at once/) });
    expect(stop('BUY', '99')).toMatchObject({ ok: false });
    expect(stop('SELL', '100')).toMatchObject({
      ok: false,
      reason: matching(/at or above the last price 100/),
    });
    expect(stop('BUY', '101')).toMatchObject({ ok: true });
    expect(stop('SELL', '99')).toMatchObject({ ok: true });
  });
  it('refuses OCO legs on the wrong side', () => {
    const oco = (side: 'BUY' | 'SELL', price: string, stopPrice: string) =>
      checkOrder(
        {
          kind: 'OCO',
          side,
          price: dec(price),
          stopPrice: dec(stopPrice),
          limitPrice: dec(stopPrice),
          quantity: dec(1),
        },
        rules,
        last,
      );
    expect(oco('SELL', '110', '90')).toMatchObject({ ok: true });
    expect(oco('SELL', '90', '110')).toMatchObject({ ok: false, reason: matching(/wrong side/) });
    expect(oco('SELL', '110', '100')).toMatchObject({ ok: false });
    expect(oco('BUY', '90', '110')).toMatchObject({ ok: true });
    expect(oco('BUY', '110', '90')).toMatchObject({ ok: false });
  });
  it('re-checks tick, precision and allowed types, and writes plain decimals', () => {
    expect(
      checkOrder({ kind: 'LIMIT', side: 'BUY', price: dec('100.001'), quantity: dec(1) }, rules, last),
    ).toMatchObject({
      ok: false,
      reason: matching(/tickSize/),
    });
    expect(
      checkOrder({ kind: 'LIMIT', side: 'BUY', price: dec(100), quantity: dec('0.0000001') }, rules, last),
    ).toMatchObject({
      ok: false,
      reason: matching(/precision/),
    });
    const limitOnly = { ...rules, orderTypes: new Set(['LIMIT']) };
    expect(checkOrder({ kind: 'MARKET', side: 'BUY', quantity: dec(1) }, limitOnly, last)).toMatchObject({ ok: false });
    const ok = checkOrder({ kind: 'LIMIT', side: 'BUY', price: dec('0.01'), quantity: dec('0.000001') }, rules, last);
    expect(ok).toMatchObject({ ok: true, order: { request: { price: '0.01', quantity: '0.000001', type: 'LIMIT' } } });
  });
  it('refuses what needs a last price when there is none', () => {
    expect(checkOrder({ kind: 'MARKET', side: 'BUY', quantity: dec(1) }, rules, undefined)).toMatchObject({
      ok: false,
    });
  });
});

describe('position', () => {
  it('folds buys and sells with base and quote fees into quantity, average and realised PnL', () => {
    const p = new PositionTracker();
    const t = Date.UTC(2024, 0, 1, 12);
    p.apply({ side: 'BUY', price: dec(100), qty: dec(1), fee: dec('0.001'), feeIn: 'base', time: t });
    expect(p.position.quantity.toFixed()).toBe('0.999');
    expect(p.position.averagePrice.toDecimalPlaces(10).toFixed()).toBe('100.1001001001');
    const realised = p.apply({
      side: 'SELL',
      price: dec(110),
      qty: dec('0.999'),
      fee: dec('0.10989'),
      feeIn: 'quote',
      time: t,
    });
    // 0.999 × 110 − 100 (cost) − 0.10989 fee
    expect(realised.toFixed()).toBe('9.78011');
    expect(p.position.quantity.isZero()).toBe(true);
    expect(p.realisedOn(utcDay(t)).toFixed()).toBe('9.78011');
    expect(p.realisedOn(utcDay(t) + 1).toFixed()).toBe('0');
  });
  it('realises on partial exits at the average price and reverses through zero', () => {
    const p = new PositionTracker();
    p.apply({ side: 'BUY', price: dec(100), qty: dec(2), fee: dec(0), feeIn: 'other', time: 0 });
    p.apply({ side: 'BUY', price: dec(110), qty: dec(2), fee: dec(0), feeIn: 'other', time: 0 });
    expect(p.position.averagePrice.toFixed()).toBe('105');
    expect(
      p.apply({ side: 'SELL', price: dec(100), qty: dec(1), fee: dec(0), feeIn: 'other', time: 0 }).toFixed(),
    ).toBe('-5');
    expect(
      p.apply({ side: 'SELL', price: dec(120), qty: dec(4), fee: dec(0), feeIn: 'other', time: 0 }).toFixed(),
    ).toBe('45');
    expect(p.position.quantity.toFixed()).toBe('-1');
    expect(p.position.averagePrice.toFixed()).toBe('120');
    expect(p.unrealisedAt(dec(110)).toFixed()).toBe('10');
  });
});

describe('risk', () => {
  const base = {
    side: 'BUY' as const,
    quantity: dec(1),
    notional: dec(100),
    position: dec(0),
    openBuy: dec(0),
    openSell: dec(0),
    openCount: 0,
    realisedToday: dec(0),
  };
  it('applies each limit with its reason', () => {
    expect(riskProblem({ ...base, limits: { maxOrderNotional: dec(99) } })?.reason).toMatch(/maxOrderNotional 99/);
    expect(riskProblem({ ...base, limits: { maxOrderNotional: dec(100) } })).toBeUndefined();
    expect(riskProblem({ ...base, openCount: 2, limits: { maxOpenOrders: 2 } })?.reason).toMatch(/maxOpenOrders is 2/);
    expect(riskProblem({ ...base, openBuy: dec(1), limits: { maxPosition: dec('1.5') } })?.reason).toMatch(
      /maxPosition/,
    );
    expect(riskProblem({ ...base, side: 'SELL', position: dec(3), limits: { maxPosition: dec(1) } })).toBeUndefined();
    const lost = { ...base, realisedToday: dec(-50), limits: { dailyLossLimit: dec(50) } };
    expect(riskProblem(lost)?.reason).toMatch(/daily loss limit/);
    expect(riskProblem(lost)?.kind).toBe('daily-loss');
    expect(riskProblem({ ...lost, side: 'SELL', position: dec(2) })).toBeUndefined();
  });
  it('gives the figures it derives rounded for people: to the pair’s precision, else 8 places', () => {
    // A realised PnL and a position out of divisions (an average price, an order by quote amount).
    const lost = {
      ...base,
      realisedToday: dec('-50.02499959350000000000000000000000000000388'),
      limits: { dailyLossLimit: dec(50) },
    };
    expect(riskProblem(lost)?.reason).toBe(
      'daily loss limit reached (realised -50.02499959 today, limit 50): no new entries until the next UTC day',
    );
    expect(riskProblem({ ...lost, rules: pairRulesFrom(DEFAULT_PAIRS[0]!) })?.reason).toMatch(
      /^daily loss limit reached \(realised -50\.02 today/,
    );
    const long = { ...base, openBuy: dec('0.333333333333333333333'), limits: { maxPosition: dec('1.2') } };
    expect(riskProblem(long)?.reason).toBe('position could reach 1.33333333 (with open orders), maxPosition is 1.2');
  });
  it('counts what a live order may still bring in base, by quantity or by unspent quote at the last price', () => {
    const limit = orderRow({ quantity: '0.5', filledQty: '0.2' });
    expect(remainingBase(limit, dec(100)).toFixed()).toBe('0.3');
    const byQuote = orderRow({ type: 'MARKET', price: undefined, quantity: undefined, quoteAmount: '60' });
    expect(remainingBase(byQuote, dec(120)).toFixed()).toBe('0.5');
    // 0.2 bought at 100 spent 20 of the 60: 40 left, 0.4 at 100.
    const part = { ...byQuote, filledQty: '0.2', avgPrice: '100' };
    expect(remainingBase(part, dec(100)).toFixed()).toBe('0.4');
    expect(remainingBase({ ...part, filledQty: '0.7' }, dec(100)).toFixed()).toBe('0');
    expect(remainingBase(byQuote, undefined).toFixed()).toBe('0');
  });
  it('tells entries from exits', () => {
    expect(isEntry('SELL', dec(1), dec(2))).toBe(false);
    expect(isEntry('SELL', dec(3), dec(2))).toBe(true);
    expect(isEntry('BUY', dec(1), dec(0))).toBe(true);
    expect(isEntry('BUY', dec(1), dec(-1))).toBe(false);
  });
  it('circuit breaker trips after N errors, backs off longer on repeated trips, closes on success', () => {
    const b = new CircuitBreaker({ threshold: 3, baseBackoffMs: 1000, maxBackoffMs: 3000 });
    expect(b.onFailure(0)).toBeUndefined();
    expect(b.onSuccess(0)).toBeUndefined(); // resets the count
    b.onFailure(0);
    b.onFailure(0);
    expect(b.onFailure(0)).toEqual({ kind: 'tripped', until: 1000, trips: 1, errors: 3 });
    expect(b.blockedUntil(999)).toBe(1000);
    expect(b.onSuccess(500)).toBeUndefined(); // still within the backoff
    expect(b.blockedUntil(1000)).toBeUndefined();
    expect(b.onFailure(1000)).toMatchObject({ kind: 'tripped', until: 3000, trips: 2 }); // the probe failed: 2 s
    expect(b.onFailure(3000)).toMatchObject({ until: 6000, trips: 3 }); // capped at 3 s
    expect(b.onSuccess(6000)).toEqual({ kind: 'closed' });
    expect(b.onFailure(6000)).toBeUndefined();
  });
  it('circuit breaker closes early once the venue answered N calls in a row and the base backoff has passed', () => {
    const b = new CircuitBreaker({ threshold: 3, baseBackoffMs: 1000, maxBackoffMs: 60_000 });
    for (let i = 0; i < 3; i++) b.onFailure(0);
    expect(b.onFailure(1000)).toMatchObject({ until: 3000, trips: 2 }); // a long outage doubles the backoff
    expect(b.onFailure(3000)).toMatchObject({ until: 7000, trips: 3 });
    // The fault ends at 3500: three answers in a row, 1 s after the last trip, close it long before 7000.
    expect(b.onSuccess(3500)).toBeUndefined();
    expect(b.onSuccess(3600)).toBeUndefined();
    expect(b.onFailure(3700)).toBeUndefined(); // a failure in between starts the count again
    b.onSuccess(3800);
    b.onSuccess(3900);
    expect(b.onSuccess(3950)).toBeUndefined(); // three in a row, but not yet 1 s since the trip at 3000
    expect(b.onSuccess(4000)).toEqual({ kind: 'closed' });
    expect(b.blockedUntil(4000)).toBeUndefined();
  });
});

describe('matching unknown creates', () => {
  const row = (over: Partial<OrderRow>): OrderRow =>
    orderRow({ status: 'UNKNOWN', createdAt: 1_000_000, sentAt: 1_000_000, updatedAt: 1_000_000, ...over });
  const rec = (id: number, over: Partial<OrderRecord> = {}): OrderRecord => ({
    displayingId: String(id),
    symbol: 'BTCUSDT',
    side: 'BUY',
    type: 'LIMIT',
    status: 'NEW',
    price: 100,
    stopPrice: 0,
    limitPrice: 100,
    quantity: 0.5,
    executedQty: 0,
    createdAt: new Date(1_000_100).toISOString(),
    ...over,
  });
  const window = { windowMs: 60_000, skewMs: 30_000 };
  it('matches on symbol, side, type, prices and quantity, within the window, each order once, never a known one', () => {
    expect(sameOrder(row({}), rec(1))).toBe(true);
    expect(sameOrder(row({}), rec(1, { quantity: 0.6 }))).toBe(false);
    expect(sameOrder(row({}), rec(1, { side: 'SELL' }))).toBe(false);
    const rows = [row({}), row({ localId: 'a-2', seq: 2, sentAt: 1_000_050 })];
    const far = rec(9, { createdAt: new Date(2_000_000).toISOString() });
    const out = matchUnresolved(
      rows,
      [far, rec(3), rec(4), rec(5)].map((record) => ({ record, source: 'history' as const })),
      (id) => id === '3',
      window,
    );
    expect(out.map((m) => [m.row.localId, m.candidate.record.displayingId])).toEqual([
      ['a-1', '4'],
      ['a-2', '5'],
    ]);
  });
});
