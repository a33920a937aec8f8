/**
 * EMA trend with an RSI filter and an ATR stop, on the engine's candles and indicators.
 *
 * - Entry: when a candle of `timeframe` closes with the fast EMA crossing above the slow one (below or level on
 *   the candle before) and the RSI under `rsiMax` (not already overbought), a MARKET BUY of `quoteAmount` (or
 *   `quantity`), tag `ema:entry`.
 * - Stop: `atrStop` ATRs under the entry's fill price, raised (never lowered) at every closed candle to
 *   `atrStop` ATRs under its close: a trailing stop that widens with volatility. Checked on every tick; at or
 *   below it, a MARKET SELL of what can be sold (tag `ema:stop`).
 * - Trend exit: when a candle closes with the fast EMA under the slow one, a MARKET SELL (tag `ema:trend`).
 * - With `trendSymbol` (an informative pair, BTCUSDT for an altcoin), an entry only while that pair's last
 *   closed `trendTimeframe` candle closed above its EMA of `trendPeriod`: the market's trend as a filter.
 * - One position at a time, and nothing new while an order of this instance is in flight.
 * The indicators are the engine's (warmed up from its candles at start, so a restart does not wait for the
 * lookback); the state holds only the stop and the last candle seen, so a repeated tick or a restart never
 * sends an order twice.
 */
import { z } from 'zod';
import {
  atr,
  type Dec,
  decimalParam,
  defineStrategy,
  ema,
  exactlyOne,
  informative,
  rsi,
  TIMEFRAMES,
  tradableQuantity,
  type StrategyContext,
} from '../src/strategy/api.js';

const ENTRY = 'ema:entry';

const params = z
  .object({
    /** Candles the indicators read. */
    timeframe: z.enum(TIMEFRAMES).default('5m'),
    /** Fast and slow EMA lengths, in candles. */
    fast: z.number().int().min(2).max(500).default(12),
    slow: z.number().int().min(3).max(1000).default(26),
    /** RSI length, and the RSI at or above which no entry is made. */
    rsiPeriod: z.number().int().min(2).max(500).default(14),
    rsiMax: z.number().gt(0).max(100).default(70),
    /** ATR length, and the stop's distance in ATRs. */
    atrPeriod: z.number().int().min(2).max(500).default(14),
    atrStop: z.number().gt(0).max(50).default(2),
    /**
     * A pair whose trend filters the entries (BTC's for an altcoin, an informative pair): an entry only while its
     * last closed candle of `trendTimeframe` closed above its EMA of `trendPeriod` (none before that EMA is ready).
     */
    trendSymbol: z
      .string()
      .regex(/^[A-Z0-9]{2,20}$/, 'an exchange symbol such as "BTCUSDT"')
      .optional(),
    trendTimeframe: z.enum(TIMEFRAMES).default('1h'),
    trendPeriod: z.number().int().min(2).max(500).default(20),
    /** Quote to spend per entry… */
    quoteAmount: decimalParam.optional(),
    /** …or base quantity per entry. */
    quantity: decimalParam.optional(),
  })
  .superRefine((p, ctx) => {
    exactlyOne(p, 'quoteAmount', 'quantity', ctx);
    if (p.fast >= p.slow)
      ctx.addIssue({ code: 'custom', path: ['fast'], message: `expected below slow (${p.slow}), found ${p.fast}` });
  });

type Params = z.infer<typeof params>;

const indicators = (p: Params) => ({
  fast: ema(p.timeframe, p.fast),
  slow: ema(p.timeframe, p.slow),
  rsi: rsi(p.timeframe, p.rsiPeriod),
  atr: atr(p.timeframe, p.atrPeriod),
  ...(p.trendSymbol === undefined ? {} : { trend: informative(p.trendSymbol, ema(p.trendTimeframe, p.trendPeriod)) }),
});

/** Whether the trend pair allows an entry: its last closed candle above its EMA (always, without a trend pair). */
function trendAllows(ctx: Ctx): boolean {
  const { trendSymbol, trendTimeframe } = ctx.params;
  if (trendSymbol === undefined) return true;
  const trend = ctx.indicators.trend?.value;
  const close = ctx.candles(trendTimeframe, 1, { symbol: trendSymbol })[0]?.close;
  return trend !== undefined && close !== undefined && close > trend;
}

interface TrendState {
  /** The stop price while a position is open. */
  stop?: number;
}

type Ctx = StrategyContext<Params, TrendState, ReturnType<typeof indicators>>;

