/**
 * Believe nothing impossible (design.md invariant 12; issue 36). An order the venue calls FILLED is not closed to
 * its strategy before its fills are known, whatever its executedQty says (0, missing, negative): the strategy's
 * exit is never armed twice. No figure takes a fill past its order, an executed quantity backwards, a price
 * outside the pair's bounds or a fee above the fill's value: each is refused with one warning naming the order
 * and the field, and counted; the order is resolved from what else is known.
 */
import { describe, expect, it } from 'vitest';
import { dec } from '../../src/market/decimal.js';
import type { OrderRecord, TradeRecord } from '../../src/ports/venue-records.js';
import type { StrategyDefinition } from '../../src/strategy/api.js';
import type { Logger } from '../../src/ops/logger.js';
import { captureLogger } from '../support/capture-logger.js';
import { LyingVenue } from '../support/lying-venue.js';
import { Harness, instance, strategy } from './harness.js';

let h: Harness;
/** Buys 0.01 once (marketable), then keeps one SELL exit over what it holds: re-armed when none is working. */
function entryThenExit(): StrategyDefinition {
  let bought = false;
  return strategy({
    onTick(ctx) {
      if (!bought) {
        bought = true;
        ctx.limit('BUY', '100.5', '0.01', { tag: 'entry' });
        return;
      }
      const held = ctx.position.quantity;
      if (held.gt('0.005') && !ctx.openOrders.some((o) => o.tag === 'exit'))
        ctx.limit('SELL', '101', '0.01', { tag: 'exit' });
    },
  });
}

/** The journal's rows of one side, with what was recorded of each. */
function rows(side: 'BUY' | 'SELL') {
  return h.store.orders.all().filter((r) => r.side === side);
}

/** What the exchange really executed for the account, by side. */
function executedAtExchange(side: 'BUY' | 'SELL'): string {
  return h.sim
    .fills('k')
    .filter((f) => f.side === side)
    .reduce((sum, f) => sum.plus(f.baseQty), dec(0))
    .toFixed();
}

/** The instance's position as its recorded fills add up to (the store's fold). */
function position() {
  return h.store.fills.positions.tracker('a').position.quantity;
}

function recorded(localId: string): string {
  return h.store.fills
    .forOrder(localId)
    .reduce((sum, f) => sum.plus(f.qty), dec(0))
    .toFixed();
}

async function startLying(log = captureLogger()): Promise<LyingVenue> {
  const venue = new LyingVenue(h.venue);
  await h.start([instance('a', entryThenExit())], { venue, logger: log.logger });
  return venue;
}

/**
 * A lying venue over a harness where half of each tick's volume is the bot's, and a BUY of 0.01 resting at 99.9
 * (`fill` moves the price to 99.8 on a volume of 0.006: it fills 0.003, and polls when asked); `cancel()` has the
 * strategy cancel it at its next tick.
 */
async function restingBuy(logger?: Logger) {
  h = new Harness({ sim: { participationRate: '0.5' }, engine: { fillGraceMs: 20_000 } });
  h.price(100);
  let step: 'buy' | 'resting' | 'cancel' | 'cancelled' = 'buy';
  const buyThenCancel = strategy({
    onTick(ctx) {
      const buy = ctx.openOrders.find((o) => o.tag === 'entry');
      if (step === 'buy') ctx.limit('BUY', '99.9', '0.01', { tag: 'entry' });
      else if (step === 'cancel' && buy !== undefined) ctx.cancel(buy);
      else return;
      step = step === 'buy' ? 'resting' : 'cancelled';
    },
  });
  const venue = new LyingVenue(h.venue);
  await h.start([instance('a', buyThenCancel)], logger === undefined ? { venue } : { venue, logger });
  await h.tick(100); // the BUY rests at 99.9
  const fill = async (poll: boolean) => {
    h.clock.advance(5_000);
    h.sim.onPrice('BTCUSDT', 99.8, h.clock.now(), 0.006);
    if (poll) await h.engine!.pollOrders();
  };
  return { venue, fill, cancel: () => void (step = 'cancel') };
}

