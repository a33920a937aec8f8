/**
 * The orders poll's requests: the open orders of every pair with working orders come in one read, so a
 * many-pair account's poll fits the exchange's request budget (bench:live-pairs measured one read a pair: 4
 * requests a second at 20 pairs, the whole budget at 100). A failed read polls no pair and names them all.
 * Likewise order history and trade history: one read of the account's (no `symbol`) for every pair whose orders
 * filled in the poll, not one each (bench:live-pairs at 100 pairs: 1.8 a second of each, the market watch
 * starved); a shared read that could not complete falls back to each pair's own, and no fill is recorded twice.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import type { Logger } from '../../src/ops/logger.js';
import { INCIDENT_QUIET_MS } from '../../src/ops/incident.js';
import { captureLogger } from '../support/capture-logger.js';
import { LyingVenue } from '../support/lying-venue.js';
import { firstTick, Harness, instance, strategy, venueError } from './harness.js';

const restingBuy = (price: string) => firstTick((ctx) => ctx.limit('BUY', price, '0.01', { tag: 'rest' }));

async function twoPairs(): Promise<Harness> {
  const h = new Harness();
  h.price(100);
  h.price(50, 'ETHUSDT');
  await h.start([instance('btc', restingBuy('90')), instance('eth', restingBuy('40'), { symbol: 'ETHUSDT' })]);
  await h.marketTick(100);
  await h.marketTick(50, 0, 'ETHUSDT');
  expect(
    h.store.orders
      .active()
      .map((o) => o.symbol)
      .sort(),
  ).toEqual(['BTCUSDT', 'ETHUSDT']);
  return h;
}

describe('the orders poll', () => {
  it('reads the open orders of every pair with working orders in one request', async () => {
    const h = await twoPairs();
    h.venue.openOrdersAsked.length = 0;
    await h.engine!.pollOrders();
    expect(h.venue.openOrdersAsked).toEqual([undefined]);
    // Both orders still known as working after the poll: the one read served both pairs.
    expect(h.store.orders.active()).toHaveLength(2);
  });

  it('polls no pair when that read fails, and names them all', async () => {
    const h = await twoPairs();
    h.venue.outage = new Error('connection reset');
    await expect(h.engine!.pollOrders()).rejects.toThrow(/orders poll of BTCUSDT, ETHUSDT failed: .*connection reset/);
    h.venue.outage = undefined;
    await h.engine!.pollOrders();
    expect(h.store.orders.active()).toHaveLength(2);
  });
});

const USDT = DEFAULT_ASSETS.find((a) => a.code === 'USDT')!;
const BASES = Array.from({ length: 6 }, (_, i) => ({ id: 100 + i, code: `Q${String.fromCharCode(65 + i)}` }));
const PAIRS = BASES.map((base) => simPairConfig(base, USDT));
const SYMBOLS = PAIRS.map((p) => p.symbol);
const names = SYMBOLS.map((_, i) => `p${i}`);
const specs = () => SYMBOLS.map((symbol, i) => instance(names[i]!, restingBuy('90'), { symbol }));

/** The six pairs at 100 on an account of USDT alone, nothing started (`participationRate`: the sim's). */
function sixPairsAt100(participationRate?: string): Harness {
  const h = new Harness({
    balances: { USDT: '1000000' },
    sim: { assets: [...DEFAULT_ASSETS, ...BASES], pairs: PAIRS, participationRate },
  });
  for (const symbol of SYMBOLS) h.price(100, symbol);
  return h;
}

/** Six pairs, each with a resting BUY at 90, all filled on the venue (price 89) and not yet polled. */
async function sixPairsFilled(logger?: Logger): Promise<Harness> {
  const h = new Harness({
    balances: { USDT: '1000000', BTC: '10' },
    sim: { assets: [...DEFAULT_ASSETS, ...BASES], pairs: [...PAIRS, ...defaultPairs()] },
  });
  for (const symbol of SYMBOLS) h.price(100, symbol);
  h.price(100);
  await h.start(specs(), logger === undefined ? {} : { logger });
  for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
  await h.engine!.pollOrders();
  expect(h.store.orders.active()).toHaveLength(SYMBOLS.length);
  h.clock.advance(5_000);
  for (const symbol of SYMBOLS) h.sim.onPrice(symbol, 89, h.clock.now());
  h.venue.historyAsked.length = 0;
  h.venue.tradesAsked.length = 0;
  return h;
}

