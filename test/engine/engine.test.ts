import Database from 'better-sqlite3';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { FillView, OrderView, StrategyContext } from '../../src/strategy/api.js';
import { readStatus } from '../../src/status/status-report.js';
import { FillStore } from '../../src/store/fills.js';
import { dec } from '../../src/market/decimal.js';
import { INCIDENT_QUIET_MS } from '../../src/ops/incident.js';
import { captureLogger } from '../support/capture-logger.js';
import { orderRow } from '../store/fixtures.js';
import { firstTick, Harness, instance, matching, strategy, venueError } from './harness.js';

let h: Harness;
/** Keeps one BUY limit open at `price` while it has none (tag "entry"). */
function oneBuy(price: string, quantity = '0.01', fills: FillView[] = []) {
  return strategy({
    onTick(ctx: StrategyContext) {
      if (ctx.openOrders.length === 0 && fills.length === 0) ctx.limit('BUY', price, quantity, { tag: 'entry' });
    },
    onFill(_ctx, fill) {
      fills.push(fill);
    },
  });
}

/** What a separate connection reads: only committed rows, as after a crash. */
function committed(h: Harness, read: (db: Database.Database) => unknown): unknown {
  const other = new Database(join(h.dir, 'bot.db'), { readonly: true });
  try {
    return read(other);
  } finally {
    other.close();
  }
}

const committedState = (h: Harness, instance: string) =>
  committed(h, (db) => db.prepare('SELECT state FROM strategy_state WHERE instance = ?').pluck().get(instance));

function totalChanges(h: Harness): number {
  return h.store.db.prepare('SELECT total_changes() AS n').pluck().get() as number;
}

/**
 * Started on a harness at price 100: an instance placing, on its n-th tick, a resting-or-not BUY of 0.01 at each
 * price of plan[n]; and the market job as the daemon runs it (its tickers observed, then a poll at once when
 * something was sent), one cycle 5 s after the last at `price`.
 */
async function placingPerTick(plan: readonly string[][]): Promise<(price?: number) => Promise<void>> {
  h = new Harness();
  h.price(100);
  let step = 0;
  await h.start([
    instance(
      'a',
      strategy({
        onTick(ctx) {
          for (const price of plan[step++] ?? []) ctx.limit('BUY', price, '0.01');
        },
      }),
    ),
  ]);
  const schedule = h.engine!.schedules()[0]!;
  return async (price = 100) => {
    h.clock.advance(5_000);
    h.sim.onPrice('BTCUSDT', price, h.clock.now());
    await h.engine!.marketCycle(schedule);
  };
}

