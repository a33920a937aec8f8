/**
 * DCA (accumulate): buys `quoteAmount` of quote every `intervalMinutes`, as a MARKET order by quote amount or
 * as a LIMIT at the last price, until `maxBuys` buys or `budgetQuote` spent; optionally protects the WHOLE
 * accumulated position with one OCO SELL exit (take profit and stop loss around its average entry).
 *
 * - Buys are tagged `dca:buy:<n>`. The time of the last buy and the count live in state, and are caught up
 *   from the journal's orders and the fills (a stop between sending and saving state), so a restart never
 *   buys twice in one interval. One buy is in flight at a time: a LIMIT still open an interval later is
 *   cancelled when the venue can cancel (the next buy follows on a later tick), else the next buy waits for it.
 * - `budgetQuote` caps the quote spent by the fills, fees paid in quote included; `maxBuys` caps the buy
 *   orders placed.
 * - The exit (tag `dca:exit`) covers the whole position. With cancel it is re-armed as the position grows:
 *   the exit is cancelled after a buy fills and placed again, over everything held, at the next tick. Without
 *   cancel it is armed once, when accumulation ends (no buys left, none open), as onStart says.
 *   A price already past a leg is met with a marketable LIMIT SELL instead (at the take profit, or
 *   at the stop's limit, or the last price when lower). After the exit fills, buying goes on
 *   while buys and budget are left.
 */
import { z } from 'zod';
import {
  type Dec,
  dec,
  decimalParam,
  defineStrategy,
  exitLevels,
  floorTo,
  noticeOnce,
  type OrderView,
  remainingQuantity,
  sellWithBracket,
  type StrategyContext,
} from '../src/strategy/api.js';

const BUY = /^dca:buy:(\d+)$/;
const EXIT = 'dca:exit';

const below100 = decimalParam.refine((d) => d.lt(100), { message: 'expected a percentage below 100' });

const params = z
  .object({
    /** Quote spent by each buy. */
    quoteAmount: decimalParam,
    intervalMinutes: z.number().int().min(1).default(60),
    /** MARKET buys by quote amount; LIMIT buys at the last price (base = quoteAmount / price). */
    orderType: z.enum(['MARKET', 'LIMIT']).default('MARKET'),
    /** Most buy orders placed in all; no cap when absent. */
    maxBuys: z.number().int().min(1).optional(),
    /** Most quote spent by filled buys, fees in quote included; no cap when absent. */
    budgetQuote: decimalParam.optional(),
    /** One OCO SELL over the whole position, priced from its average entry (percentages). */
    exit: z
      .strictObject({
        takeProfitPct: decimalParam,
        stopLossPct: below100,
        /** The stop leg's limit, this far under its stop. */
        stopLimitPct: below100.default(dec('0.2')),
      })
      .optional(),
  })
  .superRefine((p, ctx) => {
    if (p.budgetQuote?.lt(p.quoteAmount)) {
      ctx.addIssue({
        code: 'custom',
        path: ['budgetQuote'],
        message: `expected at least quoteAmount (${p.quoteAmount.toFixed()}), found ${p.budgetQuote.toFixed()}`,
      });
    }
  });

type Params = z.infer<typeof params>;

interface DcaState {
  /** Buy orders placed so far. */
  buys?: number;
  /** When the last buy was placed (ms, ctx.now()). */
  lastBuyAt?: number;
  /** Quote spent by buy fills (text), fees in quote included. */
  spent?: string;
  /** One-off notices already logged. */
  noticed?: string[];
}

type Ctx = StrategyContext<Params, DcaState>;

function once(ctx: Ctx, key: string, level: 'info' | 'warn', msg: string): void {
  noticeOnce(ctx, key, msg, { buys: ctx.state.buys ?? 0, spent: ctx.state.spent ?? '0' }, level);
}

/** Counts a buy the journal knows of, in case state was not saved after it was sent. */
function catchUp(ctx: Ctx, order: OrderView): void {
  const m = BUY.exec(order.tag ?? '');
  if (!m) return;
  ctx.state.buys = Math.max(ctx.state.buys ?? 0, Number(m[1]));
  ctx.state.lastBuyAt = Math.max(ctx.state.lastBuyAt ?? 0, order.createdAt);
}

/** Why no further buy will be placed, or undefined while buys are left. */
function exhausted(ctx: Ctx): string | undefined {
  const { maxBuys, budgetQuote, quoteAmount } = ctx.params;
  if (maxBuys !== undefined && (ctx.state.buys ?? 0) >= maxBuys) return 'maxBuys reached';
  if (budgetQuote?.lt(dec(ctx.state.spent ?? 0).plus(quoteAmount))) return 'budgetQuote spent';
  return undefined;
}