/** The built-in BTCUSDT, for the other activity on the account. */
function defaultPairs() {
  const btc = DEFAULT_ASSETS.find((a) => a.code === 'BTC')!;
  return [simPairConfig(btc, USDT)];
}

/** A record of the first pair that the reader refuses: every read that would hold it fails. */
const POISONED = SYMBOLS[0]!;
const holdsPoison = (q: { symbol?: string }) => q.symbol === undefined || q.symbol === POISONED;

/** The five other pairs have their one fill, from trades, FILLED; the poisoned pair's order is still working. */
function expectOthersFilledFromTrades(h: Harness): void {
  names.forEach((name, i) => {
    const fills = h.store.fills.forInstance(name);
    if (SYMBOLS[i] === POISONED) expect(fills, name).toEqual([]);
    else
      expect(
        fills.map((f) => f.source),
        name,
      ).toEqual(['trade']);
  });
  expect(h.store.orders.active().map((o) => o.symbol)).toEqual([POISONED]);
}

/** Each instance's fills: exactly one each, of its own order, FILLED. */
function expectOneFillEach(h: Harness): void {
  for (const name of names) {
    const fills = h.store.fills.forInstance(name);
    expect(fills, name).toHaveLength(1);
    expect(h.store.orders.get(fills[0]!.orderLocalId)?.status).toBe('FILLED');
  }
  expect(h.store.orders.active()).toEqual([]);
}