describe('an order the venue calls FILLED before its fills are known', () => {
  it.each([
    ['0', 0],
    ['missing', undefined],
    ['-5', -5],
    ['0.005 (half the order)', 0.005],
  ])(
    'with executedQty %s while trade history fails: stays working, the exit is armed once, its fill recorded once',
    async (_name, lie) => {
      h = new Harness();
      h.price(100);
      const venue = await startLying();
      await h.tick(100); // the entry fills
      await h.tick(100); // the exit rests at 101
      expect(rows('SELL')).toHaveLength(1);
      venue.failing.add('trades');
      venue.order = (r: OrderRecord) => (r.side === 'SELL' && r.status === 'FILLED' ? { ...r, executedQty: lie } : r);
      await h.tick(102); // the exit fills on the exchange
      const exit = rows('SELL')[0]!;
      expect(h.store.orders.get(exit.localId)?.status).not.toBe('FILLED');
      for (let i = 0; i < 6; i++) await h.tick(102);
      venue.failing.clear();
      for (let i = 0; i < 3; i++) await h.tick(102);

      // One exit placed, sold once at the exchange, and recorded once: the position is flat (the BUY's fee dust).
      expect(rows('SELL')).toHaveLength(1);
      expect(executedAtExchange('SELL')).toBe('0.01');
      expect(recorded(exit.localId)).toBe('0.01');
      expect(h.store.orders.get(exit.localId)?.status).toBe('FILLED');
      expect(position().lt('0.0001')).toBe(true);
    },
  );

  it('stays OPEN or PARTIALLY_FILLED while neither trades nor a possible executedQty say what filled', async () => {
    h = new Harness();
    h.price(100);
    const venue = await startLying();
    await h.tick(100);
    await h.tick(100);
    venue.failing.add('trades');
    venue.order = (r) => (r.side === 'SELL' && r.status === 'FILLED' ? { ...r, executedQty: 0 } : r);
    await h.tick(102);
    await h.tick(102); // two trade-history failures: fewer than the three before fills come from the order's figures
    const exit = h.store.orders.get(rows('SELL')[0]!.localId)!;
    expect(exit.venueStatus).toBe('FILLED');
    expect(['OPEN', 'PARTIALLY_FILLED']).toContain(exit.status);
    expect(position().gt('0.005')).toBe(true);
    expect(rows('SELL')).toHaveLength(1);
  });
});

