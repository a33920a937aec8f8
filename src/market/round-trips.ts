/**
 * Closed trades (round trips) from fills, and the per-trade metrics: one definition for the backtest's report
 * and the daemon's operator layer (the control API's trades and profit), so both count the same trades.
 *
 * - Lots per book (an instance and its symbol), first in, first out: a fill closes the oldest open lots of the
 *   opposite side and opens a lot with what is left (selling base the book did not buy opens a short lot that
 *   a later buy closes). An exit whose order names the entry it closes (`closes`, the entry's tag: a grid
 *   slot's sell names the slot's buy) closes that entry's lots first, oldest first, then any other, so a
 *   grid level's sale is paired with its own level's buy, not with whichever level bought first. Fills of one order that open in a row make one lot; fills of one order that close the
 *   same lot make one trade, so a partly filled order is not several trades.
 * - A fill counts with what it moved, fees included: a BUY the base it added (net of a base fee) for the quote
 *   it cost (plus a quote fee), a SELL the base it removed (plus a base fee) for the quote it brought (net of a
 *   quote fee). A fee in a third asset is not converted (it stays on the fill). So a trade's PnL is net of the
 *   fees of both sides; its prices are the fills' own (volume-weighted over its fills, before fees).
 * - Flat is below the pair's step: when what a book still holds after a fill is smaller than the pair's
 *   quantity step (fee dust, which no order can sell), the book is flat. The dust is no trade: it is carried
 *   into the book's next lot on its side (or silently cancelled by the next fill on the other side), so it
 *   never makes a round trip of its own and its few units of quote are not in any trade's PnL.
 * - Metrics over closed trades: count, wins (PnL > 0), win rate, gross profit and loss, profit factor
 *   (gross profit / gross loss; undefined without losses), expectancy (mean PnL per trade, in quote).
 */
import { D, type Dec, ZERO } from './decimal.js';
import type { Side } from './pair-rules.js';

export interface TradeFill {
  /** Lots are kept per book: an instance and its symbol (e.g. "grid-btc/BTCUSDT"). */
  book: string;
  side: Side;
  /** The fill's price and base quantity, before fees. */
  price: Dec;
  quantity: Dec;
  fee: Dec;
  /** Which asset the fee was paid in, as the position does (position.ts). */
  feeIn: 'base' | 'quote' | 'other';
  time: number;
  /** The order the fill belongs to (fills of one order make one lot, or one trade against one lot). */
  orderId?: string;
  /** The order's tag: a lot's entry tag, a trade's exit tag (its exit reason). */
  tag?: string;
  /** The tag of the entry the fill's order closes, when the strategy named one: its lots close first. */
  closes?: string;
  /** The pair's quantity step: a position smaller than it is fee dust, i.e. flat. */
  step?: Dec;
}

export interface ClosedTrade {
  book: string;
  direction: 'long' | 'short';
  /** Base closed. */
  quantity: Dec;
  entryTime: number;
  exitTime: number;
  /** Volume-weighted fill prices, before fees. */
  entryPrice: Dec;
  exitPrice: Dec;
  /** Quote the entry cost (long) or brought (short) for this quantity, fees included. */
  entryValue: Dec;
  /** Quote the exit brought (long) or cost (short), fees included. */
  exitValue: Dec;
  /** Net of both sides' fees, in quote. */
  pnl: Dec;
  /** pnl / entryValue (a ratio: 0.01 is 1 %); undefined when the entry cost nothing. */
  pnlRatio: Dec | undefined;
  /** exitTime - entryTime, ms. */
  durationMs: number;
  entryOrderId: string | undefined;
  exitOrderId: string | undefined;
  entryTag: string | undefined;
  /** The tag of the order that closed it: the strategy's exit reason. */
  exitTag: string | undefined;
}

interface Lot {
  long: boolean;
  /** Base still open, net of fees. */
  base: Dec;
  /** Quote value of `base`, fees included. */
  value: Dec;
  /** Fill base and fill quote (before fees) of the entry fills, for the entry price. */
  fillBase: Dec;
  fillQuote: Dec;
  time: number;
  orderId: string | undefined;
  tag: string | undefined;
  /** Fee dust carried after the book went flat: closing it makes no trade. */
  dust: boolean;
  /** The trade last made from this lot, extended by more fills of the same exit order. */
  last?: ClosedTrade;
}