describe('order and trade history in a many-pair poll', () => {
  it('reads each once for the account, not once a pair, and records every fill', async () => {
    const h = await sixPairsFilled();
    await h.engine!.pollOrders();
    expectOneFillEach(h);
    // One page each, without a symbol: the account's history, dispatched to its pairs.
    expect(h.venue.historyAsked.map((q) => q.symbol)).toEqual([undefined]);
    expect(h.venue.tradesAsked.map((q) => q.symbol)).toEqual([undefined]);
    // From the oldest order any pair looks up, on the venue's clock less the skew (the per-pair rule).
    const oldest = Math.min(...h.store.orders.all().map((o) => o.createdAt));
    expect(Date.parse(h.venue.historyAsked[0]!.timeFrom!)).toBeLessThanOrEqual(oldest - 30_000);
  });

  it('falls back to each pair its own read when the shared one stops at its bound; fills once across restarts', async () => {
    const h = await sixPairsFilled();
    // After the fills, 700 orders and trades of another owner on BTCUSDT: newer than every fill, more than the
    // shared reads' bound (a page a pair: 600), so neither shared read reaches the pairs' own records.
    for (let i = 0; i < 700; i++) {
      h.clock.advance(10);
      await h.venue.inner.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.0001' });
    }
    // The first poll learns the orders filled, but trade history fails: the fills stay owed.
    h.venue.tradesFail = true;
    await h.engine!.pollOrders();
    expect(h.venue.historyAsked.filter((q) => q.symbol === undefined)).toHaveLength(SYMBOLS.length);
    expect(new Set(h.venue.historyAsked.flatMap((q) => q.symbol ?? []))).toEqual(new Set(SYMBOLS));
    for (const name of names) expect(h.store.fills.forInstance(name)).toEqual([]);
    // A restart: its reconciliation records each fill, from the pairs' own trade reads past the shared one's bound.
    h.venue.tradesFail = false;
    h.venue.tradesAsked.length = 0;
    await h.restart(specs());
    expectOneFillEach(h);
    expect(h.venue.tradesAsked.filter((q) => q.symbol === undefined)).toHaveLength(SYMBOLS.length);
    expect(new Set(h.venue.tradesAsked.flatMap((q) => q.symbol ?? []))).toEqual(new Set(SYMBOLS));
    // Polls and another restart find the same trades again: nothing is recorded twice.
    await h.engine!.pollOrders();
    await h.restart(specs());
    await h.engine!.pollOrders();
    expectOneFillEach(h);
  });

  it("a shared read that stops short: the pair's own read records its trades in the venue's time order", async () => {
    const h = new Harness({
      balances: { USDT: '1000000', BTC: '10', QA: '1' },
      sim: { assets: [...DEFAULT_ASSETS, ...BASES], pairs: [...PAIRS, ...defaultPairs()] },
    });
    for (const symbol of SYMBOLS) h.price(100, symbol);
    h.price(100);
    // p0 rests a BUY at 90 and a SELL at 110 (of base it holds); p1 a BUY at 90.
    const both = firstTick((ctx) => {
      ctx.limit('BUY', '90', '0.01', { tag: 'buy' });
      ctx.limit('SELL', '110', '0.01', { tag: 'sell' });
    });
    await h.start([
      instance('p0', both, { symbol: SYMBOLS[0] }),
      instance('p1', restingBuy('90'), { symbol: SYMBOLS[1] }),
    ]);
    for (const symbol of SYMBOLS.slice(0, 2)) await h.marketTick(100, 0, symbol);
    await h.engine!.pollOrders();
    expect(h.store.orders.active()).toHaveLength(3);
    // Unpolled: both BUYs fill, then 700 trades of another owner, then p0's SELL: the newest of all.
    h.clock.advance(5_000);
    for (const symbol of SYMBOLS.slice(0, 2)) h.sim.onPrice(symbol, 89, h.clock.now());
    for (let i = 0; i < 700; i++) {
      h.clock.advance(10);
      await h.venue.inner.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.0001' });
    }
    h.clock.advance(5_000);
    h.sim.onPrice(SYMBOLS[0]!, 111, h.clock.now());
    await h.engine!.pollOrders();
    // The shared read (two pages) held p0's SELL and not its BUY: p0's fills are folded BUY then SELL, as traded
    // (before: the SELL from the shared read first, then the BUY from p0's own read).
    expect(h.store.fills.forInstance('p0').map((f) => f.side)).toEqual(['BUY', 'SELL']);
    expect(h.store.fills.forInstance('p1').map((f) => f.side)).toEqual(['BUY']);
    expect(h.store.orders.active()).toEqual([]);
  });

  it('reads trades from the last complete shared read on, not from an order that rested for long', async () => {
    const h = sixPairsAt100();
    const ladder = () =>
      firstTick((ctx) => {
        ctx.limit('BUY', '90', '0.01', { tag: 'near' });
        ctx.limit('BUY', '80', '0.01', { tag: 'far' });
      });
    await h.start(SYMBOLS.map((symbol, i) => instance(names[i]!, ladder(), { symbol })));
    for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
    const placed = h.clock.now();
    // An hour later the near levels fill; the first shared trade read goes back to the orders (no trade yet).
    h.clock.advance(3_600_000);
    for (const symbol of SYMBOLS) h.sim.onPrice(symbol, 89, h.clock.now());
    const firstRead = h.clock.now();
    await h.engine!.pollOrders();
    expect(Date.parse(h.venue.tradesAsked.at(-1)!.timeFrom!)).toBe(placed - 30_000);
    // Then the far levels, resting since the start, fill too: each pair's need goes back an hour.
    h.clock.advance(5_000);
    for (const symbol of SYMBOLS) h.sim.onPrice(symbol, 79, h.clock.now());
    h.venue.tradesAsked.length = 0;
    await h.engine!.pollOrders();
    // One read, from the first read's start less the lookback (60 s) and the skew (30 s): not an hour back.
    expect(h.venue.tradesAsked).toHaveLength(1);
    expect(h.venue.tradesAsked[0]!.symbol).toBeUndefined();
    expect(Date.parse(h.venue.tradesAsked[0]!.timeFrom!)).toBe(firstRead - 90_000);
    for (const name of names) expect(h.store.fills.forInstance(name).map((f) => f.price)).toEqual(['90', '80']);
    expect(h.store.orders.active()).toEqual([]);
  });

  it('a pair whose create outcome is unknown reads its own order history, not the shared read', async () => {
    const h = sixPairsAt100();
    await h.start(specs());
    // The first pair's order is placed, but its answer is lost: its outcome is unknown until history says.
    h.venue.createFault = { when: 'after-place', error: venueError('outcome-unknown', 'E_OUTCOME_UNKNOWN') };
    for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
    h.clock.advance(5_000);
    for (const symbol of SYMBOLS) h.sim.onPrice(symbol, 89, h.clock.now());
    h.venue.historyAsked.length = 0;
    await h.engine!.pollOrders();
    // The shared read for the five others, the first pair's own (before: the shared read served it too).
    expect(h.venue.historyAsked.map((q) => q.symbol)).toEqual([undefined, SYMBOLS[0]]);
    expectOneFillEach(h);
    expect(h.venue.creates).toBe(SYMBOLS.length);
  });

  it('a pair is read from its own need, not from a window set by shared reads it was not in', async () => {
    const h = sixPairsAt100();
    await h.start(specs());
    for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
    const placed = h.clock.now();
    // An hour later the first three pairs fill: their shared read is complete and sets their window.
    h.clock.advance(3_600_000);
    const [first, later] = [SYMBOLS.slice(0, 3), SYMBOLS.slice(3)];
    for (const symbol of first) h.sim.onPrice(symbol, 89, h.clock.now());
    await h.engine!.pollOrders();
    expect(Date.parse(h.venue.tradesAsked.at(-1)!.timeFrom!)).toBe(placed - 30_000);
    // Then the other three, resting as long, fill: none was in that read, so none has a window yet. Before,
    // one window for the account started their read at the first read's start less 90 s, trusting a read
    // that never looked for their trades.
    h.clock.advance(5_000);
    for (const symbol of later) h.sim.onPrice(symbol, 89, h.clock.now());
    h.venue.tradesAsked.length = 0;
    await h.engine!.pollOrders();
    expect(h.venue.tradesAsked.map((q) => q.symbol)).toEqual([undefined]);
    expect(Date.parse(h.venue.tradesAsked[0]!.timeFrom!)).toBe(placed - 30_000);
    expectOneFillEach(h);
  });

  it("a shared trade read that keeps failing: every pair's fills come from executedQty, once, told once", async () => {
    const log = captureLogger();
    const h = await sixPairsFilled(log.logger);
    h.venue.tradesFail = true;
    for (let i = 0; i < 3; i++) {
      h.clock.advance(5_000);
      await h.engine!.pollOrders();
    }
    // The shared read, then each pair its own (failing too), then the shared read again: each failure counted
    // for every pair that needed the read.
    expect(h.venue.tradesAsked.map((q) => q.symbol)).toEqual([undefined, ...SYMBOLS, undefined]);
    expectOneFillEach(h);
    for (const name of names) expect(h.store.fills.forInstance(name)[0]!.source).toBe('delta');
    // One line for the six pairs (before: a line a pair, a hundred at once on a hundred pairs).
    expect(log.messages(/fills now come from executedQty deltas/)).toEqual([
      'trade history still unavailable for 6 pairs: fills now come from executedQty deltas',
    ]);
  });

  it('a shared trade read failing in two incidents: each told once in one line naming every pair, never per poll', async () => {
    const log = captureLogger();
    const h = sixPairsAt100();
    // Each pair keeps one BUY at 90 working; the breaker (not this test's subject) never stops the next one.
    const keepOne = strategy({
      onTick(ctx) {
        if (ctx.openOrders.length === 0) ctx.limit('BUY', '90', '0.01', { tag: 'rest' });
      },
    });
    await h.start(
      SYMBOLS.map((symbol, i) => instance(names[i]!, keepOne, { symbol })),
      { logger: log.logger, circuitBreaker: { threshold: 1_000 } },
    );
    const told = () =>
      log.lines
        .map((l) => JSON.parse(l) as { msg: string; symbols?: string[] })
        .filter((l) => /fills now come from executedQty deltas/.test(l.msg));
    const sources = () => names.map((name) => h.store.fills.forInstance(name).map((f) => f.source));
    // A round: every pair places its BUY, all fill on the venue, then `polls` orders polls 5 s apart.
    const round = async (polls: number) => {
      for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
      await h.engine!.pollOrders();
      h.clock.advance(5_000);
      for (const symbol of SYMBOLS) h.sim.onPrice(symbol, 89, h.clock.now());
      for (let i = 0; i < polls; i++) {
        h.clock.advance(5_000);
        await h.engine!.pollOrders();
      }
      expect(h.store.orders.active()).toEqual([]);
    };

    // Every trade read fails: from the third failure each pair's fill comes from its delta; one line for all.
    h.venue.tradesFail = true;
    await round(6);
    for (const s of sources()) expect(s).toEqual(['delta']);
    expect(told().map((l) => [l.msg, [...l.symbols!].sort()])).toEqual([
      ['trade history still unavailable for 6 pairs: fills now come from executedQty deltas', SYMBOLS],
    ]);
    // Still failing, the next orders fill: the same incident, not told again.
    await round(6);
    for (const s of sources()) expect(s).toEqual(['delta', 'delta']);
    expect(told()).toHaveLength(1);
    // Trade history answers past the quiet time: fills from trades again, each pair's incident over.
    h.venue.tradesFail = false;
    h.clock.advance(INCIDENT_QUIET_MS);
    await round(2);
    for (const s of sources()) expect(s).toEqual(['delta', 'delta', 'trade']);
    for (const symbol of SYMBOLS)
      expect(log.messages(new RegExp(`^trade history ${symbol} recovered`))).toHaveLength(1);
    // A new incident: told again, once, in one line naming every pair.
    h.venue.tradesFail = true;
    await round(6);
    for (const s of sources()) expect(s).toEqual(['delta', 'delta', 'trade', 'delta']);
    expect(told().map((l) => [...l.symbols!].sort())).toEqual([SYMBOLS, SYMBOLS]);
    // Every order FILLED, its 0.01 recorded once: what the venue executed for each pair.
    for (const row of h.store.orders.all()) expect(row).toMatchObject({ status: 'FILLED', filledQty: '0.01' });
    for (const [i, symbol] of SYMBOLS.entries()) {
      const executed = h.sim.fills('k').filter((f) => f.symbol === symbol);
      expect(executed, symbol).toHaveLength(4);
      expect(h.store.fills.forInstance(names[i]!).map((f) => f.qty)).toEqual(executed.map((f) => f.baseQty.toFixed()));
    }
  });

  it.each([
    ['order history', 'historyFails'],
    ['trade history', 'tradesFail'],
  ] as const)('%s: a pair whose own reads failed recovers when a shared read serves it', async (what, fault) => {
    const log = captureLogger();
    const h = await sixPairsFilled(log.logger);
    // Every read fails: the shared read, then each pair's own.
    h.venue[fault] = true;
    await h.engine!.pollOrders();
    h.clock.advance(5_000);
    await h.engine!.pollOrders();
    expect(log.messages(new RegExp(`^${what} ${POISONED} failing`))).toHaveLength(1);
    // The venue answers again; past the incidents' quiet time, the shared read serves every pair.
    h.venue[fault] = false;
    h.clock.advance(INCIDENT_QUIET_MS + 1_000);
    await h.engine!.pollOrders();
    expectOneFillEach(h);
    // Before, a pair served by the shared read never closed its own incident.
    for (const symbol of SYMBOLS) expect(log.messages(new RegExp(`^${what} ${symbol} recovered`))).toHaveLength(1);
    expect(log.messages(new RegExp(`^${what} \\(all pairs\\) recovered`))).toHaveLength(1);
    // The shared read's lines say how many pairs it was for, never a symbol '*'.
    const lines = log.lines.map((l) => JSON.parse(l) as { symbol?: string });
    expect(lines.filter((l) => l.symbol === '*')).toEqual([]);
  });

  it('order history: a shared read that fails stops only the pair that fails it, from the next poll on', async () => {
    const h = await sixPairsFilled();
    h.venue.historyFails = holdsPoison;
    await h.engine!.pollOrders();
    // The failed shared read leaves the orders as they are for this poll.
    expect(h.store.orders.active()).toHaveLength(SYMBOLS.length);
    h.clock.advance(5_000);
    await h.engine!.pollOrders();
    // Before, every poll tried the shared read again and no pair ever learnt its order had filled. Now each
    // pair reads its own (the poisoned one also the narrow look-up around its order, failing too).
    expect(h.venue.historyAsked.map((q) => q.symbol)).toEqual([undefined, POISONED, POISONED, ...SYMBOLS.slice(1)]);
    expectOthersFilledFromTrades(h);
    // Once the record can be read, the last pair catches up.
    h.venue.historyFails = false;
    h.clock.advance(5_000);
    await h.engine!.pollOrders();
    expectOneFillEach(h);
  });

  it('trade history: a shared read that fails stops only the pair that fails it, from the next poll on', async () => {
    const h = await sixPairsFilled();
    h.venue.tradesFail = holdsPoison;
    await h.engine!.pollOrders();
    h.clock.advance(5_000);
    await h.engine!.pollOrders();
    // Before, every poll tried the shared read again; after three, every pair's fills came from deltas.
    expect(h.venue.tradesAsked.map((q) => q.symbol)).toEqual([undefined, ...SYMBOLS]);
    expectOthersFilledFromTrades(h);
  });

  it("open orders without executedQty: each pair's fills from the account's trade history, each trade once", async () => {
    const h = sixPairsAt100('0.5');
    const venue = new LyingVenue(h.venue);
    // The venue's open orders never say what executed (the figure missing, not 0); history and trades are honest.
    venue.order = (r, source) => (source === 'open-orders' ? { ...r, executedQty: undefined } : r);
    // The second pair's first trade comes late: absent from the first read of trade history after it.
    let late = true;
    venue.trades = (trades) => (late ? trades.filter((t) => t.symbol !== SYMBOLS[1]) : trades);
    await h.start(specs(), { venue });
    for (const symbol of SYMBOLS) await h.marketTick(100, 0, symbol);
    await h.engine!.pollOrders();
    const rows = () => names.map((name) => h.store.orders.get(`${name}-1`)!);
    const poll = async (fills: readonly string[], volume: number) => {
      h.clock.advance(5_000);
      for (const symbol of fills) h.sim.onPrice(symbol, 89, h.clock.now(), volume);
      h.venue.tradesAsked.length = 0;
      await h.engine!.pollOrders();
      return h.venue.tradesAsked.map((q) => q.symbol);
    };
    const SHARED = [undefined]; // one read of the account's trades, never one a pair

    // Every pair fills 0.003 of its 0.01, seen only in trades: recorded while the orders work.
    expect(await poll(SYMBOLS, 0.006)).toEqual(SHARED);
    rows().forEach((row, i) =>
      expect(row, SYMBOLS[i]).toMatchObject(
        i === 1
          ? { status: 'PARTIALLY_FILLED', filledQty: '0', execQty: '0' }
          : { status: 'PARTIALLY_FILLED', filledQty: '0.003', execQty: '0.003', fillSource: 'trades' },
      ),
    );
    // The next poll, nothing new on the venue: the late trade is recorded, nothing else again.
    late = false;
    expect(await poll([], 0)).toEqual(SHARED);
    for (const row of rows()) expect(row).toMatchObject({ status: 'PARTIALLY_FILLED', filledQty: '0.003' });
    // Three pairs fill 0.004 more, then every pair the rest (gone from open orders: FILLED in order history).
    expect(await poll(SYMBOLS.slice(0, 3), 0.008)).toEqual(SHARED);
    expect(await poll(SYMBOLS, 1)).toEqual(SHARED);
    // Nothing works or is owed any more: nothing is read.
    expect(await poll([], 0)).toEqual([]);
    await h.restart(specs(), { venue });
    await h.engine!.pollOrders();

    for (const [i, row] of rows().entries()) {
      expect(row, SYMBOLS[i]).toMatchObject({ status: 'FILLED', filledQty: '0.01', execQty: '0.01' });
      // Its fills are its trades on the venue, each once.
      const traded = (await h.venue.inner.tradeHistory({ symbol: SYMBOLS[i] })).map((t) => [t._id, String(t.baseQty)]);
      const recorded = h.store.fills.forOrder(row.localId).map((f) => [f.fillKey, f.qty]);
      expect(recorded.sort(), SYMBOLS[i]).toEqual(traded.sort());
      expect(recorded, SYMBOLS[i]).toHaveLength(i < 3 ? 3 : 2);
    }
  });
});
