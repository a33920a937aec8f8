/**
 * Breakout: buys when the price breaks above its recent high, with a STOP_LIMIT BUY resting above that high,
 * and protects every base it bought with an OCO SELL bracket (take profit above the entry, stop loss below).
 *
 * - The recent high is the highest price of the last `lookbackMinutes`, measured on ctx.now(), read from the
 *   engine's one-minute candles (declared, so a run from any start, paper or a restarted daemon has them at
 *   once: the decision does not depend on where the run started). The window is whole time buckets of
 *   lookback / BUCKETS, as it was when the strategy kept them in its state. Nothing is placed until the candles
 *   reach back a whole lookback without a gap longer than the lookback.
 * - The entry (tag `breakout:entry`): stop = high × (1 + triggerPct/100), resting at
 *   limit = stop × (1 + slippagePct/100). The current price counts in the high, so the stop is always above
 *   the last price; a stop that would still trigger at once after rounding is not placed.
 * - Exits (tag `breakout:exit`): whatever base the instance holds that open exits do not cover yet is
 *   bracketed at its average entry price, so a partly filled entry is protected at once and the rest when it
 *   fills. A price already past a leg is met with a marketable LIMIT SELL instead: at the take profit, or at the
 *   stop's limit (the last price when below it).
 * - One position at a time: no entry while holding base or while an exit is open.
 * - When the high moves, the pending entry is stale. With cancel it is cancelled (at most once per
 *   `repriceMinutes`) and placed anew at the next tick; without cancel it waits for its stop to trigger or
 *   the price to come back.
 * Every decision comes from the persisted buckets, the journal's open orders and the position, so a tick
 * repeated, a fill reported late or a restart never places an order twice.
 */
import { z } from 'zod';
import {
  belowHundred,
  canBuy,
  type Candle,
  type Dec,
  dec,
  decimalParam,
  defineStrategy,
  exactlyOne,
  exitLevels,
  floorTo,
  type OrderView,
  pctMove,
  protectPosition,
  type StrategyContext,
  tradableQuantity,
} from '../src/strategy/api.js';

const BUCKETS = 30;
const ENTRY = 'breakout:entry';
const EXIT = 'breakout:exit';

const params = z
  .object({
    /** How far back the recent high reaches. */
    lookbackMinutes: z.number().int().min(1).max(10_080).default(60),
    /** How far above the recent high the entry's stop triggers, in percent (0.1 = 0.1 %). */
    triggerPct: decimalParam.default(dec('0.1')),
    /** How far above its stop the triggered entry may fill, in percent. */
    slippagePct: decimalParam.default(dec('0.1')),
    /** Quote to spend per entry (base = quoteAmount / entry limit)… */
    quoteAmount: decimalParam.optional(),
    /** …or base quantity per entry. */
    quantity: decimalParam.optional(),
    /** Take profit this far above the average entry, in percent. */
    takeProfitPct: decimalParam.default(dec('1.5')),
    /** Stop loss this far below the average entry, in percent. */
    stopLossPct: decimalParam.default(dec('0.75')),
    /** The stop leg's limit, this far under its stop, in percent: room for the sell to fill in a fall. */
    stopLimitPct: decimalParam.default(dec('0.2')),
    /** Least time between two reprices of a stale entry (with cancel only). */
    repriceMinutes: z.number().int().min(1).default(5),
  })
  .superRefine((p, ctx) => {
    exactlyOne(p, 'quoteAmount', 'quantity', ctx);
    belowHundred(p, ['stopLossPct', 'stopLimitPct'], ctx);
  });

type Params = z.infer<typeof params>;

interface BreakoutState {
  /** One-off notices already logged. */
  noticed?: string[];
}

type Ctx = StrategyContext<Params, BreakoutState>;

const MINUTE = 60_000;

/** The one-minute candles the recent high reads: the lookback, the bucket it starts in, and the one before. */
const candleCount = (p: Params) => p.lookbackMinutes + Math.ceil(p.lookbackMinutes / BUCKETS) + 1;

/**
 * The highest price of the buckets the last lookback touches (the current price included), once the candles
 * reach back a whole lookback without a gap longer than it; undefined before.
 */
