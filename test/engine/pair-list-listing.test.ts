/**
 * Issue 41: a pair the exchange starts listing after the start joins a pair list at the list's next refresh. The
 * engine reads its rules then (one pair-config read for the new pairs at a refresh, not one per poll), makes and
 * starts its instance like the others; while its rules cannot be read it is left out with the reason and nothing is
 * traded on it, and it is tried again at the next refresh. In process: the simulated exchange behind a venue that
 * hides ETHUSDT until the test lists it.
 */
import { describe, expect, it } from 'vitest';
import type { PairConfig, Ticker } from '../../src/ports/venue-records.js';
import { PriceRecordingVenue } from '../../src/venues/price-recording-venue.js';
import type { PairList } from '../../src/config/pair-list.js';
import { ema } from '../../src/strategy/api.js';
import { usdtInstances } from '../support/pair-list-file.js';
import type { EngineOptions } from '../../src/engine/engine.js';
import type { OrderRequest } from '../../src/ports/venue.js';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import { FaultyVenue, Harness, matching, venueError } from './harness.js';

/**
 * The harness venue, with ETHUSDT off the market watch until `listed`, and off the pair configuration until then
 * too unless `rulesKnown` (a recording: the data's pairs come with their rules).
 */
class ListingVenue extends FaultyVenue {
  listed = false;
  rulesKnown = false;
  rulesDown = false;
  pairConfigReads = 0;
  override async marketWatch(symbol?: string): Promise<Ticker[]> {
    return (await super.marketWatch(symbol)).filter((t) => this.listed || t.symbol !== 'ETHUSDT');
  }
  override async pairConfig(symbol?: string): Promise<PairConfig[]> {
    this.pairConfigReads++;
    if (this.listed && this.rulesDown) throw venueError('temporary', 'E_TIMEOUT');
    return (await super.pairConfig(symbol)).filter((c) => this.listed || this.rulesKnown || c.symbol !== 'ETHUSDT');
  }
}

/**
 * An engine on the list's instances for `universe` (the pairs the market has at the start). `cycle` moves the clock,
 * prices both pairs and runs one market job and one orders poll: through the venue's market watch (`live`, as the
 * daemon), or observing the venue's tickers as a backtest does (`recording`: the data's market watch).
 */
async function listing(
  universe: string[],
  via: 'live' | 'recording',
  list: Partial<PairList> = {},
  options: Partial<EngineOptions> = {},
) {
  const h = new Harness();
  const venue = new ListingVenue(h.venue.inner);
  venue.rulesKnown = via === 'recording';
  const instances = usdtInstances(universe, 3, list);
  // The daemon's wiring: the prices of the pairs traded kept for `bot status`, a pair taken up later among them.
  const recording = new PriceRecordingVenue(venue, h.store, h.clock, universe);
  const added: string[] = [];
  const engine = await h.start(instances, {
    ...options,
    venue: recording,
    instanceAdded: (spec) => {
      added.push(spec.config.name);
      recording.watch(spec.config.symbol, undefined);
    },
  });
  const [schedule] = engine.schedules();
  /** Each pair's 24-hour quote volume on the market watch. */
  const volumes = { BTCUSDT: 1_000_000, ETHUSDT: 1_000_000 };
  const quote = (symbol: keyof typeof volumes, price: number) =>
    h.sim.onTicker({ s: symbol, p: price, t: h.clock.now(), vq: volumes[symbol] });
  const cycle = async (ms: number) => {
    h.clock.advance(ms);
    quote('BTCUSDT', 100);
    quote('ETHUSDT', 10);
    if (via === 'live') await engine.marketCycle(schedule!);
    else await engine.observeCycle(await recording.marketWatch(), schedule!);
    await engine.pollOrders();
  };
  const names = () => engine.instances().map((i) => `${i.name} ${i.status}`);
  const orders = (symbol?: string) =>
    h.store.orders
      .all()
      .filter((o) => symbol === undefined || o.symbol === symbol)
      .map(({ instance, symbol, side, price, createdAt }) => ({ instance, symbol, side, price, createdAt }));
  const prices = () => {
    recording.flush();
    return h.store.prices
      .all()
      .map((p) => p.symbol)
      .sort();
  };
  const changes = () => h.store.events.list({ kinds: ['pairlist-changed'] }).map((e) => e.data);
  return { h, venue, engine, cycle, names, orders, added, prices, volumes, changes };
}