describe('order flow', () => {
  it('journals the order durably before the venue sees the request', async () => {
    h = new Harness();
    h.price(100);
    const seen: unknown[] = [];
    h.venue.beforeCreate = (request) => {
      // The PENDING row is on disk before the request.
      seen.push(committed(h, (db) => db.prepare('SELECT local_id, status, price, quantity FROM orders').all()));
      expect(request).toMatchObject({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', price: '99.5', quantity: '0.01' });
    };
    await h.start([instance('a', oneBuy('99.5'))]);
    await h.tick(100);
    expect(seen).toEqual([[{ local_id: 'a-1', status: 'PENDING', price: '99.5', quantity: '0.01' }]]);
    const row = h.store.orders.get('a-1');
    expect(row).toMatchObject({ status: 'OPEN', matchMethod: 'response', tag: 'entry' });
    expect(row?.exchangeId).toBeDefined();
  });

  it("commits the strategy's state with the order's journal row, before the venue sees the request", async () => {
    // Were the state saved only after the send, a crash in between would restart the strategy from its state
    // before the hook: one that decides from its own state would send the same order again.
    h = new Harness();
    h.price(100);
    const seen: unknown[] = [];
    h.venue.beforeCreate = () => {
      seen.push(committedState(h, 'a'));
    };
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.state.entries = 1;
          ctx.limit('BUY', '99.5', '0.01');
          ctx.state.entries = 2;
          ctx.limit('BUY', '99.4', '0.01');
        }),
      ),
    ]);
    await h.tick(100);
    // Both requests saw the state the hook ended with, committed.
    expect(seen).toEqual(['{"entries":2}', '{"entries":2}']);
  });

  it('sends nothing when the state the hook left cannot be saved, and pauses the instance', async () => {
    h = new Harness();
    h.price(100);
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.state.when = BigInt(1); // JSON.stringify throws on a BigInt
          ctx.limit('BUY', '99.5', '0.01');
        }),
      ),
    ]);
    await h.tick(100);
    expect(h.venue.creates).toBe(0);
    expect(h.store.orders.get('a-1')).toBeUndefined();
    expect(h.engine!.instances()[0]).toMatchObject({ status: 'paused', reason: matching(/not JSON-serialisable/) });
  });

  it("still saves the hook's state when its order's journal row cannot be written", async () => {
    // The state is saved in the journal row's transaction: when the insert fails, both roll back, and the
    // state must still be written by the next save, not taken for saved.
    h = new Harness();
    h.price(100);
    const orders = h.store.orders as unknown as { insert: (...a: unknown[]) => void };
    const insert = orders.insert.bind(h.store.orders);
    let failures = 1;
    orders.insert = (...a) => {
      if (failures-- > 0) throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
      insert(...a);
    };
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.state.decided = 'yes';
          ctx.limit('BUY', '99.5', '0.01');
        }),
      ),
    ]);
    await h.tick(100);
    expect(h.venue.creates).toBe(0);
    expect(committedState(h, 'a')).toBe('{"decided":"yes"}');
  });

  it('records each fill once, in one transaction with its order, and calls onFill exactly once', async () => {
    h = new Harness();
    h.price(100);
    const fills: FillView[] = [];
    await h.start([instance('a', oneBuy('99.5', '0.01', fills))]);
    await h.tick(100);
    await h.tick(99.4); // trades through the limit: filled
    await h.tick(99.4);
    await h.tick(100);
    expect(fills).toHaveLength(1);
    expect(fills[0]).toMatchObject({ side: 'BUY', feeAsset: 'BTC' });
    expect(fills[0]!.price.toFixed()).toBe('99.5');
    expect(fills[0]!.quantity.toFixed()).toBe('0.01');
    expect(h.store.orders.get('a-1')).toMatchObject({
      status: 'FILLED',
      filledQty: '0.01',
      avgPrice: '99.5',
      fillSource: 'trades',
    });
    const stored = h.store.fills.forOrder('a-1');
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ delivered: true, fee: '0.00001', feeIn: 'base', source: 'trade' });
    expect(h.sim.fills('k')).toHaveLength(1);
    // The position nets the base fee: 0.01 bought, 0.00001 paid in BTC.
    expect(h.engine!.instances()[0]!.counters.fills).toBe(1);
  });

  it('tracks partial fills as PARTIALLY_FILLED and delivers each part', async () => {
    h = new Harness({ sim: { participationRate: '0.5' } });
    h.price(100);
    const fills: FillView[] = [];
    const seenStatus: string[] = [];
    await h.start([
      instance(
        'a',
        strategy({
          onTick(ctx) {
            if (ctx.openOrders.length === 0 && fills.length === 0 && seenStatus.length === 0) {
              ctx.limit('BUY', '99.5', '0.01');
              seenStatus.push('placed');
            }
          },
          onFill(ctx, fill) {
            fills.push(fill);
            seenStatus.push(fill.order.status);
          },
        }),
      ),
    ]);
    await h.tick(100);
    h.clock.advance(5000);
    h.sim.onPrice('BTCUSDT', 99.4, h.clock.now(), 0.01); // half the volume: 0.005 fills
    await h.engine!.pollOrders();
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'PARTIALLY_FILLED', filledQty: '0.005' });
    h.clock.advance(5000);
    h.sim.onPrice('BTCUSDT', 99.3, h.clock.now(), 0.01);
    await h.engine!.pollOrders();
    expect(fills.map((f) => f.quantity.toFixed())).toEqual(['0.005', '0.005']);
    expect(seenStatus).toEqual(['placed', 'PARTIALLY_FILLED', 'FILLED']);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'FILLED', filledQty: '0.01' });
  });

  it('does not touch SQLite on a tick where nothing happens, and skips polls when the venue did not change', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', oneBuy('90'))]);
    await h.tick(100);
    const before = totalChanges(h);
    for (let i = 0; i < 20; i++) {
      h.clock.advance(1000);
      h.sim.onPrice('BTCUSDT', 100 + (i % 3), h.clock.now());
      expect(h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'))).toBeUndefined();
      expect(h.engine!.pollOrders()).toBeUndefined();
    }
    expect(totalChanges(h)).toBe(before);
  });

  it('skips the poll after placements whose answers said all (resting, nothing executed), not after one that filled', async () => {
    // Per tick: two resting BUYs; nothing; a resting BUY on the tick that fills the one at 91; a marketable BUY.
    const cycle = await placingPerTick([['90', '91'], [], ['80'], ['101']]);
    await h.engine!.pollOrders();
    const reads = () => h.venue.openOrdersAsked.length;
    const before = reads();
    await cycle(100);
    expect(reads()).toBe(before);
    expect(h.engine!.pollIdle()).toBe(true);
    expect(h.store.orders.active().map((o) => [o.price, o.status, o.venueStatus])).toEqual([
      ['90', 'OPEN', 'NEW'],
      ['91', 'OPEN', 'NEW'],
    ]);
    await cycle(100);
    expect(reads()).toBe(before);
    // The BUY at 91 fills before the one at 80 is placed: the poll after it runs, and finds the fill.
    await cycle(90.5);
    expect(reads()).toBe(before + 1);
    expect(h.store.orders.get('a-2')).toMatchObject({ status: 'FILLED', filledQty: '0.01' });
    expect(h.engine!.pollIdle()).toBe(true);
    // The BUY at 101 fills as it is placed: its answer does not say all.
    await cycle(100);
    expect(reads()).toBe(before + 2);
    expect(h.store.orders.get('a-4')).toMatchObject({ status: 'FILLED', filledQty: '0.01' });
    expect(h.engine!.pollIdle()).toBe(true);
  });

  it('skips the poll after a resting placement that follows a complete poll at the revision the last one left', async () => {
    // Per tick: a resting BUY; another; another after a tick with nothing.
    const cycle = await placingPerTick([['90'], ['89'], [], ['88']]);
    const reads = () => h.venue.openOrdersAsked.length;
    // No poll yet: the first runs, complete at the revision the placement left.
    await cycle();
    const first = reads();
    expect(first).toBeGreaterThan(0);
    // The placements after it are taken whole from their answers (a run of them beginning where that poll read).
    await cycle();
    await cycle();
    await cycle();
    expect(reads()).toBe(first);
    expect(h.engine!.pollIdle()).toBe(true);
    expect(h.store.orders.active().map((o) => [o.price, o.status])).toEqual([
      ['90', 'OPEN'],
      ['89', 'OPEN'],
      ['88', 'OPEN'],
    ]);
  });
});

