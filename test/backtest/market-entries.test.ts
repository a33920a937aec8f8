/**
 * The replay moves a tick that can fill nothing by its price alone (MarketEntries.move, MatchingEngine.quietPrice)
 * and gives the simulated market that tick's whole entry (24-hour range and volumes, what a taker's impact reads)
 * when something may read it: flush(), before the engine runs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MarketEntries } from '../../src/backtest/market-entries.js';
import { valueAt } from '../../src/backtest/number-column.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { SAMPLE } from './fixtures.js';

const FROM = Date.parse('2023-03-09T00:00:00Z');

let data: TickData;
beforeAll(async () => {
  data = await loadTicks([SAMPLE], { from: FROM, to: FROM + 600_000 });
});

describe('MarketEntries', () => {
  it('moves a quiet tick by its price, and gives its entry to the market on flush', () => {
    const { vb } = data.columns;
    const i = (() => {
      for (let k = 1; k < data.length; k++) if (valueAt(vb, k) !== valueAt(vb, 0)) return k;
      throw new Error('the slice has no two ticks of different volumes');
    })();
    const sim = new MatchingEngine();
    const entries = new MarketEntries(data);
    sim.onTicker(entries.at(0));
    entries.move(sim, i, undefined);
    // No order rests: the tick is quiet, its price moved, the entry still the first tick's.
    const [moved] = sim.tickers('BTCUSDT');
    expect(moved).toMatchObject({ p: valueAt(data.columns.price, i), vb: valueAt(vb, 0) });
    entries.flush(sim);
    expect(sim.tickers('BTCUSDT')[0]).toMatchObject({ p: valueAt(data.columns.price, i), vb: valueAt(vb, i) });
  });
});

describe('a stretch of quiet moves', () => {
  let two: TickData;
  beforeAll(async () => {
    const from = Date.parse('2023-04-14T00:00:00Z');
    const files = ['BTCUSDT', 'ETHUSDT'].map((s) => `data/samples/2023-04/${s}-2023-04-13_15.jsonl.gz`);
    two = await loadTicks(files, { from, to: from + 3_600_000 });
  });

  /** A market given the first tick of each symbol, with a buy resting on BTCUSDT at `bid` when given. */
  const market = (bid?: string) => {
    const sim = new MatchingEngine();
    const entries = new MarketEntries(two);
    const { sym } = two.columns;
    for (const s of [0, 1]) sim.onTicker(entries.at(two.columns.sym.indexOf(s)));
    if (bid !== undefined) {
      sim.createAccount({ apiKey: 'k', balances: { USDT: '100000' } });
      sim.placeOrder('k', { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.01', price: bid });
    }
    return { sim, entries, sym };
  };

  /** The ticks a stretch after tick `from` moves (each checked as passQuiet does), and where it stops. */
  const stretch = (sim: MatchingEngine, entries: MarketEntries, from: number, to: number): number => {
    const { sym, price, time } = two.columns;
    entries.startStretch(sim);
    let i = from + 1;
    for (; i < to; i++) if (!entries.moveInStretch(sym[i] as number, i, valueAt(price, i), valueAt(time, i))) break;
    entries.endStretch(sim, from);
    return i;
  };

  it('leaves the market as moving tick by tick does: each pair at its last tick, the clock at the last one', () => {
    expect(new Set(two.columns.sym).size).toBe(2);
    const byTick = market();
    const byStretch = market();
    const to = Math.min(two.length, 400);
    for (let i = 1; i < to; i++) byTick.entries.move(byTick.sim, i, undefined);
    expect(stretch(byStretch.sim, byStretch.entries, 0, to)).toBe(to);
    expect(byStretch.sim.marketState()).toEqual(byTick.sim.marketState());
    expect(byStretch.sim.now()).toBe(byTick.sim.now());
    expect(byStretch.sim.now()).toBe(valueAt(two.columns.time, to - 1));
    byTick.entries.flush(byTick.sim);
    byStretch.entries.flush(byStretch.sim);
    expect(byStretch.sim.tickers()).toEqual(byTick.sim.tickers());
  });

  it('stops at the first tick that reaches a resting order, the market moved only to the tick before it', () => {
    const { price, sym } = two.columns;
    const btc = Array.from({ length: two.length }, (_, i) => i).filter((i) => sym[i] === 0);
    // A bid a hair under the lowest BTCUSDT price after the first tick: the tick at that low reaches it.
    let low = btc[1]!;
    for (const i of btc.slice(1)) if (valueAt(price, i) < valueAt(price, low)) low = i;
    const bid = (Math.floor(valueAt(price, low) * 100) / 100 + 0.01).toFixed(2);
    const { sim, entries } = market(bid);
    const reached = stretch(sim, entries, 0, two.length);
    expect(reached).toBeLessThanOrEqual(low);
    expect(valueAt(price, reached)).toBeLessThanOrEqual(Number(bid) + 1e-9);
    expect(sim.now()).toBe(valueAt(two.columns.time, reached - 1));
  });
});