describe('a pair listed after the start', () => {
  it('joins the pair list at the next refresh once its rules are read, and is left out until then', async () => {
    const { h, venue, engine, cycle, names, orders, added, prices } = await listing(['BTCUSDT'], 'live');
    await cycle(1_000);
    expect(names()).toEqual(['usdt/BTCUSDT running']);
    expect(orders('BTCUSDT')).toHaveLength(1);

    // Listed on the market watch, its rules not readable: left out at the refresh, nothing traded on it, and the
    // polls until the next refresh do not ask again.
    venue.listed = true;
    venue.rulesDown = true;
    const before = venue.pairConfigReads;
    await cycle(60_000);
    for (let i = 0; i < 5; i++) await cycle(5_000);
    expect(venue.pairConfigReads - before).toBe(1);
    expect(names()).toEqual(['usdt/BTCUSDT running']);
    expect(engine.pairRules('ETHUSDT')).toBeUndefined();
    expect(orders('ETHUSDT')).toEqual([]);
    expect(added).toEqual([]);
    expect(prices()).toEqual(['BTCUSDT']);
    await expect(h.venue.inner.openOrders('ETHUSDT')).resolves.toEqual([]);

    // The next refresh reads its rules: its instance is made and started, and trades within them.
    venue.rulesDown = false;
    await cycle(60_000 - 25_000);
    for (let i = 0; i < 3; i++) await cycle(5_000);
    expect(venue.pairConfigReads - before).toBe(2);
    expect(names()).toEqual(['usdt/BTCUSDT running', 'usdt/ETHUSDT running']);
    expect(added).toEqual(['usdt/ETHUSDT']);
    expect(prices()).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(engine.pairRules('ETHUSDT')?.tickSize.toFixed()).toBe('0.01');
    expect(orders('ETHUSDT')).toEqual([
      { instance: 'usdt/ETHUSDT', symbol: 'ETHUSDT', side: 'BUY', price: '5', createdAt: h.clock.now() - 15_000 },
    ]);
  });

  it('is not asked about at every market job while the decisions of an earlier one still run (decideApart)', async () => {
    const { h, venue, engine, names } = await listing(['BTCUSDT'], 'live', {}, { decideApart: true });
    const [schedule] = engine.schedules();
    // The first job's order waits (for the request budget, as it were): its decisions run on.
    let release!: () => void;
    let held!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const inCreate = new Promise<void>((r) => (held = r));
    const create = venue.createOrder.bind(venue);
    venue.createOrder = async (request: OrderRequest): Promise<OrderRecord> => {
      held();
      await gate;
      return create(request);
    };
    const job = async (ms: number) => {
      h.clock.advance(ms);
      h.sim.onTicker({ s: 'BTCUSDT', p: 100, t: h.clock.now(), vq: 1_000_000 });
      h.sim.onTicker({ s: 'ETHUSDT', p: 10, t: h.clock.now(), vq: 1_000_000 });
      await engine.marketCycle(schedule!);
    };
    await job(1_000);
    await inCreate;
    // Listed, its rules not readable, the list due: the jobs while the decisions run only bring tickers.
    venue.listed = true;
    venue.rulesDown = true;
    const before = venue.pairConfigReads;
    await job(60_000);
    for (let i = 0; i < 5; i++) await job(5_000);
    expect(venue.pairConfigReads - before).toBe(0);
    // Once they end, the next job asks once (and leaves it out), and the ones after it do not ask again.
    release();
    await expect.poll(() => engine.decisionRuns()).toEqual([]);
    for (let i = 0; i < 3; i++) await job(5_000);
    expect(venue.pairConfigReads - before).toBe(1);
    expect(names()).toEqual(['usdt/BTCUSDT running']);
  });

  it('enters as a recording whose market watch shows the pair from the same moment does (parity)', async () => {
    const run = async (universe: string[], via: 'live' | 'recording') => {
      const l = await listing(universe, via);
      await l.cycle(1_000);
      await l.cycle(30_000);
      l.venue.listed = true;
      for (let i = 0; i < 12; i++) await l.cycle(5_000);
      return { names: l.names(), orders: l.orders() };
    };
    const live = await run(['BTCUSDT'], 'live');
    // The recording holds ETHUSDT's prices from its listing on: its instance exists from the start.
    const recorded = await run(['BTCUSDT', 'ETHUSDT'], 'recording');
    expect(live.orders.map((o) => o.symbol)).toEqual(['BTCUSDT', 'ETHUSDT']);
    expect(live).toEqual(recorded);
  });

  it('journals why a newly listed pair is left out, once for each kind of reason: its rules, then a filter', async () => {
    const { venue, cycle, volumes, changes } = await listing(['BTCUSDT'], 'live', { minQuoteVolume: 500_000 });
    await cycle(1_000);
    venue.listed = true;
    venue.rulesDown = true;
    volumes.ETHUSDT = 100_000;
    // Two refreshes its rules cannot be read at; then two it is taken up at but has too little volume (a figure
    // that moves); then one it has enough at.
    await cycle(60_000);
    await cycle(60_000);
    venue.rulesDown = false;
    await cycle(60_000);
    volumes.ETHUSDT = 200_000;
    await cycle(60_000);
    volumes.ETHUSDT = 2_000_000;
    await cycle(60_000);
    const same = { group: 'usdt', listed: ['BTCUSDT'], added: [], removed: [] };
    expect(changes()).toEqual([
      { ...same, added: ['BTCUSDT'] },
      {
        ...same,
        newLeftOut: { ETHUSDT: matching(/^its rules could not be read from the exchange \(E_TIMEOUT/) },
      },
      { ...same, newLeftOut: { ETHUSDT: '24-hour quote volume 100000 USDT below minQuoteVolume 500000' } },
      { ...same, listed: ['ETHUSDT', 'BTCUSDT'], added: ['ETHUSDT'] },
    ]);
  });

  it('makes a pair taken up after a reload with the reloaded params, and reloads the pairs it took up', async () => {
    const { venue, engine, cycle } = await listing(['BTCUSDT'], 'live');
    const spec = (symbol: string, period: number) => usdtInstances([symbol], period)[0]!;
    // An EMA's warm-up grows with its period: the params each instance runs with.
    const warmUp = (name: string) => engine.indicatorSpecs(name).trend?.warmUp;
    await cycle(1_000);
    await engine.reconfigure([spec('BTCUSDT', 5)]);
    venue.listed = true;
    await cycle(60_000);
    expect(warmUp('usdt/BTCUSDT')).toBe(ema('1m', 5).warmUp);
    expect(warmUp('usdt/ETHUSDT')).toBe(ema('1m', 5).warmUp);
    // A reload names the pairs of the start (operator/actions.ts); the pair taken up since takes it too.
    await engine.reconfigure([spec('BTCUSDT', 8)]);
    expect(warmUp('usdt/ETHUSDT')).toBe(ema('1m', 8).warmUp);
  });
});