function buyIfDue(ctx: Ctx, price: Dec, openBuys: readonly OrderView[]): void {
  const { quoteAmount, intervalMinutes, orderType } = ctx.params;
  const s = ctx.state;
  const done = exhausted(ctx);
  if (done !== undefined) return once(ctx, 'done', 'info', `accumulation finished: ${done}`);
  if (s.lastBuyAt !== undefined && ctx.now() - s.lastBuyAt < intervalMinutes * 60_000) return;
  if (openBuys.length > 0) {
    const stale = openBuys.filter((o) => o.status === 'OPEN');
    if (!ctx.canCancel || stale.length === 0) return ctx.log.debug('previous buy still open: the next one waits');
    ctx.log.info('previous buy still open an interval later: cancelling it', { orders: stale.map((o) => o.localId) });
    for (const o of stale) ctx.cancel(o);
    return;
  }
  const free = ctx.balances.get(ctx.rules.quoteAsset)?.free;
  if (free !== undefined && free.lt(quoteAmount))
    return once(ctx, 'quote', 'warn', 'not enough free quote to buy: waiting');
  const n = (s.buys ?? 0) + 1;
  const tag = `dca:buy:${n}`;
  if (orderType === 'MARKET') {
    ctx.market('BUY', { quoteAmount }, { tag });
  } else {
    const qty = floorTo(quoteAmount.div(price), ctx.rules.stepSize);
    if (qty.lt(ctx.rules.minQty) || qty.isZero()) return once(ctx, 'small', 'warn', 'buy below the pair minimums');
    ctx.limit('BUY', price, qty, { tag });
  }
  s.buys = n;
  s.lastBuyAt = ctx.now();
  ctx.log.info('buying', { buy: n, orderType, quoteAmount: quoteAmount.toFixed(), price: price.toFixed() });
}

/** Keeps one exit over everything held (re-armed with cancel; armed once at the end without). */
function armExit(ctx: Ctx, price: Dec, openBuys: readonly OrderView[]): void {
  const exit = ctx.params.exit;
  if (exit === undefined) return;
  const exits = ctx.openOrders.filter((o) => o.tag === EXIT);
  const covered = remainingQuantity(exits);
  const { quantity: held, averagePrice: entry } = ctx.position;
  const step = ctx.rules.stepSize;
  const uncovered = floorTo(held.minus(covered), step);
  if (uncovered.lte(0) || uncovered.lt(ctx.rules.minQty)) return;
  if (exits.length > 0) {
    if (!ctx.canCancel || exits.some((o) => o.status !== 'OPEN')) return;
    ctx.log.info('position grew: cancelling the exit to re-arm it over the whole position', {
      held: held.toFixed(),
      covered: covered.toFixed(),
    });
    for (const o of exits) ctx.cancel(o);
    return;
  }
  if (!ctx.canCancel && (exhausted(ctx) === undefined || openBuys.length > 0)) return;
  const qty = floorTo(held, step);
  const levels = exitLevels(ctx.rules, entry, exit);
  if (qty.mul(levels.stop).lt(ctx.rules.minNotional))
    return once(ctx, 'dust', 'warn', 'position below minNotional: no exit');
  const free = ctx.balances.get(ctx.rules.baseAsset)?.free;
  if (free !== undefined && free.lt(qty)) return once(ctx, 'base', 'warn', 'not enough free base for the exit');
  // The average entry as a reader wants it in a log line (it carries up to 60 digits).
  const shown = entry.toSignificantDigits(10).toFixed();
  sellWithBracket(ctx, qty, levels, EXIT, { entry: shown, over: 'the whole position' });
}

function run(ctx: Ctx, buy: boolean): void {
  const price = ctx.price;
  if (price === undefined) return;
  const openBuys = ctx.openOrders.filter((o) => BUY.test(o.tag ?? ''));
  const before = ctx.state.buys;
  if (buy) buyIfDue(ctx, price, openBuys);
  // A buy just placed is in flight: its fill arms the exit.
  if (ctx.state.buys === before) armExit(ctx, price, openBuys);
}

export default defineStrategy<typeof params, DcaState>({
  name: 'dca',
  description: 'Buys a fixed quote amount every interval; optional OCO exit over the whole position',
  params,
  orderTypes: ['MARKET', 'LIMIT', 'OCO'],
  requiresCancel: false,
  onStart(ctx) {
    const { exit, maxBuys, budgetQuote } = ctx.params;
    if (exit === undefined || ctx.canCancel) return;
    if (maxBuys === undefined && budgetQuote === undefined) {
      ctx.log.warn('this venue cannot cancel and neither maxBuys nor budgetQuote is set: the exit will never be armed');
    } else {
      ctx.log.info('this venue cannot cancel: the exit is armed once, over the whole position, when accumulation ends');
    }
  },
  onTick(ctx) {
    for (const o of ctx.openOrders) catchUp(ctx, o);
    run(ctx, true);
  },
  onFill(ctx, fill) {
    catchUp(ctx, fill.order);
    const data = { price: fill.price.toFixed(), quantity: fill.quantity.toFixed() };
    if (BUY.test(fill.order.tag ?? '')) {
      const quoteFee = fill.feeAsset === ctx.rules.quoteAsset ? fill.fee : dec(0);
      ctx.state.spent = dec(ctx.state.spent ?? 0)
        .plus(fill.price.mul(fill.quantity))
        .plus(quoteFee)
        .toFixed();
      ctx.log.info('bought', { ...data, spent: ctx.state.spent });
    } else {
      ctx.log.info('exit filled', { ...data, realisedPnl: ctx.position.realisedPnl.toFixed() });
    }
    run(ctx, false);
  },
});