/** The base a fill moved and the quote it cost or brought, fees included (see the module doc). */
export function netOfFees(f: TradeFill): { base: Dec; value: Dec } {
  const baseFee = f.feeIn === 'base' ? f.fee : ZERO;
  const quoteFee = f.feeIn === 'quote' ? f.fee : ZERO;
  const gross = f.quantity.mul(f.price);
  return f.side === 'BUY'
    ? { base: f.quantity.minus(baseFee), value: gross.plus(quoteFee) }
    : { base: f.quantity.plus(baseFee), value: gross.minus(quoteFee) };
}

/** FIFO lots per book, fed fills in time order, giving closed trades as they close. */
export class TradeBook {
  private readonly books = new Map<string, Lot[]>();
  readonly trades: ClosedTrade[] = [];

  /** Folds one fill in; returns the trades it closed (or extended, for a later fill of the same exit order). */
  add(f: TradeFill): ClosedTrade[] {
    let lots = this.books.get(f.book);
    if (!lots) this.books.set(f.book, (lots = []));
    const { base, value } = netOfFees(f);
    if (base.lte(0)) return [];
    const long = f.side === 'BUY';
    const closed: ClosedTrade[] = [];
    let left = base;
    // All open lots are on one side (a fill closes before it opens): an opposite fill closes them.
    while (left.gt(0) && lots.length > 0 && (lots[0] as Lot).long !== long) {
      const at =
        f.closes === undefined
          ? 0
          : Math.max(
              0,
              lots.findIndex((l) => l.tag === f.closes && !l.dust),
            );
      const lot = lots[at] as Lot;
      const q = D.min(left, lot.base);
      if (!lot.dust) closed.push(this.close(f, lot, q, q.eq(base) ? value : value.mul(q).div(base)));
      lot.value = q.eq(lot.base) ? ZERO : lot.value.minus(lot.value.mul(q).div(lot.base));
      lot.base = lot.base.minus(q);
      left = left.minus(q);
      if (lot.base.isZero()) lots.splice(at, 1);
    }
    if (left.gt(0)) this.open(lots, f, long, left, left.eq(base) ? value : value.mul(left).div(base));
    this.flatten(lots, f.step);
    return closed;
  }

  private open(lots: Lot[], f: TradeFill, long: boolean, base: Dec, value: Dec): void {
    const fillBase = f.quantity.mul(base).div(netOfFees(f).base);
    const last = lots[lots.length - 1];
    if (last && last.long === long && !last.dust && f.orderId !== undefined && last.orderId === f.orderId) {
      last.base = last.base.plus(base);
      last.value = last.value.plus(value);
      last.fillBase = last.fillBase.plus(fillBase);
      last.fillQuote = last.fillQuote.plus(fillBase.mul(f.price));
      return;
    }
    const lot: Lot = {
      long,
      base,
      value,
      fillBase,
      fillQuote: fillBase.mul(f.price),
      time: f.time,
      orderId: f.orderId,
      tag: f.tag,
      dust: false,
    };
    // Dust on this side (only dust can be left when a fill opens on the same side as the lots) joins the lot.
    const dust = lots.length === 1 && (lots[0] as Lot).dust ? (lots.pop() as Lot) : undefined;
    if (dust) {
      lot.base = lot.base.plus(dust.base);
      lot.value = lot.value.plus(dust.value);
    }
    lots.push(lot);
  }

  private close(f: TradeFill, lot: Lot, q: Dec, exitValue: Dec): ClosedTrade {
    const entryValue = q.eq(lot.base) ? lot.value : lot.value.mul(q).div(lot.base);
    const prev = lot.last;
    if (prev && f.orderId !== undefined && prev.exitOrderId === f.orderId) {
      const quantity = prev.quantity.plus(q);
      prev.exitPrice = prev.exitPrice.mul(prev.quantity).plus(f.price.mul(q)).div(quantity);
      prev.quantity = quantity;
      prev.entryValue = prev.entryValue.plus(entryValue);
      prev.exitValue = prev.exitValue.plus(exitValue);
      prev.exitTime = f.time;
      prev.durationMs = f.time - prev.entryTime;
      finish(prev);
      return prev;
    }
    const trade: ClosedTrade = {
      book: f.book,
      direction: lot.long ? 'long' : 'short',
      quantity: q,
      entryTime: lot.time,
      exitTime: f.time,
      entryPrice: lot.fillBase.isZero() ? ZERO : lot.fillQuote.div(lot.fillBase),
      exitPrice: f.price,
      entryValue,
      exitValue,
      pnl: ZERO,
      pnlRatio: undefined,
      durationMs: f.time - lot.time,
      entryOrderId: lot.orderId,
      exitOrderId: f.orderId,
      entryTag: lot.tag,
      exitTag: f.tag,
    };
    finish(trade);
    lot.last = trade;
    this.trades.push(trade);
    return trade;
  }

