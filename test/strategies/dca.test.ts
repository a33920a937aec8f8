import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { D, dec } from '../../src/market/decimal.js';
import type { Intent, OrderView } from '../../src/strategy/api.js';
import dca from '../../strategies/dca.js';
import { Harness, type HarnessOptions } from '../../src/testing/strategy-harness.js';

type DcaState = Parameters<typeof dca.onTick>[0]['state'];

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const PARAMS = { quoteAmount: '25', intervalMinutes: 60, maxBuys: 3 };
const EXIT = { takeProfitPct: '3', stopLossPct: '5', stopLimitPct: '0.5' };

function harness(options: Partial<HarnessOptions<DcaState>> = {}): Harness<DcaState> {
  return new Harness(dca, { params: PARAMS, ...options });
}

function summary(intents: readonly Intent[]): string[] {
  return intents.map((i) => {
    if (i.kind === 'CANCEL') return `CANCEL ${i.localId}`;
    if (i.kind === 'MARKET') return `MARKET ${i.side} quote ${i.quoteAmount?.toFixed()} ${i.tag}`;
    if (i.kind === 'OCO')
      return `OCO ${i.side} tp ${i.price.toFixed()} stop ${i.stopPrice.toFixed()} limit ${i.limitPrice.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
    return `${i.kind} ${i.side} ${i.price.toFixed()} qty ${i.quantity.toFixed()} ${i.tag}`;
  });
}

const buys = (intents: readonly Intent[]) => intents.filter((i) => i.kind !== 'CANCEL' && i.side === 'BUY');

describe('dca: buying', () => {
  it('buys quoteAmount at MARKET at once, then once per interval, however often it ticks', async () => {
    const h = harness();
    expect(summary(await h.walk(['23000'], MINUTE))).toEqual(['MARKET BUY quote 25 dca:buy:1']);
    // 25 / 23000 = 0.0010869… at the last price.
    expect(h.position.quantity.toFixed()).toBe('0.001086');
    expect(h.state.spent).toBe('24.978');
    expect(await h.walk(Array<string>(5).fill('23100'), 10 * MINUTE)).toEqual([]);
    expect(summary(await h.walk(['23100'], 10 * MINUTE))).toEqual(['MARKET BUY quote 25 dca:buy:2']);
  });

  it('buys with a LIMIT at the last price when asked, the quantity rounded down to the step', async () => {
    const h = harness({ params: { ...PARAMS, orderType: 'LIMIT' } });
    // 25 / 23123.45 = 0.0010811…
    expect(summary(await h.walk(['23123.45'], MINUTE))).toEqual(['LIMIT BUY 23123.45 qty 0.001081 dca:buy:1']);
  });

  it('stops at maxBuys and says so once', async () => {
    const h = harness();
    const placed = await h.walk(Array<string>(10).fill('23000'), HOUR);
    expect(summary(buys(placed))).toEqual([1, 2, 3].map((n) => `MARKET BUY quote 25 dca:buy:${n}`));
    expect(h.logs.filter((l) => l.msg.startsWith('accumulation finished'))).toEqual([
      { level: 'info', msg: 'accumulation finished: maxBuys reached' },
    ]);
  });

  it('keeps the quote spent by its fills, fees included, within budgetQuote', async () => {
    const h = harness({ params: { quoteAmount: '25', budgetQuote: '60' } });
    for (const price of ['23000', '22000', '21000', '20000']) {
      await h.tick(price, HOUR);
      for (const o of [...h.orders]) await h.fill(o, { price, fee: '0.025' });
    }
    // 25.003 then 25.017 spent: a third buy would pass 60.
    expect(h.state.spent).toBe('50.02');
    expect(summary(h.placed)).toEqual(['MARKET BUY quote 25 dca:buy:1', 'MARKET BUY quote 25 dca:buy:2']);
    expect(h.logs.some((l) => l.msg === 'accumulation finished: budgetQuote spent')).toBe(true);
  });

  it('never buys twice in an interval across a restart, even one that lost its state', async () => {
    const h = harness({ params: { ...PARAMS, orderType: 'LIMIT' } });
    await h.tick('23000', MINUTE);
    expect(await h.restart().walk(['23050', '23080'], 20 * MINUTE)).toEqual([]);

    // The process stopped after the order was sent but before state was saved: the journal still knows it.
    const lost = new Harness(dca, {
      params: { ...PARAMS, orderType: 'LIMIT' },
      openOrders: h.orders,
      state: {},
    });
    lost.time = h.time;
    expect(await lost.walk(['23050'], 20 * MINUTE)).toEqual([]);
    expect(lost.state.buys).toBe(1);
    // So does a fill reported after such a restart.
    const order: OrderView = { ...h.orders[0]!, tag: 'dca:buy:2', createdAt: lost.time };
    const late = new Harness(dca, { params: PARAMS, openOrders: [order], state: { buys: 1 } });
    late.time = lost.time;
    await late.fill(order);
    expect(late.state).toMatchObject({ buys: 2, lastBuyAt: lost.time });
    expect(await late.walk(['23000'], 30 * MINUTE)).toEqual([]);
  });

  it('a LIMIT still open an interval later: cancelled with cancel, waited for without', async () => {
    const path = ['23000', '23500', '23500'];
    const withCancel = harness({ params: { ...PARAMS, orderType: 'LIMIT' } });
    await withCancel.tick(path[0]!, MINUTE);
    expect(summary(await withCancel.tick(path[1]!, HOUR))).toEqual(['CANCEL L1']);
    expect(summary(await withCancel.tick(path[2]!, MINUTE))).toEqual(['LIMIT BUY 23500 qty 0.001063 dca:buy:2']);

    const without = harness({ params: { ...PARAMS, orderType: 'LIMIT' }, canCancel: false });
    await without.tick(path[0]!, MINUTE);
    expect(await without.walk(path.slice(1), HOUR)).toEqual([]);
    // Once it fills, the next buy goes at once: its interval has long passed.
    expect(summary(await without.walk(['23000', '23000'], MINUTE))).toEqual(['LIMIT BUY 23000 qty 0.001086 dca:buy:2']);
  });
});

describe('dca: the exit over the whole position', () => {
  it('with cancel: arms it after the first buy and re-arms it over everything as the position grows', async () => {
    const h = harness({ params: { ...PARAMS, exit: EXIT } });
    // 23000 × 1.03 = 23690; × 0.95 = 21850; × 0.995 = 21740.75.
    expect(summary(await h.walk(['23000'], MINUTE))).toEqual([
      'MARKET BUY quote 25 dca:buy:1',
      'OCO SELL tp 23690 stop 21850 limit 21740.75 qty 0.001086 dca:exit',
    ]);
    const exit = h.order('dca:exit');
    expect(summary(await h.walk(['22000'], HOUR))).toEqual(['MARKET BUY quote 25 dca:buy:2', `CANCEL ${exit.localId}`]);
    // 0.001086 + 0.001136 bought for 24.978 + 24.992: average 22488.7488…
    const average = dec('49.97').div('0.002222');
    expect(h.position.averagePrice.eq(average)).toBe(true);
    expect(summary(await h.walk(['22000'], MINUTE))).toEqual([
      'OCO SELL tp 23163.42 stop 21364.32 limit 21257.5 qty 0.002222 dca:exit',
    ]);
    expect(await h.walk(['22100', '22050'], MINUTE)).toEqual([]);
    expect(h.rejected).toEqual([]);
  });

  it('without cancel: arms it once, when accumulation ends, and says so at start', async () => {
    const h = harness({ params: { ...PARAMS, exit: EXIT }, canCancel: false });
    await h.start();
    expect(h.logs.map((l) => l.msg)).toContain(
      'this venue cannot cancel: the exit is armed once, over the whole position, when accumulation ends',
    );
    const placed = await h.walk(['23000', '22000', '21000', '21500', '21600'], HOUR);
    expect(summary(placed).filter((s) => s.startsWith('OCO'))).toEqual([
      // 0.001086 + 0.001136 + 0.00119 bought for 74.96: average 21969.52…, × 1.03, × 0.95, × 0.995, rounded up.
      'OCO SELL tp 22628.61 stop 20871.05 limit 20766.7 qty 0.003412 dca:exit',
    ]);
    expect(placed.findIndex((i) => i.kind === 'OCO')).toBe(3);
    expect(h.rejected).toEqual([]);
  });

  it('without cancel, leaves an armed exit alone when a raised maxBuys grows the position after a restart', async () => {
    const h = harness({ params: { ...PARAMS, exit: EXIT }, canCancel: false });
    await h.walk(['23000', '22000', '21000', '21500'], HOUR);
    const raised = new Harness(dca, {
      ...h.options,
      params: { ...PARAMS, maxBuys: 4, exit: EXIT },
      state: h.state,
      openOrders: h.orders,
    });
    raised.time = h.time;
    raised.tracker = h.tracker;
    expect(summary(await raised.walk(['21600'], HOUR))).toEqual(['MARKET BUY quote 25 dca:buy:4']);
    expect(raised.rejected).toEqual([]);
    expect(raised.orders.map((o) => o.tag)).toEqual(['dca:exit']);
  });

  it('warns at start when, without cancel, accumulation never ends', async () => {
    const h = harness({ params: { quoteAmount: '25', exit: EXIT }, canCancel: false });
    await h.start();
    expect(h.logs.filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual([
      'this venue cannot cancel and neither maxBuys nor budgetQuote is set: the exit will never be armed',
    ]);
  });

  it('does not re-arm for a partly filled exit: what is left still covers the position', async () => {
    const h = harness({ params: { ...PARAMS, exit: EXIT } });
    await h.walk(['23000'], MINUTE);
    await h.tick('23700', MINUTE);
    await h.fill('dca:exit', { quantity: '0.0005' });
    expect(await h.walk(['23650', '23600'], MINUTE)).toEqual([]);
  });

  it('on any path: within maxBuys and budget, buys an interval apart, exit legs on the right sides', () => {
    const step = fc.record({ move: fc.integer({ min: -400, max: 400 }), minutes: fc.integer({ min: 1, max: 90 }) });
    return fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 5, maxLength: 60 }),
        fc.boolean(),
        fc.constantFrom('MARKET', 'LIMIT'),
        async (steps, canCancel, orderType) => {
          const h = harness({
            params: { quoteAmount: '25', maxBuys: 6, budgetQuote: '120', orderType, exit: EXIT },
            canCancel,
          });
          let price = dec(23000);
          let lastBuy = -Infinity;
          for (const { move, minutes } of steps) {
            price = price.plus(move);
            const placed = [...(await h.tick(price, minutes * MINUTE)), ...(await h.fillCrossed())];
            for (const i of placed) {
              if (i.kind === 'OCO') expect(i.price.gt(price) && i.stopPrice.lt(price)).toBe(true);
              if (i.kind === 'CANCEL') expect(canCancel).toBe(true);
            }
            if (buys(placed).length > 0) {
              expect(buys(placed)).toHaveLength(1);
              expect(h.time - lastBuy).toBeGreaterThanOrEqual(60 * MINUTE);
              lastBuy = h.time;
            }
            expect(h.state.buys ?? 0).toBeLessThanOrEqual(6);
            expect(dec(h.state.spent ?? 0).lte(120)).toBe(true);
            const covered = h.orders
              .filter((o) => o.tag === 'dca:exit')
              .reduce((s, o) => s.plus(o.quantity.minus(o.filledQuantity)), new D(0));
            expect(covered.lte(h.position.quantity)).toBe(true);
          }
          expect(h.rejected).toEqual([]);
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('dca: params', () => {
  const messages = (p: object) => dca.params.safeParse(p).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`);

  it('accepts the shipped shape and fills in defaults', () => {
    const parsed = dca.params.parse({ quoteAmount: 25, exit: { takeProfitPct: 3, stopLossPct: 5 } });
    expect(parsed).toMatchObject({ intervalMinutes: 60, orderType: 'MARKET' });
    expect(parsed.exit?.stopLimitPct.toFixed()).toBe('0.2');
  });

  it('names what is wrong, down to the exit block', () => {
    expect(messages({ quoteAmount: 25, budgetQuote: 10 })).toEqual([
      'budgetQuote: expected at least quoteAmount (25), found 10',
    ]);
    expect(messages({ quoteAmount: 25, orderType: 'STOP' })).toEqual([
      'orderType: Invalid option: expected one of "MARKET"|"LIMIT"',
    ]);
    expect(messages({ quoteAmount: 25, exit: { takeProfitPct: 3, stopLossPct: 100, trailing: 1 } })).toEqual([
      'exit.stopLossPct: expected a percentage below 100',
      'exit: Unrecognized key: "trailing"',
    ]);
  });
});
