/**
 * Mean reversion: buys a dip below the moving average with a LIMIT BUY at a band under it, then sells the
 * bounce with an OCO SELL bracket (take profit, stop loss).
 *
 * - The moving average is of the price at each sample time over the last `windowMinutes`: one every
 *   `sampleSeconds` (whole minutes) on the clock, the first price of that period (its first one-minute candle's
 *   open). It is read from the engine's one-minute candles (declared, so a run from any start, paper or a
 *   restarted daemon has them at once: the average does not depend on where the run started). Nothing is placed
 *   until the candles hold the whole window's samples; samples before a gap longer than the window do not
 *   count (a long stop starts the average afresh rather than averaging stale prices).
 * - The entry (tag `mr:entry`) is a LIMIT BUY at average × (1 - bandPct/100). With cancel, it is cancelled
 *   when the band has moved more than `repricePct` from it, and placed anew at the next tick; without cancel
 *   it is placed once and waits for the price to come down to it.
 * - Exits (tag `mr:exit`): the base held that open exits do not cover is bracketed when it is bought (so a
 *   partial fill is protected at once): take profit `takeProfitPct` above the average entry, or, without it,
 *   at the moving average, but at least `bandPct` above the entry; stop loss `stopLossPct` below the entry,
 *   resting `stopLimitPct` under its stop. A price already past a leg is met with a marketable LIMIT SELL instead.
 * - One position at a time; after an exit below the entry (a stop loss) it waits `cooldownMinutes`.
 * Decisions come from the persisted ring, the journal's open orders and the position: repeated ticks, late
 * fill reports and restarts never place an order twice.
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
  pctMove,
  protectPosition,
  type StrategyContext,
  tradableQuantity,
} from '../src/strategy/api.js';

const MAX_SAMPLES = 1440;
const ENTRY = 'mr:entry';
const EXIT = 'mr:exit';

const params = z
  .object({
    /** Length of the moving average. */
    windowMinutes: z.number().int().min(1).max(1440).default(60),
    /** One sample of the price per this many seconds (whole minutes) feeds the average. */
    sampleSeconds: z.number().int().min(60).max(3600).default(60),
    /** The entry sits this far below the average, in percent (1 = 1 %). */
    bandPct: decimalParam.default(dec('1')),
    /** With cancel: the entry is re-placed once the band has moved more than this, in percent of its price. */
    repricePct: decimalParam.default(dec('0.2')),
    /** Take profit this far above the average entry; absent: at the moving average. */
    takeProfitPct: decimalParam.optional(),
    /** Stop loss this far below the average entry, in percent. */
    stopLossPct: decimalParam.default(dec('1.5')),
    /** The stop leg's limit, this far under its stop, in percent. */
    stopLimitPct: decimalParam.default(dec('0.2')),
    /** Wait this long after a stop loss before the next entry. */
    cooldownMinutes: z.number().int().min(0).default(0),
    /** Quote to spend per entry (base = quoteAmount / entry price)… */
    quoteAmount: decimalParam.optional(),
    /** …or base quantity per entry. */
    quantity: decimalParam.optional(),
  })
  .superRefine((p, ctx) => {
    exactlyOne(p, 'quoteAmount', 'quantity', ctx);
    belowHundred(p, ['bandPct', 'stopLossPct', 'stopLimitPct'], ctx);
    if (p.sampleSeconds % 60 !== 0)
      ctx.addIssue({
        code: 'custom',
        path: ['sampleSeconds'],
        message: `expected whole minutes (60, 120 … 3600: the average reads one-minute candles), found ${p.sampleSeconds}`,
      });
    const samples = Math.ceil((p.windowMinutes * 60) / p.sampleSeconds);
    if (samples > MAX_SAMPLES || samples < 2) {
      ctx.addIssue({
        code: 'custom',
        path: ['sampleSeconds'],
        message: `expected windowMinutes × 60 / sampleSeconds between 2 and ${MAX_SAMPLES} samples, found ${samples}`,
      });
    }
  });

type Params = z.infer<typeof params>;

interface MeanReversionState {
  /** Average entry of the position, to tell a stop loss from a take profit when the exit fills. */
  entry?: string;
  cooldownUntil?: number;
  /** One-off notices already logged. */
  noticed?: string[];
}

type Ctx = StrategyContext<Params, MeanReversionState>;

const MINUTE = 60_000;

/** The one-minute candles the average reads: the window, the sample period it starts in, and the one before. */
const candleCount = (p: Params) => p.windowMinutes + p.sampleSeconds / 60 + 1;

interface Samples {
  /** Each sample period's first candle (time, open), after the last gap longer than the window. */
  times: number[];
  prices: Dec[];
  /** The average of the last `size` of them, and of the last `size - 1` and one more (by the forming period). */
  averages: Map<string, Dec | undefined>;
}

/**
 * The closed candles' samples, by list (the engine hands the same list until a candle closes) and by sample period
 * and window (instances on one pair share the list).
 */
const sampled = new WeakMap<readonly Candle[], Map<string, Samples>>();

function samplesOf(closed: readonly Candle[], sampleMs: number, windowMs: number): Samples {
  let byParams = sampled.get(closed);
  if (byParams === undefined) sampled.set(closed, (byParams = new Map<string, Samples>()));
  const key = `${sampleMs}/${windowMs}`;
  let out = byParams.get(key);
  if (out !== undefined) return out;
  out = { times: [], prices: [], averages: new Map() };
  byParams.set(key, out);
  for (const c of closed) {
    const last = out.times.at(-1);
    if (last !== undefined && Math.floor(last / sampleMs) === Math.floor(c.time / sampleMs)) continue;
    if (last !== undefined && c.time - last > windowMs) out.times.length = out.prices.length = 0;
    out.times.push(c.time);
    out.prices.push(dec(c.open));
  }
  return out;
}