describe('refusals before the network', () => {
  it('refuses a stop that would trigger at once and OCO legs on the wrong side, without sending', async () => {
    h = new Harness();
    h.price(100);
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.stopLimit('BUY', '99', '99.5', '0.01');
          ctx.stopLimit('SELL', '101', '100.5', '0.01');
          ctx.oco('SELL', { price: '95', stopPrice: '105', limitPrice: '104' }, '0.01');
          ctx.oco('BUY', { price: '105', stopPrice: '95', limitPrice: '96' }, '0.01');
        }),
      ),
    ]);
    await h.tick(100);
    expect(h.venue.creates).toBe(0);
    const reasons = h.events('refused').map((e) => e.data.reason as string);
    expect(reasons).toHaveLength(4);
    expect(reasons[0]).toMatch(/STOP_LIMIT BUY stopPrice 99 is at or below the last price 100/);
    expect(reasons[1]).toMatch(/STOP_LIMIT SELL stopPrice 101 is at or above/);
    expect(reasons[2]).toMatch(/OCO SELL legs on the wrong side/);
    expect(reasons[3]).toMatch(/OCO BUY legs on the wrong side/);
    expect(h.store.orders.active()).toEqual([]);
    expect(h.engine!.instances()[0]!.counters.refused).toBe(4);
  });

  it('enforces each risk limit with its reason', async () => {
    h = new Harness();
    h.price(100);
    const intents: ((ctx: StrategyContext) => void)[] = [
      (ctx) => ctx.limit('BUY', '99', '2'), // 198 > maxOrderNotional 150
      (ctx) => ctx.limit('BUY', '90', '1'),
      (ctx) => ctx.limit('BUY', '89', '1'), // would make 2 open > maxOpenOrders... after position check below
    ];
    let step = 0;
    await h.start([
      instance(
        'a',
        strategy({
          onTick(ctx) {
            intents[step++]?.(ctx);
          },
        }),
        { risk: { maxOrderNotional: 150, maxOpenOrders: 1, maxPosition: '1.5' } },
      ),
    ]);
    await h.tick(100);
    await h.tick(100);
    await h.tick(100);
    const reasons = h.events('refused').map((e) => e.data.reason as string);
    expect(reasons[0]).toMatch(/order value 198 exceeds maxOrderNotional 150/);
    expect(reasons[1]).toMatch(/1 orders already open, maxOpenOrders is 1/);
    expect(h.venue.creates).toBe(1);
  });

  it('counts a MARKET order by quote amount not yet filled into the position limit', async () => {
    // The first buy is placed (and fills on the venue) but its fills are recorded only at the next poll: until
    // then the journal counts it as open. By quote amount it has no base quantity, so it must be counted at
    // the last price, or the second buy would pass maxPosition.
    h = new Harness({ balances: { USDT: '100000', BTC: '0' } });
    h.price(100);
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.market('BUY', { quoteAmount: '60' });
          ctx.market('BUY', { quoteAmount: '60' });
        }),
        { risk: { maxPosition: '1' } },
      ),
    ]);
    await h.tick(100);
    expect(h.venue.creates).toBe(1);
    expect(h.events('refused').map((e) => e.data.reason)).toEqual([
      matching(/position could reach 1\.2 \(with open orders\), maxPosition is 1/),
    ]);
  });

  it('refuses entries once the daily realised loss reaches the limit, and allows exits', async () => {
    h = new Harness({ balances: { USDT: '100000', BTC: '0' } });
    h.price(100);
    const plan: ((ctx: StrategyContext) => void)[] = [
      (ctx) => ctx.market('BUY', { quantity: '1' }),
      () => undefined,
      (ctx) => ctx.market('SELL', { quantity: '0.5' }), // realises a loss of ~5
      () => undefined,
      (ctx) => ctx.market('BUY', { quantity: '0.1' }), // entry: refused
      (ctx) => ctx.market('SELL', { quantity: '0.1' }), // exit: allowed
    ];
    let step = 0;
    await h.start([instance('a', strategy({ onTick: (ctx) => plan[step++]?.(ctx) }), { risk: { dailyLossLimit: 3 } })]);
    await h.tick(100);
    await h.tick(100);
    await h.tick(90);
    await h.tick(90);
    await h.tick(90);
    await h.tick(90);
    expect(h.venue.creates).toBe(3);
    expect(h.events('refused').map((e) => e.data.reason)).toEqual([matching(/daily loss limit reached/)]);
    expect(h.events('daily-loss-halt')).toHaveLength(1);
  });

  it("a restart resumes the position and the day's realised loss from the stored fold: the limit still holds", async () => {
    h = new Harness({ balances: { USDT: '100000', BTC: '0' } });
    h.price(100);
    const seen: string[] = [];
    const position = (ctx: StrategyContext) => {
      seen.push(`${ctx.position.quantity.toFixed()} at ${ctx.position.averagePrice.toFixed()}`);
    };
    const plan: ((ctx: StrategyContext) => void)[] = [
      (ctx) => ctx.market('BUY', { quantity: '1' }),
      (ctx) => ctx.market('SELL', { quantity: '0.5' }), // realises a loss of ~5, over the limit of 3
      position,
    ];
    let step = 0;
    const risk = { risk: { dailyLossLimit: 3 } };
    await h.start([instance('a', strategy({ onTick: (ctx) => plan[step++]?.(ctx) }), risk)]);
    await h.tick(100);
    await h.tick(90);
    await h.tick(90);
    // The restarted engine folds no fill again: it resumes what the journal stored with each fill.
    const folds = vi.spyOn(FillStore.prototype, 'forInstance');
    const again = strategy({
      onStart: position,
      onTick: (ctx) => {
        ctx.market('BUY', { quantity: '0.1' });
      },
    });
    await h.restart([instance('a', again, risk)]);
    expect(folds).not.toHaveBeenCalled();
    expect(seen).toHaveLength(2);
    expect(seen[1]).toBe(seen[0]);
    await h.tick(90);
    expect(h.events('refused').map((e) => e.data.reason)).toEqual([matching(/daily loss limit reached/)]);
    expect(h.venue.creates).toBe(2);
  });

  it("resets the daily loss limit at the venue clock's UTC midnight (the data's day), not the wall's", async () => {
    h = new Harness({ balances: { USDT: '100000', BTC: '0' } });
    // The data's clock, years from the wall's: 23:59:40 on 2 January 2024, a day the wall clock never sees.
    h.clock.time = Date.UTC(2024, 0, 2, 23, 59, 40);
    h.price(100);
    const plan: ((ctx: StrategyContext) => void)[] = [
      (ctx) => ctx.market('BUY', { quantity: '1' }),
      (ctx) => ctx.market('SELL', { quantity: '0.5' }), // realises a loss of ~5 at 23:59:50
      (ctx) => ctx.market('BUY', { quantity: '0.1' }), // 23:59:55: refused, the data's day is not over
      (ctx) => ctx.market('BUY', { quantity: '0.1' }), // 00:00:00 on 3 January in the data: a new day
    ];
    let step = 0;
    await h.start([instance('a', strategy({ onTick: (ctx) => plan[step++]?.(ctx) }), { risk: { dailyLossLimit: 3 } })]);
    await h.tick(100, 5_000);
    await h.tick(90, 5_000);
    await h.tick(90, 5_000);
    expect(h.events('refused').map((e) => e.data.reason)).toEqual([matching(/daily loss limit reached/)]);
    expect(new Date(h.clock.now()).toISOString()).toBe('2024-01-02T23:59:55.000Z');
    await h.tick(90, 5_000);
    expect(new Date(h.clock.now()).toISOString()).toBe('2024-01-03T00:00:00.000Z');
    expect(h.events('refused')).toHaveLength(1);
    expect(h.venue.creates).toBe(3);
  });

  it('refuses a SELL beyond the free base balance and a BUY beyond the free quote', async () => {
    h = new Harness({ balances: { USDT: '50', BTC: '0.001' } });
    h.price(100);
    await h.start([
      instance(
        'a',
        firstTick((ctx) => {
          ctx.limit('SELL', '101', '0.002');
          ctx.limit('BUY', '99', '0.6');
          ctx.limit('BUY', '99', '0.4'); // 39.6 + fee margin: fits
          ctx.limit('BUY', '99', '0.4'); // the previous one reserved the funds
        }),
      ),
    ]);
    await h.tick(100);
    expect(h.events('refused').map((e) => e.data.reason)).toEqual([
      matching(/insufficient BTC: order needs 0.002, free 0.001/),
      matching(/insufficient USDT/),
      matching(/insufficient USDT/),
    ]);
    expect(h.venue.creates).toBe(1);
  });

  it('refuses to start a strategy that requires cancel on a venue without it', async () => {
    h = new Harness({ canCancel: false });
    h.price(100);
    const needy = strategy({ requiresCancel: true });
    const ctxSeen: boolean[] = [];
    const other = strategy({ onStart: (ctx) => void ctxSeen.push(ctx.canCancel) });
    await h.start([instance('needy', needy), instance('other', other)]);
    expect(h.engine!.instances().map((i) => [i.name, i.status])).toEqual([
      ['needy', 'refused'],
      ['other', 'running'],
    ]);
    expect(h.events('start-refused')[0]?.data.reason).toMatch(/requires cancel/);
    expect(ctxSeen).toEqual([false]);
  });
});