describe('impossible figures are refused, told once, counted, and the order resolved from other evidence', () => {
  it('executedQty 1e308 on a 0.01 order with trade history failing: a 0.01 fill, one warning naming order and field', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    const venue = await startLying(log);
    venue.failing.add('trades');
    venue.order = (r) => (r.side === 'BUY' ? { ...r, executedQty: 1e308 } : r);
    for (let i = 0; i < 8; i++) await h.tick(100);

    const entry = rows('BUY')[0]!;
    expect(recorded(entry.localId)).toBe('0.01');
    expect(h.store.orders.get(entry.localId)?.filledQty).toBe('0.01');
    expect(position().lte('0.01')).toBe(true);
    const told = log.messages(/venue answer refused/);
    expect(told).toHaveLength(1);
    expect(told[0]).toContain(`order ${entry.localId}`);
    expect(told[0]).toContain('executedQty');
    expect(h.engine!.venueRefusals().find((r) => r.field === 'executedQty')?.count).toBeGreaterThan(1);
  });

  it('an executed quantity going backwards is refused: the figure reported before stands', async () => {
    h = new Harness();
    h.price(100);
    const log = captureLogger();
    const venue = await startLying(log);
    venue.failing.add('trades');
    let told = 0;
    // The first history record says what really executed; every later one less.
    venue.order = (r, source) =>
      r.side === 'BUY' && source === 'history' && told++ > 0 ? { ...r, executedQty: 0.004 } : r;
    for (let i = 0; i < 8; i++) await h.tick(100);

    const entry = rows('BUY')[0]!;
    expect(told).toBeGreaterThan(2);
    expect(recorded(entry.localId)).toBe('0.01');
    expect(h.store.orders.get(entry.localId)?.execQty).toBe('0.01');
    expect(log.messages(/venue answer refused.*executedQty .*never goes back/)).toHaveLength(1);
  });

  it('a cancel answer going back while trade history fails: the order is not closed short of what executed', async () => {
    const { venue, cancel, fill } = await restingBuy();
    venue.failing.add('trades');
    await fill(true); // 0.003, seen as the order's executedQty
    await fill(false); // 0.003 more, not seen
    const [buy] = rows('BUY');
    expect(h.store.orders.get(buy!.localId)?.execQty).toBe('0.003');
    // The cancel's answer, and every record after it, says less than the venue said before.
    venue.order = (r) => (r.status === 'CANCELED' ? { ...r, executedQty: 0.0015 } : r);
    cancel();
    for (let i = 0; i < 5; i++) await h.tick(101); // cancelled; trade history failing: a delta of what was believed
    expect(executedAtExchange('BUY')).toBe('0.006');
    expect(h.store.orders.get(buy!.localId)?.status).not.toBe('CANCELED');
    // The venue tells the truth again: the order closes with what it executed, not with what was believed then.
    venue.order = undefined;
    venue.failing.clear();
    for (let i = 0; i < 8; i++) await h.tick(101);
    expect(recorded(buy!.localId)).toBe('0.006');
    expect(h.store.orders.get(buy!.localId)?.status).toBe('CANCELED');
  });

  it('PARTIALLY_FILLED without a figure, then CANCELED with executedQty 0: not closed empty, resolved from its trades', async () => {
    const log = captureLogger();
    const { venue, cancel, fill } = await restingBuy(log.logger);
    // The venue says partially filled without a figure, then cancelled having executed nothing; its trade history
    // answers, without the order's trade for now.
    venue.order = (r) =>
      r.status === 'PARTIALLY_FILLED'
        ? { ...r, executedQty: undefined }
        : r.status === 'CANCELED'
          ? { ...r, executedQty: 0 }
          : r;
    venue.trades = () => [];
    await fill(true);
    const [buy] = rows('BUY');
    expect(h.store.orders.get(buy!.localId)?.status).toBe('PARTIALLY_FILLED');
    cancel();
    // Cancelled, and polled past the grace period: never closed as an empty cancel.
    for (let i = 0; i < 6; i++) await h.tick(101);
    expect(executedAtExchange('BUY')).toBe('0.003');
    expect(h.store.orders.get(buy!.localId)?.status).toBe('PARTIALLY_FILLED');
    expect(
      log.messages(new RegExp(`venue answer refused: order ${buy!.localId} .*executedQty is 0 on an order`)),
    ).toHaveLength(1);
    expect(h.engine!.venueRefusals().find((r) => r.field === 'executedQty')?.count).toBeGreaterThan(0);
    // Its trade comes (the records still say 0): recorded, and the order closes with it.
    venue.trades = undefined;
    for (let i = 0; i < 2; i++) await h.tick(101);
    expect(recorded(buy!.localId)).toBe('0.003');
    expect(h.store.orders.get(buy!.localId)?.status).toBe('CANCELED');
    expect(position().toFixed()).toBe('0.002997'); // less the fee, in base
  });

  it.each([
    ['a trade past the order', 'baseQty', (t: TradeRecord) => ({ ...t, baseQty: 5 })],
    ['a price above the pair bounds', 'price', (t: TradeRecord) => ({ ...t, price: 5e7 })],
    [
      'a fee above the fill',
      'feeMetadata.feeValue',
      (t: TradeRecord) => ({ ...t, feeMetadata: { ...t.feeMetadata, feeValue: 3 } }),
    ],
  ])('%s is not recorded: the order is resolved from its executed quantity', async (_name, field, lie) => {
    h = new Harness({ engine: { fillGraceMs: 20_000 } });
    h.price(100);
    const log = captureLogger();
    const venue = await startLying(log);
    venue.trades = (trades) => trades.map((t) => (t.side === 'BUY' ? lie(t) : t));
    for (let i = 0; i < 8; i++) await h.tick(100);

    const entry = rows('BUY')[0]!;
    const fills = h.store.fills.forOrder(entry.localId);
    // Recorded once, from the order's own figures (a delta), at the price it filled at, never past its quantity.
    expect(fills.map((f) => [f.qty, f.source])).toEqual([['0.01', 'delta']]);
    expect(Number(fills[0]!.price)).toBeLessThanOrEqual(100.5);
    expect(Number(fills[0]!.fee)).toBeLessThan(0.01);
    expect(
      log.messages(new RegExp(`venue answer refused: order ${entry.localId} .*${field.replace('.', '\\.')}`)),
    ).toHaveLength(1);
    expect(h.engine!.venueRefusals().find((r) => r.field === field)?.count).toBeGreaterThan(0);
  });
});