  /** Below the step, what is left is dust: the book is flat, the lots become one dust lot. */
  private flatten(lots: Lot[], step: Dec | undefined): void {
    if (!step || lots.length === 0 || (lots.length === 1 && (lots[0] as Lot).dust)) return;
    const open = lots.reduce((s, l) => s.plus(l.base), ZERO);
    if (open.gte(step)) return;
    const first = lots[0] as Lot;
    const value = lots.reduce((s, l) => s.plus(l.value), ZERO);
    lots.length = 0;
    lots.push({ ...first, base: open, value, dust: true, last: undefined });
  }

  /** Base a book holds in open lots (dust included), for a caller that shows the open position. */
  held(book: string): Dec {
    return (this.books.get(book) ?? []).reduce((s, l) => s.plus(l.base), ZERO);
  }
}

function finish(t: ClosedTrade): void {
  t.pnl = t.direction === 'long' ? t.exitValue.minus(t.entryValue) : t.entryValue.minus(t.exitValue);
  t.pnlRatio = t.entryValue.isZero() ? undefined : t.pnl.div(t.entryValue);
}

/** How closed trades were paired, in words, for a report: by the entries exits named, or first in, first out. */
export function pairingText(fills: readonly TradeFill[]): string {
  const named = fills.filter((f) => f.closes !== undefined).length;
  if (named === 0) return 'first in, first out per instance and pair (no exit named the entry it closes)';
  return (
    `by the entry each exit names (${named} of ${fills.length} fills named one: the strategy's own pairing, ` +
    "e.g. a grid slot's sell with that slot's buy), first in, first out per instance and pair otherwise"
  );
}

/** The closed trades of fills given in time order (see the module doc). */
export function closedTrades(fills: readonly TradeFill[]): ClosedTrade[] {
  const book = new TradeBook();
  for (const f of fills) book.add(f);
  return book.trades;
}

export interface TradeStats {
  trades: number;
  wins: number;
  losses: number;
  /** wins / trades; undefined without trades. */
  winRate: Dec | undefined;
  grossProfit: Dec;
  /** Positive: the sum of the losing trades' losses. */
  grossLoss: Dec;
  /** grossProfit / grossLoss; undefined without losses. */
  profitFactor: Dec | undefined;
  /** Mean PnL per trade in quote; undefined without trades. */
  expectancy: Dec | undefined;
  pnl: Dec;
}

export function tradeStats(trades: readonly ClosedTrade[]): TradeStats {
  let wins = 0;
  let profit = ZERO;
  let loss = ZERO;
  for (const t of trades) {
    if (t.pnl.gt(0)) {
      wins++;
      profit = profit.plus(t.pnl);
    } else loss = loss.plus(t.pnl.neg());
  }
  const n = trades.length;
  const pnl = profit.minus(loss);
  return {
    trades: n,
    wins,
    losses: n - wins,
    winRate: n === 0 ? undefined : new D(wins).div(n),
    grossProfit: profit,
    grossLoss: loss,
    profitFactor: loss.isZero() ? undefined : profit.div(loss),
    expectancy: n === 0 ? undefined : pnl.div(n),
    pnl,
  };
}

/**
 * The stats of the trades grouped by a key (e.g. the entry or the exit tag), keys sorted, trades without one
 * under `none`.
 */
export function statsBy(
  trades: readonly ClosedTrade[],
  key: (t: ClosedTrade) => string | undefined,
  none = '(none)',
): { key: string; stats: TradeStats }[] {
  const groups = new Map<string, ClosedTrade[]>();
  for (const t of trades) {
    const k = key(t) ?? none;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(t);
  }
  return [...groups.keys()].sort().map((k) => ({ key: k, stats: tradeStats(groups.get(k) as ClosedTrade[]) }));
}