describe('kill switch and circuit breaker', () => {
  it('stops new orders while the kill switch file exists, reporting each change once', async () => {
    h = new Harness();
    h.price(100);
    const file = join(h.dir, 'STOP');
    const { writeFileSync, rmSync } = await import('node:fs');
    await h.start([instance('a', strategy({ onTick: (ctx) => void ctx.limit('BUY', '50', '0.01') }))], {
      killSwitchFile: file,
    });
    writeFileSync(file, '');
    await h.tick(100);
    await h.tick(100);
    expect(h.venue.creates).toBe(0);
    rmSync(file);
    await h.tick(100);
    expect(h.venue.creates).toBe(1);
    expect(h.events('kill-switch').map((e) => e.data.on)).toEqual([true, false]);
    expect(h.events('refused')[0]?.data.reason).toMatch(/kill switch file .* exists/);
  });

  it('trips after repeated venue errors, refuses orders during the backoff, and recovers on success', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', strategy({ onTick: (ctx) => void ctx.limit('BUY', '50', '0.01') }))], {
      circuitBreaker: { threshold: 3, baseBackoffMs: 60_000 },
    });
    h.venue.outage = venueError('not-sent', 'E_NETWORK');
    await h.tick(100); // create fails (not sent)
    await h.tick(100);
    await h.tick(100); // third error: tripped
    expect(h.events('circuit-breaker').map((e) => e.data.state)).toEqual(['open']);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'NOT_SENT', rejectCode: 'E_NETWORK' });
    h.venue.outage = undefined;
    await h.tick(100); // still within the backoff: refused without sending
    expect(h.venue.creates).toBe(0);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(/circuit breaker open/);
    h.clock.advance(60_000);
    await h.engine!.refresh(); // a successful call after the backoff closes it
    await h.tick(100);
    expect(h.events('circuit-breaker').map((e) => e.data.state)).toEqual(['open', 'closed']);
    expect(h.venue.creates).toBe(1);
  });
});

