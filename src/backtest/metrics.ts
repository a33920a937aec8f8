/**
 * Performance metrics of a backtest, each a plain function of the run's equity samples or fills so that it
 * can be checked by hand.
 *
 * - Returns: exact decimals. Total return = final / initial equity - 1; buy-and-hold = last / first price - 1.
 * - Sharpe and Sortino: from the simple returns between consecutive equity samples (a fixed virtual interval,
 *   hourly by default), annualised by sqrt(periods per year) with 365-day years (crypto trades every day),
 *   risk-free rate 0. Sharpe = mean / sample standard deviation (n - 1); Sortino = mean / downside deviation,
 *   sqrt(sum(min(r, 0)^2) / n). Undefined when there are fewer than two returns or the deviation is zero.
 * - Round trips: fills are paired per instance and symbol, first in first out: a fill closes the oldest open
 *   lots of the opposite side and opens a lot with what is left (so selling base the run did not buy opens a
 *   short lot that a later buy closes). A fill counts with what it moved, fees included: a BUY the base it
 *   added (net of a base fee) for the quote it cost, a SELL the base it removed for the quote it brought
 *   (net of a quote fee). Each match of a closing fill against a lot is one round trip; its PnL is
 *   quantity x (the sell's net quote per unit - the buy's cost per unit). Win rate = round trips with
 *   PnL > 0 / all; profit factor = sum of gains / |sum of losses| (undefined without losses).
 * - Exposure: share of the run's time during which some instance had a non-zero net position (base bought
 *   minus sold by its fills; starting balances are not a position). Fee dust (a residue below the pair's
 *   quantity step, which no order can sell) does not count.
 */
import { D, type Dec, ZERO } from '../market/decimal.js';

const YEAR_MS = 365 * 86_400_000;

export interface TradeFill {
  /** Instance and symbol: lots are kept per both. */
  book: string;
  side: 'BUY' | 'SELL';
  /** Base the fill added (BUY) or removed (SELL), fees included. */
  quantity: Dec;
  /** A net position smaller than this (the pair's quantity step) is fee dust, not exposure. */
  dust?: Dec;
  /** Quote the fill cost (BUY) or brought (SELL), fees included. */
  value: Dec;
  time: number;
}

export interface RoundTrip {
  book: string;
  direction: 'long' | 'short';
  quantity: Dec;
  /** Quote per unit, fees included. */
  entryPrice: Dec;
  exitPrice: Dec;
  entryTime: number;
  exitTime: number;
  pnl: Dec;
}

interface Lot {
  side: 'BUY' | 'SELL';
  price: Dec;
  /** Left open. */
  quantity: Dec;
  time: number;
}

/** FIFO round trips of fills given in time order (see the module doc). */
export function roundTrips(fills: readonly TradeFill[]): RoundTrip[] {
  const books = new Map<string, Lot[]>();
  const trips: RoundTrip[] = [];
  for (const f of fills) {
    let lots = books.get(f.book);
    if (!lots) books.set(f.book, (lots = []));
    if (f.quantity.isZero()) continue;
    const price = f.value.div(f.quantity);
    let left = f.quantity;
    while (left.gt(0) && lots.length > 0 && (lots[0] as Lot).side !== f.side) {
      const lot = lots[0] as Lot;
      const q = D.min(left, lot.quantity);
      const long = lot.side === 'BUY';
      trips.push({
        book: f.book,
        direction: long ? 'long' : 'short',
        quantity: q,
        entryPrice: lot.price,
        exitPrice: price,
        entryTime: lot.time,
        exitTime: f.time,
        pnl: (long ? price.minus(lot.price) : lot.price.minus(price)).mul(q),
      });
      lot.quantity = lot.quantity.minus(q);
      left = left.minus(q);
      if (lot.quantity.isZero()) lots.shift();
    }
    if (left.gt(0)) lots.push({ side: f.side, price, quantity: left, time: f.time });
  }
  return trips;
}

export interface TradeStats {
  roundTrips: number;
  wins: number;
  /** Undefined without round trips. */
  winRate: Dec | undefined;
  grossProfit: Dec;
  grossLoss: Dec;
  /** Undefined without losses. */
  profitFactor: Dec | undefined;
}

export function tradeStats(trips: readonly RoundTrip[]): TradeStats {
  let wins = 0;
  let profit = ZERO;
  let loss = ZERO;
  for (const t of trips) {
    if (t.pnl.gt(0)) {
      wins++;
      profit = profit.plus(t.pnl);
    } else loss = loss.plus(t.pnl.neg());
  }
  return {
    roundTrips: trips.length,
    wins,
    winRate: trips.length === 0 ? undefined : new D(wins).div(trips.length),
    grossProfit: profit,
    grossLoss: loss,
    profitFactor: loss.isZero() ? undefined : profit.div(loss),
  };
}

/** Share of [start, end] during which some book's net position (bought - sold) was not zero. */
export function exposure(fills: readonly TradeFill[], start: number, end: number): number {
  if (end <= start) return 0;
  const net = new Map<string, Dec>();
  let nonZero = 0;
  let since = start;
  let exposed = 0;
  for (const f of fills) {
    const before = net.get(f.book) ?? ZERO;
    const after = f.side === 'BUY' ? before.plus(f.quantity) : before.minus(f.quantity);
    net.set(f.book, after);
    const was = nonZero;
    const flat = (q: Dec) => (f.dust ? q.abs().lt(f.dust) : q.isZero());
    nonZero += (flat(after) ? 0 : 1) - (flat(before) ? 0 : 1);
    if (was === 0 && nonZero > 0) since = f.time;
    else if (was > 0 && nonZero === 0) exposed += f.time - since;
  }
  if (nonZero > 0) exposed += end - since;
  return exposed / (end - start);
}

export interface RiskRatios {
  sharpe: number | undefined;
  sortino: number | undefined;
}

/** Annualised Sharpe and Sortino of an equity series sampled every `intervalMs` (see the module doc). */
export function riskRatios(equity: readonly Dec[], intervalMs: number): RiskRatios {
  const returns: number[] = [];
  for (let i = 1; i < equity.length; i++) {
    const previous = equity[i - 1] as Dec;
    if (previous.gt(0)) returns.push((equity[i] as Dec).div(previous).minus(1).toNumber());
  }
  const n = returns.length;
  if (n < 2) return { sharpe: undefined, sortino: undefined };
  const mean = returns.reduce((s, r) => s + r, 0) / n;
  const variance = returns.reduce((s, r) => s + (r - mean) ** 2, 0) / (n - 1);
  const downside = Math.sqrt(returns.reduce((s, r) => s + Math.min(r, 0) ** 2, 0) / n);
  const annual = Math.sqrt(YEAR_MS / intervalMs);
  const sd = Math.sqrt(variance);
  return {
    sharpe: sd > 0 ? (mean / sd) * annual : undefined,
    sortino: downside > 0 ? (mean / downside) * annual : undefined,
  };
}

/** (to - from) / from, exact; undefined when from is zero. */
export function change(from: Dec, to: Dec): Dec | undefined {
  return from.isZero() ? undefined : to.minus(from).div(from);
}
