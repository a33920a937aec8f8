/**
 * One contract suite, many venues (design.md): the cases every Venue on the simulated exchange must pass,
 * registered with vitest by `runVenueContract`. The in-process venue runs them here; the HTTP client against
 * the simulated exchange's server runs the same cases.
 *
 * What a harness must provide: a venue for a fresh account funded with CONTRACT_BALANCES, on the default
 * market (src/sim/default-market.ts) with the engine's default options (fees 0.001, fillThroughTicks 1,
 * no slippage, no partial fills), no prices set yet; `setPrice` feeds one last price to the engine (and
 * resolves once the venue will see it); `close` frees whatever the harness started.
 *
 * Errors are checked through the port's meaning and the venue's numeric code (`venueCode`; the HTTP client's errors
 * carry the BROKER_ERROR code there), never their class.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dec } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { VenueError } from '../../src/ports/venue-errors.js';
import type { OrderRecord } from '../../src/ports/venue-records.js';
import type { OrderRequest, Venue } from '../../src/ports/venue.js';
import { SIM_ERROR_CODES, type SimRejectReason } from '../../src/sim/error-codes.js';

export interface VenueHarness {
  venue: Venue;
  setPrice(symbol: string, price: string | number): Promise<void>;
  close(): Promise<void>;
}

export const CONTRACT_BALANCES = { BTC: '2', USDT: '100000', USDC: '50000' } as const;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function expectCode(promise: Promise<unknown>, reason: SimRejectReason): Promise<void> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected a rejection with exchange code ${SIM_ERROR_CODES[reason]} (${reason})`).toBeInstanceOf(
    VenueError,
  );
  // Both adapters give the refusal the port's meaning and keep the venue's own code.
  expect(err).toMatchObject({ meaning: 'rejected', venueCode: SIM_ERROR_CODES[reason] });
}

export function runVenueContract(name: string, makeHarness: () => Promise<VenueHarness>): void {
  describe(`Venue contract: ${name}`, () => {
    let h: VenueHarness;
    let venue: Venue;

    beforeEach(async () => {
      h = await makeHarness();
      venue = h.venue;
      await h.setPrice('BTCUSDT', 60000);
      await h.setPrice('BTCUSDC', '59990.5');
    });
    afterEach(async () => {
      await h.close();
    });

    const limitBuy = (price: string, quantity = '0.1'): OrderRequest => ({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity,
      price,
    });

    async function cancel(symbol: string, id: string): Promise<OrderRecord> {
      if (!venue.cancelOrder) throw new Error('the venue cannot cancel');
      return venue.cancelOrder(symbol, id);
    }

    async function spot(assetId: number): Promise<[number, number]> {
      const entry = (await venue.balance({ type: 0 }))[String(assetId)];
      return [entry?.value ?? NaN, entry?.locked_value ?? NaN];
    }

    it('publishes the pairs with a PRICE_FILTER, asset ids and precisions', async () => {
      const all = await venue.pairConfig();
      expect(all.map((p) => p.symbol)).toEqual(expect.arrayContaining(['BTCUSDT', 'BTCUSDC']));
      const [btcusdt, ...rest] = await venue.pairConfig('BTCUSDT');
      expect(rest).toEqual([]);
      expect(btcusdt).toMatchObject({
        symbol: 'BTCUSDT',
        status: 'TRADING',
        baseAsset: 'BTC',
        baseAssetId: 1,
        quoteAsset: 'USDT',
        quoteAssetId: 2,
        baseAssetPrecision: 6,
        quotePrecision: 2,
        ocoAllowed: true,
      });
      expect(btcusdt?.orderTypes).toEqual(expect.arrayContaining(['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO']));
      const rules = pairRulesFrom(btcusdt!);
      expect(rules.tickSize.toFixed()).toBe('0.01');
      expect(rules.minPrice.toFixed()).toBe('0.01');
      expect(rules.maxPrice?.toFixed()).toBe('1000000');
    });

    it('serves the spot wallet by currency id', async () => {
      const wallet = await venue.balance();
      expect(wallet['1']).toMatchObject({ value: 2, locked_value: 0 });
      expect(wallet['2']).toMatchObject({ value: 100000, locked_value: 0 });
      expect(wallet['3']).toMatchObject({ value: 50000, locked_value: 0 });
      expect(Object.keys(await venue.balance({ type: 0, currency: 2 }))).toEqual(['2']);
    });

    it('serves the market watch with symbol, last price and time', async () => {
      const all = await venue.marketWatch();
      expect(all.map((t) => t.symbol)).toEqual(expect.arrayContaining(['BTCUSDT', 'BTCUSDC']));
      const [usdc, ...rest] = await venue.marketWatch('BTCUSDC');
      expect(rest).toEqual([]);
      expect(usdc?.last).toBe(59990.5);
      expect(Number.isInteger(usdc?.time)).toBe(true);
      await h.setPrice('BTCUSDC', '60001.25');
      expect((await venue.marketWatch('BTCUSDC'))[0]?.last).toBe(60001.25);
    });

    it('places a resting LIMIT, lists it as open, locks quote, and cancels it', async () => {
      const placed = await venue.createOrder(limitBuy('59000'));
      expect(placed).toMatchObject({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', status: 'NEW', price: 59000 });
      expect(placed.stopPrice).toBe(0);
      expect(placed.createdAt).toMatch(ISO);
      const id = placed.displayingId;
      expect(id).toMatch(/^\d+$/);
      expect((await venue.openOrders()).map((o) => o.displayingId)).toEqual([id]);
      expect((await venue.openOrders('BTCUSDT'))[0]).toMatchObject({ status: 'NEW', quantity: 0.1 });
      expect(await venue.openOrders('BTCUSDC')).toEqual([]);
      expect(await spot(2)).toEqual([100000, 5900]);

      const canceled = await cancel('BTCUSDT', id);
      expect(canceled).toMatchObject({ displayingId: id, status: 'CANCELED' });
      expect(await venue.openOrders()).toEqual([]);
      expect(await spot(2)).toEqual([100000, 0]);
      expect((await venue.orderHistory()).map((o) => [o.displayingId, o.status])).toEqual([[id, 'CANCELED']]);
      expect(await venue.orderHistory({ hideCanceled: true })).toEqual([]);
      await h.setPrice('BTCUSDT', 50000);
      expect(await venue.tradeHistory()).toEqual([]);
    });

    it('fills a resting LIMIT when the price trades through it, with exact trade, fee and balances', async () => {
      const { displayingId: id } = await venue.createOrder(limitBuy('59000'));
      await h.setPrice('BTCUSDT', 59000);
      expect(await venue.openOrders()).toHaveLength(1);
      await h.setPrice('BTCUSDT', '58999.99');
      expect(await venue.openOrders()).toEqual([]);
      const [order] = await venue.orderHistory();
      expect(order).toMatchObject({ displayingId: id, status: 'FILLED', executedQty: 0.1, executedPrice: 59000 });
      const trades = await venue.tradeHistory();
      expect(trades).toHaveLength(1);
      expect(trades[0]).toMatchObject({
        symbol: 'BTCUSDT',
        side: 'BUY',
        orderId: id,
        price: 59000,
        baseQty: 0.1,
        quoteQty: 5900,
        baseAssetId: 1,
        quoteAssetId: 2,
        feeMetadata: { feeValue: 0.0001, feeAssetId: 1, feeAsset: 'BTC', feeRatio: 0.001 },
      });
      expect(trades[0]?.createdAt).toMatch(ISO);
      expect(trades[0]?.displayingId).toMatch(/^\d+$/);
      expect(await spot(1)).toEqual([2.0999, 0]);
      expect(await spot(2)).toEqual([94100, 0]);
    });

    it('fills MARKET orders at the last price, by quantity or by quote amount', async () => {
      const sold = await venue.createOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.25' });
      expect(sold.type).toBe('MARKET');
      const bought = await venue.createOrder({
        symbol: 'BTCUSDT',
        side: 'BUY',
        type: 'MARKET',
        quoteOrderQty: '1000',
        useQuoteQty: true,
      });
      const trades = await venue.tradeHistory({ symbol: 'BTCUSDT' });
      expect(trades.map((t) => [t.orderId, t.side, t.price, t.baseQty, t.quoteQty])).toEqual([
        [bought.displayingId, 'BUY', 60000, 0.016666, 999.96],
        [sold.displayingId, 'SELL', 60000, 0.25, 15000],
      ]);
      expect(trades[1]?.feeMetadata).toMatchObject({ feeValue: 15, feeAsset: 'USDT' });
      const usdt = dec(100000).plus(15000).minus(15).minus('999.96');
      const btc = dec(2).minus('0.25').plus('0.016666').minus('0.000016666');
      expect(await spot(2)).toEqual([Number(usdt.toFixed()), 0]);
      expect(await spot(1)).toEqual([Number(btc.toFixed()), 0]);
    });

    it('triggers a STOP_LIMIT only once the price reaches its stop', async () => {
      const stop = await venue.createOrder({
        symbol: 'BTCUSDT',
        side: 'SELL',
        type: 'STOP_LIMIT',
        quantity: '0.5',
        stopPrice: '59000',
        price: '58900',
      });
      expect(stop).toMatchObject({ status: 'NEW', stopPrice: 59000, price: 58900 });
      expect(await spot(1)).toEqual([2, 0.5]);
      await h.setPrice('BTCUSDT', '59000.01');
      expect(await venue.tradeHistory()).toEqual([]);
      await h.setPrice('BTCUSDT', 58950);
      const trades = await venue.tradeHistory();
      expect(trades.map((t) => [t.orderId, t.price, t.baseQty])).toEqual([[stop.displayingId, 58950, 0.5]]);
      expect(await spot(1)).toEqual([1.5, 0]);
    });

    it('fills one OCO leg and cancels the other, all under one displayingId', async () => {
      const oco = await venue.createOrder({
        symbol: 'BTCUSDT',
        side: 'SELL',
        type: 'OCO',
        quantity: '0.5',
        price: '62000',
        stopPrice: '58000',
        limitPrice: '57900',
      });
      expect(oco).toMatchObject({ type: 'OCO', status: 'NEW', price: 62000, stopPrice: 58000, limitPrice: 57900 });
      expect(await spot(1)).toEqual([2, 0.5]);
      await h.setPrice('BTCUSDT', '62000.01');
      await h.setPrice('BTCUSDT', 57000);
      const trades = await venue.tradeHistory();
      expect(trades.map((t) => [t.orderId, t.price, t.baseQty])).toEqual([[oco.displayingId, 62000, 0.5]]);
      expect((await venue.orderHistory())[0]).toMatchObject({ displayingId: oco.displayingId, status: 'FILLED' });
      expect(await venue.openOrders()).toEqual([]);
      expect(await spot(1)).toEqual([1.5, 0]);
    });

    it('filters and pages order and trade history, newest first', async () => {
      const a = await venue.createOrder(limitBuy('59000'));
      await h.setPrice('BTCUSDC', '59990.5'); // a later time for what follows
      const b = await venue.createOrder({ symbol: 'BTCUSDC', side: 'SELL', type: 'MARKET', quantity: '0.1' });
      const c = await venue.createOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.1' });
      const ids = (records: { displayingId?: string | null }[]) => records.map((r) => r.displayingId);
      expect(ids(await venue.orderHistory())).toEqual([c, b, a].map((o) => o.displayingId));
      expect(ids(await venue.orderHistory({ side: 'SELL', symbol: 'BTCUSDT' }))).toEqual([c.displayingId]);
      expect(ids(await venue.orderHistory({ pageSize: 2, page: 2 }))).toEqual([a.displayingId]);
      expect((await venue.tradeHistory({ symbol: 'BTCUSDC' })).map((t) => t.orderId)).toEqual([b.displayingId]);
      expect((await venue.tradeHistory({ pageSize: 1 })).map((t) => t.orderId)).toEqual([c.displayingId]);
      const future = new Date(Date.parse(a.createdAt!) + 86_400_000).toISOString();
      expect(await venue.orderHistory({ timeFrom: future })).toEqual([]);
      // Without a symbol (the orders poll's one read for every pair): every pair's records from a time, paged.
      const since = { timeFrom: b.createdAt! };
      expect(ids(await venue.orderHistory(since))).toEqual([c, b].map((o) => o.displayingId));
      expect((await venue.tradeHistory(since)).map((t) => [t.symbol, t.orderId])).toEqual([
        ['BTCUSDT', c.displayingId],
        ['BTCUSDC', b.displayingId],
      ]);
      expect((await venue.tradeHistory({ ...since, pageSize: 1, page: 2 })).map((t) => t.orderId)).toEqual([
        b.displayingId,
      ]);
      expect((await venue.tradeHistory({ ...since, pageSize: 1, page: 3 })).map((t) => t.orderId)).toEqual([]);
    });

    it('rejects invalid orders and cancels with the exchange code of the reason', async () => {
      await expectCode(venue.createOrder({ ...limitBuy('59000'), symbol: 'NOPEUSDT' }), 'UNKNOWN_SYMBOL');
      await expectCode(venue.createOrder(limitBuy('59000.005')), 'PRICE_OFF_TICK');
      await expectCode(venue.createOrder(limitBuy('59000', '0.0000001')), 'QUANTITY_PRECISION');
      await expectCode(venue.createOrder(limitBuy('59000', '2')), 'INSUFFICIENT_BALANCE');
      await expectCode(
        venue.createOrder({
          symbol: 'BTCUSDT',
          side: 'BUY',
          type: 'STOP_LIMIT',
          quantity: '0.1',
          stopPrice: '59000',
          price: '59100',
        }),
        'STOP_WRONG_SIDE',
      );
      await expectCode(
        venue.createOrder({
          symbol: 'BTCUSDT',
          side: 'SELL',
          type: 'OCO',
          quantity: '0.1',
          price: '59000',
          stopPrice: '58000',
          limitPrice: '57900',
        }),
        'OCO_PRICE_WRONG_SIDE',
      );
      await expectCode(cancel('BTCUSDT', '987654'), 'UNKNOWN_ORDER');
      const filled = await venue.createOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.1' });
      await expectCode(cancel('BTCUSDT', filled.displayingId), 'ORDER_NOT_OPEN');
      expect(await spot(2)).toEqual([105994, 0]);
    });
  });
}