describe('unknown outcomes (invariant 3)', () => {
  it('records a definite rejection with the exchange code, and the next intent goes out normally', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', strategy({ onTick: (ctx) => void ctx.limit('BUY', '50', '0.01') }))]);
    h.venue.createFault = { when: 'before-place', error: venueError('rejected', 'E_EXCHANGE', 6113) };
    await h.tick(100);
    await h.tick(100);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'REJECTED', rejectCode: '6113', matchMethod: undefined });
    expect(h.events('order-rejected')[0]?.data).toMatchObject({ localId: 'a-1', code: '6113' });
    expect(h.store.orders.get('a-2')).toMatchObject({ status: 'OPEN' });
    expect(h.venue.creates).toBe(1);
  });

  it('reconciles a create that was placed but whose answer was lost to the placed order: no duplicate', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', oneBuy('99.5'))]);
    h.venue.createFault = { when: 'after-place', error: venueError('outcome-unknown', 'E_OUTCOME_UNKNOWN') };
    await h.tick(100);
    // The poll right after the cycle matched it in open orders.
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'OPEN', matchMethod: 'open-orders' });
    await h.tick(100);
    await h.tick(100);
    expect(h.sim.openOrders('k')).toHaveLength(1);
    expect(h.store.orders.active()).toHaveLength(1);
    expect(h.events('order-unknown')).toHaveLength(1);
    expect(h.events('reconciled')[0]?.data).toMatchObject({ localId: 'a-1', via: 'open-orders' });
  });

  it('blocks the instance while unknown, then marks NOT_PLACED once the window passed with history readable', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', oneBuy('99.5'))], { reconcileWindowMs: 20_000 });
    h.venue.createFault = { when: 'before-place', error: venueError('temporary', 'E_TIMEOUT') };
    await h.tick(100);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'UNKNOWN', rejectCode: 'E_TIMEOUT' });
    h.venue.historyFails = true; // not consistently readable: no decision
    for (let i = 0; i < 6; i++) await h.tick(100);
    expect(h.store.orders.get('a-1')?.status).toBe('UNKNOWN');
    expect(h.venue.creates).toBe(0);
    h.venue.historyFails = false;
    await h.tick(100);
    await h.tick(100);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'NOT_PLACED', matchMethod: 'not-found' });
    await h.tick(100);
    expect(h.store.orders.get('a-2')).toMatchObject({ status: 'OPEN' });
    expect(h.sim.openOrders('k')).toHaveLength(1);
  });

  it('reconciles an unknown order that filled at once through order history, and records its fill', async () => {
    h = new Harness();
    h.price(100);
    const fills: FillView[] = [];
    let sent = false;
    await h.start([
      instance(
        'a',
        strategy({
          onTick(ctx) {
            if (!sent) ctx.market('BUY', { quantity: '0.02' });
            sent = true;
          },
          onFill: (_ctx, f) => void fills.push(f),
        }),
      ),
    ]);
    h.venue.createFault = { when: 'after-place', error: venueError('temporary', 'E_HTTP') };
    await h.tick(100);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'FILLED', matchMethod: 'history', filledQty: '0.02' });
    expect(fills).toHaveLength(1);
  });
});