function recentHigh(ctx: Ctx, price: Dec): Dec | undefined {
  const now = ctx.now();
  const lookbackMs = ctx.params.lookbackMinutes * MINUTE;
  const bucketMs = lookbackMs / BUCKETS;
  // A candle counts while its last moment's bucket touches the window (buckets shorter than a minute included).
  const inWindow = (c: Candle) => Math.floor((c.time + MINUTE - 1) / bucketMs) * bucketMs + bucketMs > now - lookbackMs;
  // The closed candles (one list until a candle closes), then the forming one, newest first.
  const closed = ctx.candles('1m', candleCount(ctx.params));
  const forming = ctx.candles('1m', 1, { forming: true }).at(-1);
  let high = price.toNumber();
  let since = now;
  const reach = (c: Candle): boolean => {
    if (since - (c.time + MINUTE) > lookbackMs) return false;
    since = c.time;
    if (inWindow(c) && c.high > high) high = c.high;
    return true;
  };
  if (forming !== undefined && forming.time > (closed.at(-1)?.time ?? -Infinity)) reach(forming);
  for (let i = closed.length - 1; i >= 0 && reach(closed[i]!); i--);
  if (now - since < lookbackMs) return undefined;
  return high > price.toNumber() ? dec(String(high)) : price;
}

/** Brackets what the position holds beyond its open exits; true while a position is open. */
function protect(ctx: Ctx): boolean {
  const { takeProfitPct, stopLossPct, stopLimitPct } = ctx.params;
  return protectPosition(ctx, EXIT, (entry) =>
    exitLevels(ctx.rules, entry, { takeProfitPct, stopLossPct, stopLimitPct }),
  );
}

/** The entry for this high: stop and limit rounded as the builder will (BUY down), with its quantity. */
function entryFor(ctx: Ctx, high: Dec): { stop: Dec; limit: Dec; quantity: Dec } {
  const { triggerPct, slippagePct, quantity, quoteAmount } = ctx.params;
  const stop = floorTo(pctMove(high, triggerPct), ctx.rules.tickSize);
  const limit = floorTo(pctMove(stop, slippagePct), ctx.rules.tickSize);
  return { stop, limit, quantity: tradableQuantity(ctx.rules, quantity ?? quoteAmount!.div(limit), limit) };
}

function placeEntry(ctx: Ctx, high: Dec, price: Dec): void {
  const { stop, limit, quantity } = entryFor(ctx, high);
  if (stop.lte(price)) {
    ctx.log.debug('entry stop would trigger at once after rounding: not placed', { stop: stop.toFixed() });
    return;
  }
  if (!canBuy(ctx, quantity, limit)) return;
  ctx.log.info('entry armed above the recent high', {
    high: high.toFixed(),
    stop: stop.toFixed(),
    limit: limit.toFixed(),
    quantity: quantity.toFixed(),
  });
  ctx.stopLimit('BUY', stop, limit, quantity, { tag: ENTRY });
}

/** Cancels an untouched entry whose stop no longer matches the high; it is placed anew on a later tick. */
function reprice(ctx: Ctx, entry: OrderView, high: Dec): void {
  if (!ctx.canCancel || entry.status !== 'OPEN' || !entry.filledQuantity.isZero()) return;
  const { stop } = entryFor(ctx, high);
  if (entry.stopPrice?.eq(stop) || ctx.now() - entry.createdAt < ctx.params.repriceMinutes * 60_000) return;
  ctx.log.info('recent high moved: cancelling the stale entry', {
    stop: entry.stopPrice?.toFixed(),
    wanted: stop.toFixed(),
  });
  ctx.cancel(entry);
}

export default defineStrategy<typeof params, BreakoutState>({
  name: 'breakout',
  description: 'STOP_LIMIT BUY above the recent high; each position bracketed by an OCO SELL',
  params,
  orderTypes: ['STOP_LIMIT', 'OCO', 'LIMIT'],
  requiresCancel: false,
  candles: (p) => ({ '1m': candleCount(p) }),
  onStart(ctx) {
    if (!ctx.canCancel) {
      ctx.log.info(
        'this venue cannot cancel: a pending entry is not repriced when the high moves; it waits for its stop to trigger or the price to come back',
      );
    }
  },
  onTick(ctx) {
    const price = ctx.price;
    if (price === undefined) return;
    const high = recentHigh(ctx, price);
    if (protect(ctx) || high === undefined) return;
    const entry = ctx.openOrders.find((o) => o.tag === ENTRY);
    if (entry) reprice(ctx, entry, high);
    else placeEntry(ctx, high, price);
  },
  onFill(ctx, fill) {
    ctx.log.info(fill.order.tag === ENTRY ? 'entry filled' : 'exit filled', {
      side: fill.side,
      price: fill.price.toFixed(),
      quantity: fill.quantity.toFixed(),
      realisedPnl: ctx.position.realisedPnl.toFixed(),
    });
    protect(ctx);
  },
});
