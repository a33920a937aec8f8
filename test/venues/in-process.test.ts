import { describe, expect, it } from 'vitest';
import { InProcessVenue } from '../../src/venues/in-process-venue.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { VenueError } from '../../src/ports/venue-errors.js';
import { SimRejectError } from '../../src/sim/error-codes.js';
import { CONTRACT_BALANCES, runVenueContract, type VenueHarness } from './venue-contract.js';

const KEY = 'contract-key';
const T0 = Date.parse('2024-05-01T00:00:00.000Z');

function harness(): VenueHarness & { engine: MatchingEngine } {
  const engine = new MatchingEngine();
  engine.createAccount({ apiKey: KEY, balances: CONTRACT_BALANCES });
  let time = T0;
  return {
    engine,
    venue: new InProcessVenue(engine, KEY),
    setPrice: (symbol, price) => {
      time += 1000;
      engine.onPrice(symbol, Number(price), time);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}

runVenueContract('in-process matching engine', () => Promise.resolve(harness()));

describe('InProcessVenue', () => {
  it('exposes the engine revision so a backtest can skip polls that would find nothing new', async () => {
    const h = harness();
    const venue = h.venue as InProcessVenue;
    await h.setPrice('BTCUSDT', 60000);
    const r0 = venue.revision;
    await venue.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    expect(venue.revision).toBe(r0 + 1);
    await h.setPrice('BTCUSDT', 59500);
    expect(venue.revision).toBe(r0 + 1);
    await h.setPrice('BTCUSDT', 58000);
    expect(venue.revision).toBeGreaterThan(r0 + 1);
  });

  it('leaves out of its revision an order reaching the book after its latency, not what the book does to it there', async () => {
    const engine = new MatchingEngine({ latencyMs: 1000 });
    engine.createAccount({ apiKey: KEY, balances: CONTRACT_BALANCES });
    const venue = new InProcessVenue(engine, KEY);
    engine.onPrice('BTCUSDT', 60000, T0);
    await venue.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '59000' });
    const placed = venue.revision;
    const all = engine.revision;
    // It arrives and rests: its updatedAt alone moved.
    engine.onPrice('BTCUSDT', 60000, T0 + 1000);
    expect(engine.revision).toBe(all + 1);
    expect(venue.revision).toBe(placed);
    expect(await venue.openOrders('BTCUSDT')).toMatchObject([
      { status: 'NEW', updatedAt: new Date(T0 + 1000).toISOString() },
    ]);
    // A marketable one fills as it arrives: that counts.
    await venue.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.1', price: '61000' });
    expect(venue.revision).toBe(placed + 1);
    engine.onPrice('BTCUSDT', 60000, T0 + 2000);
    expect(venue.revision).toBeGreaterThan(placed + 1);
  });

  it('rejects with a rejected VenueError caused by the SimRejectError, as a rejected promise rather than a throw', async () => {
    const { venue } = harness();
    const pending = venue.createOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.1' });
    await expect(pending).rejects.toBeInstanceOf(VenueError);
    await expect(pending).rejects.toMatchObject({ meaning: 'rejected', code: 'E_EXCHANGE', venueCode: 6116 });
    const err: unknown = await pending.catch((e: unknown) => e);
    expect((err as Error).cause).toBeInstanceOf(SimRejectError);
    expect((err as Error).cause).toMatchObject({ reason: 'NO_MARKET_PRICE' });
  });
});