describe('restart (invariant 2)', () => {
  it('reconciles, records fills made while down exactly once, delivers them once, and places no duplicate', async () => {
    h = new Harness();
    h.price(100);
    const fills: FillView[] = [];
    const grid = () =>
      strategy({
        onTick(ctx) {
          const tags = new Set(ctx.openOrders.map((o: OrderView) => o.tag));
          for (const [tag, price] of [
            ['b1', '99'],
            ['b2', '98'],
          ] as const)
            if (!tags.has(tag) && !(ctx.state[tag] === 'filled')) ctx.limit('BUY', price, '0.01', { tag });
        },
        onFill(ctx, f) {
          fills.push(f);
          ctx.state[f.order.tag as string] = 'filled';
        },
      });
    await h.start([instance('g', grid())]);
    await h.tick(100);
    expect(h.sim.openOrders('k')).toHaveLength(2);
    await h.engine!.stop();
    h.store.close();
    // While the bot is down, b1 fills.
    h.clock.advance(60_000);
    h.sim.onPrice('BTCUSDT', 98.9, h.clock.now());
    h.store = h.openStore();
    await h.start([instance('g', grid())]);
    expect(fills.map((f) => f.order.tag)).toEqual(['b1']);
    expect(h.store.fills.undelivered('g')).toEqual([]);
    await h.tick(99.5);
    await h.tick(99.5);
    // Restart again: nothing new is delivered, nothing duplicated.
    await h.restart([instance('g', grid())]);
    await h.tick(99.5);
    expect(fills).toHaveLength(1);
    expect(h.sim.openOrders('k')).toHaveLength(1);
    expect(h.sim.fills('k')).toHaveLength(1);
    expect(h.store.fills.forInstance('g')).toHaveLength(1);
    expect(JSON.parse(h.store.state.get('g')!)).toEqual({ b1: 'filled' });
  });

  it('resolves PENDING rows left by a crash: the one that reached the venue is matched, the other never placed', async () => {
    h = new Harness();
    h.price(100);
    const sentAt = h.clock.now();
    const pending = (seq: number, price: string) =>
      orderRow({ localId: `a-${seq}`, seq, price, quantity: '0.01', createdAt: sentAt, sentAt, updatedAt: sentAt });
    h.store.orders.insert(pending(1, '97'));
    h.store.orders.insert(pending(2, '96'));
    await h.venue.inner.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', price: '97', quantity: '0.01' });
    await h.start([instance('a', strategy({}))], { reconcileWindowMs: 10_000 });
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'OPEN', matchMethod: 'open-orders' });
    expect(h.store.orders.get('a-2')).toMatchObject({ status: 'UNKNOWN', rejectCode: 'E_INTERRUPTED' });
    await h.tick(100, 6_000);
    await h.tick(100, 6_000); // window passed: first clean miss
    expect(h.store.orders.get('a-2')?.status).toBe('UNKNOWN');
    await h.tick(100, 6_000); // confirmed
    expect(h.store.orders.get('a-2')).toMatchObject({ status: 'NOT_PLACED' });
    expect(h.events('external-orders')).toEqual([]);
  });

  it('delivers after a restart a fill whose onFill threw (the instance was paused, the fill kept undelivered)', async () => {
    h = new Harness();
    h.price(100);
    const delivered: string[] = [];
    const buggy = strategy({
      onTick: (ctx) => {
        if (ctx.openOrders.length === 0 && ctx.position.quantity.isZero()) ctx.limit('BUY', '99', '0.01');
      },
      onFill: () => {
        throw new Error('bug in onFill');
      },
    });
    await h.start([instance('a', buggy)]);
    await h.tick(100);
    await h.tick(98.9);
    expect(h.engine!.instances()[0]).toMatchObject({
      status: 'paused',
      reason: matching(/onFill threw: Error: bug in onFill/),
    });
    expect(h.store.fills.undelivered('a')).toHaveLength(1);
    const fixed = strategy({ onFill: (_ctx, f) => void delivered.push(f.fillId) });
    await h.restart([instance('a', fixed)]);
    await h.restart([instance('a', fixed)]);
    expect(delivered).toHaveLength(1);
  });
});