/**
 * Open time of the last candle each instance acted on, by its indicator set. Kept in memory, not in state (a
 * state change is a database write): after a restart the last candle is decided again, which changes nothing
 * (flat, the cross is bought once; holding, the stop only rises and a trend exit sells what is held).
 */
const actedOn = new WeakMap<object, number>();

/** Numbers of exact decimals, made once per decimal (a position or a rule changes rarely; ticks are many). */
const numbers = new WeakMap<Dec, number>();
function num(x: Dec): number {
  let n = numbers.get(x);
  if (n === undefined) numbers.set(x, (n = x.toNumber()));
  return n;
}

/** Whether the position can be sold at `last` (above the pair's minimums), on numbers: the tick's quick test. */
function holding(ctx: Ctx, last: number): boolean {
  const q = num(ctx.position.quantity);
  const { stepSize, minQty, minNotional } = ctx.rules;
  return q >= num(stepSize) && q >= num(minQty) && q * last >= num(minNotional);
}

/** Sells what can be sold of the position (fee dust stays), at MARKET. */
function sell(ctx: Ctx, tag: string, why: string): void {
  const price = ctx.price;
  if (price === undefined) return;
  const quantity = tradableQuantity(ctx.rules, ctx.position.quantity, price);
  if (quantity.isZero()) return;
  ctx.log.info(why, { quantity: quantity.toFixed(), price: price.toFixed(), stop: ctx.state.stop });
  ctx.market('SELL', { quantity }, { tag });
}

export default defineStrategy({
  name: 'ema-trend',
  description: 'EMA crossover entries filtered by RSI, a trailing ATR stop, out when the trend turns',
  params,
  orderTypes: ['MARKET'],
  candles: (p) => ({ [p.timeframe]: p.slow * 4 }),
  informative: (p) => (p.trendSymbol === undefined ? [] : [{ symbol: p.trendSymbol, timeframe: p.trendTimeframe }]),
  indicators,
  // onTick reads its context only (actedOn follows the indicators: a repeat finds the candle acted on).
  idempotentTick: true,
  onTick(ctx: Ctx) {
    // Every tick of a backtest comes here: the common case (no candle closed, no stop reached) reads numbers
    // only; exact decimals are made when an order is.
    const last = ctx.ticker?.last;
    if (last === undefined || ctx.openOrders.length > 0) return;
    const { fast, slow, rsi: strength, atr: range } = ctx.indicators;
    const closed = fast.time !== actedOn.get(ctx.indicators);
    if (closed) actedOn.set(ctx.indicators, fast.time);
    if (holding(ctx, last)) {
      if (closed && range.value !== undefined) {
        const close = ctx.candles(ctx.params.timeframe, 1)[0]?.close;
        const raised = close === undefined ? undefined : close - ctx.params.atrStop * range.value;
        const stop = ctx.state.stop;
        if (raised !== undefined && (stop === undefined || raised > stop)) ctx.state.stop = raised;
      }
      const stop = ctx.state.stop;
      if (stop !== undefined && last <= stop) return sell(ctx, 'ema:stop', 'ATR stop reached: selling');
      if (closed && fast.value !== undefined && slow.value !== undefined && fast.value < slow.value)
        return sell(ctx, 'ema:trend', 'trend turned down: selling');
      return;
    }
    if (!closed || fast.value === undefined || slow.value === undefined || strength.value === undefined) return;
    if (fast.previous === undefined || slow.previous === undefined) return;
    const crossedUp = fast.previous <= slow.previous && fast.value > slow.value;
    if (!crossedUp || strength.value >= ctx.params.rsiMax || !trendAllows(ctx)) return;
    const { quoteAmount, quantity } = ctx.params;
    ctx.log.info('fast EMA crossed above the slow one: buying', { rsi: strength.value, price: last });
    if (quantity !== undefined) ctx.market('BUY', { quantity }, { tag: ENTRY });
    else ctx.market('BUY', { quoteAmount: quoteAmount! }, { tag: ENTRY });
  },
  onFill(ctx: Ctx, fill) {
    if (fill.side === 'BUY') {
      const range = ctx.indicators.atr.value;
      const stop = range === undefined ? undefined : fill.price.toNumber() - ctx.params.atrStop * range;
      if (stop !== undefined && (ctx.state.stop === undefined || stop < ctx.state.stop)) ctx.state.stop = stop;
      ctx.log.info('entry filled', { price: fill.price.toFixed(), stop: ctx.state.stop });
    } else if (tradableQuantity(ctx.rules, ctx.position.quantity, fill.price).isZero()) {
      delete ctx.state.stop;
      ctx.log.info('position closed', { price: fill.price.toFixed(), pnl: ctx.position.realisedPnl.toFixed() });
    }
  },
});