/**
 * The average of the last `windowMinutes / sampleSeconds` samples (each sample period's first one-minute candle's
 * open, the current period's included), once the candles hold that many with no gap between two longer than the
 * window; undefined before.
 */
function movingAverage(ctx: Ctx): Dec | undefined {
  const { windowMinutes, sampleSeconds } = ctx.params;
  const size = Math.ceil((windowMinutes * 60) / sampleSeconds);
  const sampleMs = sampleSeconds * 1000;
  const windowMs = windowMinutes * MINUTE;
  const samples = samplesOf(ctx.candles('1m', candleCount(ctx.params)), sampleMs, windowMs);
  const forming = ctx.candles('1m', 1, { forming: true }).at(-1);
  const last = samples.times.at(-1);
  // The forming candle adds a sample when it opened a new period; a gap longer than the window before it: none yet.
  let extra: Dec | undefined;
  if (forming !== undefined && (last === undefined || forming.time > last)) {
    if (last !== undefined && forming.time - last > windowMs) return undefined;
    if (last === undefined || Math.floor(last / sampleMs) !== Math.floor(forming.time / sampleMs))
      extra = dec(forming.open);
  }
  const key = extra === undefined ? '' : extra.toFixed();
  if (samples.averages.has(key)) return samples.averages.get(key);
  const prices = extra === undefined ? samples.prices : [...samples.prices, extra];
  const average =
    prices.length < size
      ? undefined
      : prices
          .slice(-size)
          .reduce((sum, p) => sum.plus(p), dec(0))
          .div(size)
          .toDecimalPlaces(8);
  samples.averages.set(key, average);
  return average;
}

/** Where the position takes its profit: a fixed percentage, or the average but at least the band's width. */
function takeProfitFor(ctx: Ctx, entry: Dec, average: Dec | undefined): Dec {
  const { takeProfitPct, bandPct } = ctx.params;
  if (takeProfitPct !== undefined) return pctMove(entry, takeProfitPct);
  const floor = pctMove(entry, bandPct);
  return average !== undefined && average.gt(floor) ? average : floor;
}

/** Brackets what the position holds beyond its open exits; true while a position is open. */
function protect(ctx: Ctx, average: Dec | undefined): boolean {
  const { stopLossPct, stopLimitPct } = ctx.params;
  return protectPosition(ctx, EXIT, (entry) =>
    exitLevels(ctx.rules, entry, { takeProfit: takeProfitFor(ctx, entry, average), stopLossPct, stopLimitPct }),
  );
}

function enter(ctx: Ctx, average: Dec): void {
  const { bandPct, repricePct, quantity, quoteAmount } = ctx.params;
  const band = floorTo(pctMove(average, bandPct.neg()), ctx.rules.tickSize);
  const open = ctx.openOrders.find((o) => o.tag === ENTRY);
  if (open) {
    if (!ctx.canCancel || open.status !== 'OPEN' || !open.filledQuantity.isZero() || !open.price) return;
    const moved = band.minus(open.price).abs().div(open.price).mul(100);
    if (moved.lte(repricePct)) return;
    ctx.log.info('band moved: cancelling the entry to re-place it', {
      price: open.price.toFixed(),
      band: band.toFixed(),
    });
    ctx.cancel(open);
    return;
  }
  const qty = tradableQuantity(ctx.rules, quantity ?? quoteAmount!.div(band), band);
  if (!canBuy(ctx, qty, band)) return;
  // Debug, not info: the engine may refuse it (risk, balance) and this runs again on the next tick; the engine
  // logs the order placed, and a refusal once a minute.
  ctx.log.debug('entry asked for at the band below the average', {
    average: average.toFixed(),
    band: band.toFixed(),
    quantity: qty.toFixed(),
  });
  ctx.limit('BUY', band, qty, { tag: ENTRY });
}

export default defineStrategy<typeof params, MeanReversionState>({
  name: 'mean-reversion',
  description: 'LIMIT BUY a band below the moving average; each position bracketed by an OCO SELL',
  params,
  orderTypes: ['LIMIT', 'OCO'],
  requiresCancel: false,
  candles: (p) => ({ '1m': candleCount(p) }),
  onStart(ctx) {
    if (!ctx.canCancel) {
      ctx.log.info('this venue cannot cancel: the entry is placed once and waits, it does not follow the band');
    }
  },
  onTick(ctx) {
    const price = ctx.price;
    if (price === undefined) return;
    const average = movingAverage(ctx);
    if (protect(ctx, average) || average === undefined) return;
    const until = ctx.state.cooldownUntil;
    if (until !== undefined && ctx.now() < until) return;
    delete ctx.state.cooldownUntil;
    enter(ctx, average);
  },
  onFill(ctx, fill) {
    const s = ctx.state;
    const data = { side: fill.side, price: fill.price.toFixed(), quantity: fill.quantity.toFixed() };
    if (fill.side === 'BUY') {
      s.entry = ctx.position.averagePrice.toFixed();
      ctx.log.info('entry filled', data);
    } else {
      const loss = s.entry !== undefined && fill.price.lt(s.entry);
      ctx.log.info(loss ? 'exit filled below the entry (stop loss)' : 'exit filled', {
        ...data,
        realisedPnl: ctx.position.realisedPnl.toFixed(),
      });
      if (loss && ctx.params.cooldownMinutes > 0) {
        s.cooldownUntil = ctx.now() + ctx.params.cooldownMinutes * 60_000;
        ctx.log.info('cooling down after a stop loss', { minutes: ctx.params.cooldownMinutes });
      }
    }
    protect(ctx, movingAverage(ctx));
  },
});