describe('instances and adoption', () => {
  it('adopts open orders nobody journaled as external, never handing them to a strategy', async () => {
    h = new Harness();
    h.price(100);
    const external = await h.venue.inner.createOrder({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'LIMIT',
      price: '101',
      quantity: '0.5',
    });
    const seen: number[] = [];
    const fills: FillView[] = [];
    await h.start([
      instance(
        'a',
        strategy({ onTick: (ctx) => void seen.push(ctx.openOrders.length), onFill: (_c, f) => void fills.push(f) }),
      ),
    ]);
    const row = h.store.orders.byExchangeId(external.displayingId);
    expect(row).toMatchObject({ external: true, matchMethod: 'adopted', instance: undefined, status: 'OPEN' });
    await h.tick(101.5); // the external order fills
    await h.tick(101.5);
    expect(seen).toEqual([0, 0]);
    expect(fills).toEqual([]);
    expect(h.store.orders.byExchangeId(external.displayingId)).toMatchObject({ status: 'FILLED', filledQty: '0.5' });
    // Told at start, and once more when it is gone (filled).
    expect(h.events('external-orders').map((e) => e.data)).toEqual([
      { total: 1, symbols: { BTCUSDT: 1 }, journaled: 1, untracked: 0 },
      { total: 0, symbols: {}, journaled: 0, untracked: 0 },
    ]);
  });

  it('pauses a throwing strategy with its reason while another instance keeps trading', async () => {
    h = new Harness();
    h.price(100);
    let calls = 0;
    const broken = strategy({
      onTick() {
        calls++;
        throw new Error('division by zero');
      },
    });
    const placed: number[] = [];
    const healthy = strategy({
      onTick(ctx) {
        placed.push(ctx.openOrders.length);
        ctx.limit('BUY', '50', '0.01');
      },
    });
    await h.start([instance('broken', broken), instance('healthy', healthy)]);
    await h.tick(100);
    await h.tick(100);
    expect(calls).toBe(1);
    expect(placed).toEqual([0, 1]);
    expect(h.venue.creates).toBe(2);
    const status = readStatus(h.store, { now: h.clock.now(), prices: new Map([['BTCUSDT', '100']]) });
    expect(status.instances.map((i) => [i.instance, i.state, i.reason])).toEqual([
      ['broken', 'paused', 'onTick threw: Error: division by zero'],
      ['healthy', 'running', undefined],
    ]);
    expect(status.instances[1]!.openOrders).toHaveLength(2);
  });

  it('cancels only its own orders', async () => {
    h = new Harness();
    h.price(100);
    let target: string | undefined;
    let step = 0;
    const owner = strategy({
      onTick(ctx) {
        if (step === 0) ctx.limit('BUY', '90', '0.01');
        else if (step === 2) ctx.cancel(ctx.openOrders[0]!);
        target = ctx.openOrders[0]?.localId ?? target;
      },
    });
    const thief = strategy({
      onTick(ctx) {
        if (step++ === 1 && target) ctx.cancel(target);
      },
    });
    await h.start([instance('owner', owner), instance('thief', thief)]);
    await h.tick(100);
    await h.tick(100);
    expect(h.events('refused')[0]?.data.reason).toMatch(/not an order of this instance/);
    expect(h.sim.openOrders('k')).toHaveLength(1);
    await h.tick(100);
    expect(h.sim.openOrders('k')).toHaveLength(0);
    expect(h.store.orders.get('owner-1')?.status).toBe('CANCELED');
  });
});

describe('fills without trade history', () => {
  it('falls back to executedQty deltas keyed <orderId>:<cumulativeQty>, never mixed with trades', async () => {
    h = new Harness();
    h.price(100);
    const fills: FillView[] = [];
    await h.start([instance('a', oneBuy('99.5', '0.01', fills))], { tradeHistoryFallbackAfter: 2 });
    await h.tick(100);
    h.venue.tradesFail = true;
    await h.tick(99.4);
    expect(fills).toHaveLength(0); // one failure: wait
    await h.tick(99.4);
    expect(fills).toHaveLength(1);
    const exchangeId = h.store.orders.get('a-1')!.exchangeId!;
    expect(fills[0]!.fillId).toBe(`${exchangeId}:0.01`);
    expect(fills[0]!.price.toFixed()).toBe('99.5');
    h.venue.tradesFail = false;
    await h.tick(99.4);
    expect(h.store.fills.forOrder('a-1')).toHaveLength(1);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'FILLED', fillSource: 'delta' });
  });

  it('an order closed past the grace is not filled from its delta on one failed trade read: the next read brings the trade', async () => {
    h = new Harness();
    h.price(100);
    const fills: FillView[] = [];
    await h.start([instance('a', oneBuy('99.5', '0.01', fills))], { tradeHistoryFallbackAfter: 3, fillGraceMs: 1000 });
    await h.tick(100);
    h.venue.tradesFail = true;
    await h.tick(99.4);
    h.clock.advance(60_000);
    await h.tick(99.4);
    expect(fills).toHaveLength(0);
    h.venue.tradesFail = false;
    await h.tick(99.4);
    expect(fills).toHaveLength(1);
    expect(fills[0]!.fillId).not.toContain(':');
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'FILLED', fillSource: 'trades' });
  });

  it('tells once an incident that fills come from executedQty deltas (a flap is the same one), again for the next; each fill once', async () => {
    const log = captureLogger();
    h = new Harness({ sim: { participationRate: '0.5' } });
    h.price(100);
    let placed = 0;
    const twoBuys = strategy({
      onTick(ctx) {
        if (placed < 2 && ctx.openOrders.length === 0) ctx.limit('BUY', '99.9', '1', { tag: `entry-${++placed}` });
      },
    });
    await h.start([instance('a', twoBuys)], { logger: log.logger, tradeHistoryFallbackAfter: 2 });
    await h.tick(100); // a-1 rests at 99.9
    const told = () => log.messages(/fills now come from executedQty deltas/);
    const sources = (localId: string) => h.store.fills.forOrder(localId).map((f) => f.source);
    // The resting BUY fills `qty` on the venue (half the tick's volume), then one orders poll.
    const fill = async (qty: number) => {
      h.clock.advance(5_000);
      h.sim.onPrice('BTCUSDT', 99.8, h.clock.now(), qty * 2);
      await h.engine!.pollOrders();
    };
    /** The order ends FILLED, its recorded fills adding up to what the venue executed for it, the first from its trade. */
    const filledAsExecuted = (localId: string) => {
      const row = h.store.orders.get(localId)!;
      const executed = h.sim
        .fills('k')
        .filter((f) => String(f.orderId) === row.exchangeId)
        .reduce((sum, f) => sum.plus(f.baseQty), dec(0));
      const recorded = h.store.fills.forOrder(localId).reduce((sum, f) => sum.plus(f.qty), dec(0));
      expect(executed.toFixed()).toBe('1');
      expect(recorded.toFixed()).toBe('1');
      expect(row).toMatchObject({ status: 'FILLED', filledQty: '1', execQty: '1', fillSource: 'delta' });
      expect(sources(localId)[0]).toBe('trade');
    };

    await fill(0.01); // from its trade
    h.venue.tradesFail = true;
    await fill(0.01); // one failure: the fill waits for its trade
    expect(sources('a-1')).toEqual(['trade']);
    expect(told()).toEqual([]);
    // The second failure and six more, the order filling on each poll: a delta fill a poll, one line.
    for (let i = 0; i < 7; i++) await fill(0.01);
    expect(sources('a-1')).toEqual(['trade', ...Array<string>(7).fill('delta')]);
    expect(told()).toEqual(['trade history still unavailable for BTCUSDT: fills now come from executedQty deltas']);
    // A flap: one read works within the quiet time (its trade is not mixed into an order filled from deltas),
    // then two fail again. The same incident: not told again (before the quiet time, nothing has ended).
    h.venue.tradesFail = false;
    const asked = h.venue.tradesAsked.length;
    await fill(0.01);
    expect(h.venue.tradesAsked).toHaveLength(asked + 1);
    h.venue.tradesFail = true;
    await fill(0.01);
    await fill(0.01);
    expect(sources('a-1')).toEqual(['trade', ...Array<string>(10).fill('delta')]);
    expect(told()).toHaveLength(1);
    expect(log.messages(/trade history BTCUSDT recovered/)).toEqual([]);
    // Trade history answers again past the quiet time: the incident ends; the rest of the order, and the
    // trades of what deltas recorded, are not counted twice.
    h.venue.tradesFail = false;
    h.clock.advance(INCIDENT_QUIET_MS);
    await fill(1);
    filledAsExecuted('a-1');
    expect(log.messages(/trade history BTCUSDT recovered/)).toHaveLength(1);
    // A new incident on the next order: told again, once.
    await h.tick(100);
    expect(h.store.orders.get('a-2')?.status).toBe('OPEN');
    await fill(0.01);
    h.venue.tradesFail = true;
    for (let i = 0; i < 4; i++) await fill(0.01);
    expect(told()).toHaveLength(2);
    h.venue.tradesFail = false;
    h.clock.advance(INCIDENT_QUIET_MS);
    await fill(1);
    filledAsExecuted('a-2');
    expect(told()).toHaveLength(2);
  });
});

