import { describe, expect, it } from 'vitest';
import { InProcessVenue } from '../../src/venues/in-process-venue.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { VenueError } from '../../src/ports/venue-errors.js';
import type { OrderRequest } from '../../src/ports/venue.js';
import { SimRejectError } from '../../src/sim/error-codes.js';
import { BalancesSchema, OrderRecordSchema, TradeRecordSchema } from '../../src/wire/schemas.js';
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

  it('refuses a balance past the range of a double, as the wire schema does, rather than hand over Infinity', async () => {
    const engine = new MatchingEngine();
    engine.createAccount({ apiKey: KEY, balances: { ...CONTRACT_BALANCES, USDT: `1${'0'.repeat(309)}` } });
    const venue = new InProcessVenue(engine, KEY);
    await expect(venue.balance()).rejects.toThrow(/value/);
    expect(Object.values(await harness().venue.balance()).every((b) => Number.isFinite(b.value))).toBe(true);
  });

  it("hands over the engine's records as the wire schemas parse them, without parsing: same keys, order, values", async () => {
    // Partial fills on, so records are seen half filled too; every order type, filled, resting, triggered, cancelled.
    // A twin engine driven alike gives the raw records of creates and cancels to parse.
    const [engine, twin] = [0, 1].map(() => {
      const e = new MatchingEngine({ participationRate: '0.5' });
      e.createAccount({ apiKey: KEY, balances: CONTRACT_BALANCES });
      return e;
    }) as [MatchingEngine, MatchingEngine];
    const venue = new InProcessVenue(engine, KEY);
    let time = T0;
    const price = (p: number, volume: number) => {
      time += 1000;
      for (const e of [engine, twin]) e.onPrice('BTCUSDT', p, time, volume);
    };
    const same = (made: object, parsed: object) => {
      expect(made).toStrictEqual(parsed);
      // Same keys in the same order: whatever serialises a record (logs, state) writes the same text.
      expect(JSON.stringify(made)).toBe(JSON.stringify(parsed));
      expect(Object.isFrozen(made)).toBe(true);
    };
    const place = async (request: OrderRequest) => {
      const made = await venue.createOrder(request);
      same(made, OrderRecordSchema.parse(twin.placeOrder(KEY, request)));
      return made;
    };
    price(60000, 10);
    await place({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.4', price: '59000' });
    await place({ symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', quantity: '0.3', price: '61000' });
    await place({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.05' });
    await place({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quoteOrderQty: '1000', useQuoteQty: true });
    await place({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'STOP_LIMIT',
      quantity: '0.2',
      stopPrice: '58500',
      price: '58400',
    });
    await place({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'OCO',
      quantity: '0.1',
      price: '62000',
      stopPrice: '57000',
      limitPrice: '56900',
    });
    const last = await place({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.01', price: '50000' });
    price(58990, 0.5); // the BUY half filled
    price(62100, 0.2); // the SELL LIMIT and the OCO's limit leg, in part
    price(58300, 4); // the stop triggers and fills
    same(
      await venue.cancelOrder('BTCUSDT', last.displayingId),
      OrderRecordSchema.parse(twin.cancelOrder(KEY, 'BTCUSDT', last.displayingId)),
    );
    const kinds = new Set<string>();
    const engineOrders = [...engine.orderHistory(KEY, { pageSize: 100 }), ...engine.openOrders(KEY)];
    const venueOrders = [...(await venue.orderHistory({ pageSize: 100 })), ...(await venue.openOrders())];
    expect(venueOrders).toHaveLength(engineOrders.length);
    engineOrders.forEach((raw, i) => {
      same(venueOrders[i]!, OrderRecordSchema.parse(raw));
      kinds.add(`${raw.type} ${raw.status}`);
    });
    const engineTrades = engine.tradeHistory(KEY, { pageSize: 100 });
    const venueTrades = await venue.tradeHistory({ pageSize: 100 });
    expect(venueTrades).toHaveLength(engineTrades.length);
    engineTrades.forEach((raw, i) => same(venueTrades[i]!, TradeRecordSchema.parse(raw)));
    expect(await venue.balance()).toStrictEqual(BalancesSchema.parse(engine.balances(KEY)));
    // The case covers what it says: every type, partly filled, filled and cancelled, and several trades.
    expect([...kinds]).toEqual(
      expect.arrayContaining(['LIMIT CANCELED', 'LIMIT FILLED', 'LIMIT PARTIALLY_FILLED', 'MARKET FILLED']),
    );
    expect([...kinds].some((k) => k.startsWith('OCO'))).toBe(true);
    expect([...kinds].some((k) => k.startsWith('STOP_LIMIT'))).toBe(true);
    expect(engineTrades.length).toBeGreaterThan(4);
  });
});