describe('operator-facing behaviour', () => {
  it('stops trading on an authentication failure and tells the operator once', async () => {
    h = new Harness();
    h.price(100);
    await h.start([instance('a', strategy({ onTick: (ctx) => void ctx.limit('BUY', '50', '0.01') }))]);
    h.venue.createFault = { when: 'before-place', error: venueError('authentication', 'E_AUTH') };
    await h.tick(100);
    await h.tick(100);
    expect(h.store.orders.get('a-1')).toMatchObject({ status: 'REJECTED', rejectCode: 'E_AUTH' });
    expect(h.events('auth-failed')).toHaveLength(1);
    expect(h.events('refused')[0]?.data.reason).toMatch(/trading stopped: authentication failed/);
    expect(h.venue.creates).toBe(0);
    expect(h.engine!.brakes().halted).toMatch(/authentication failed/);
  });

  it('runs async hooks, saves nested state changes at the next refresh, and reports PnL in status', async () => {
    h = new Harness({ balances: { USDT: '100000', BTC: '0' } });
    h.price(100);
    let step = 0;
    const s = strategy({
      async onTick(ctx) {
        await Promise.resolve();
        if (step === 0) ctx.market('BUY', { quantity: '1' });
        if (step === 2) ctx.market('SELL', { quantity: '0.5' });
        step++;
        ((ctx.state.seen ??= { n: 0 }) as { n: number }).n = step; // nested: not a top-level write after the first
      },
    });
    await h.start([instance('a', s)]);
    await h.tick(100);
    await h.tick(100);
    await h.tick(110);
    await h.tick(110);
    expect(JSON.parse(h.store.state.get('a')!)).toEqual({ seen: { n: 3 } });
    await h.engine!.refresh();
    expect(JSON.parse(h.store.state.get('a')!)).toEqual({ seen: { n: 4 } });
    const status = readStatus(h.store, { now: h.clock.now(), prices: new Map([['BTCUSDT', '120']]) });
    const a = status.instances[0]!;
    // Bought 1 at 100 (fee 0.001 BTC): holds 0.999 at ~100.1001; sold 0.5 at 110, fee 0.055 USDT.
    expect(a.state).toBe('running');
    expect(a.todaysFills).toHaveLength(2);
    expect(a.position.quantity.toFixed()).toBe('0.499');
    expect(a.realisedPnl.toDecimalPlaces(6).toFixed()).toBe('4.89495');
    expect(a.unrealisedPnl?.toDecimalPlaces(6).toFixed()).toBe('9.93005');
    expect(a.realisedToday.eq(a.realisedPnl)).toBe(true);
  });
});
