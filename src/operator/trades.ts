/**
 * Closed trades and profit of the running daemon, from the journal's fills: the round trips of
 * market/round-trips.ts (the same definition as the backtest report's trades table), with each order's tag and
 * the pair's step, and profit per day, week or month (UTC, by exit time) in each quote asset: never summed
 * across quotes. Figures are rounded to the pair's precision for people; the journal keeps every digit.
 */
import { D, type Dec, plain, ZERO } from '../market/decimal.js';
import { roundedText, rounder } from '../market/display.js';
import type { PairRules } from '../market/pair-rules.js';
import { type ClosedTrade, closedTrades, type TradeFill, tradeStats } from '../market/round-trips.js';
import type { FillRow } from '../store/fills.js';
import type { OrderRow } from '../store/order-journal.js';

export type Period = 'day' | 'week' | 'month';

/** What a trade needs to know of its pair (the engine's rules, when the pair was loaded). */
export type RulesOf = (symbol: string) => PairRules | undefined;

export interface TradeSource {
  instances: readonly string[];
  fills: (instance: string) => FillRow[];
  order: (localId: string) => OrderRow | undefined;
  rules: RulesOf;
}

export interface Trade extends ClosedTrade {
  /** Closed trades counted in closing order from 1 (the `before` cursor of the trades list). */
  id: number;
  instance: string;
  symbol: string;
  quoteAsset: string | undefined;
}

/** One fill's fee in its pair's quote asset (a base fee valued at the fill's price), when it was paid. */
export interface FeePaid {
  time: number;
  quoteAsset: string;
  fee: Dec;
}

/** Every closed trade of the instances, oldest first, numbered in that order; and every fee paid. */
export function allTrades(src: TradeSource): { trades: Trade[]; fees: FeePaid[] } {
  const out: Omit<Trade, 'id'>[] = [];
  const fees: FeePaid[] = [];
  for (const instance of src.instances) {
    const orders = new Map<string, OrderRow | undefined>();
    const orderOf = (id: string) => {
      if (!orders.has(id)) orders.set(id, src.order(id));
      return orders.get(id);
    };
    const input: TradeFill[] = src.fills(instance).map((f) => {
      const rules = src.rules(f.symbol);
      const fee = new D(f.fee);
      const price = new D(f.price);
      if (f.feeIn !== 'other' && !fee.isZero())
        fees.push({
          time: f.time,
          quoteAsset: rules?.quoteAsset ?? '?',
          fee: f.feeIn === 'base' ? fee.mul(price) : fee,
        });
      return {
        book: `${instance}/${f.symbol}`,
        side: f.side,
        price,
        quantity: new D(f.qty),
        fee,
        feeIn: f.feeIn,
        time: f.time,
        orderId: f.orderLocalId,
        tag: orderOf(f.orderLocalId)?.tag,
        closes: orderOf(f.orderLocalId)?.closes,
        step: rules?.stepSize,
      };
    });
    for (const t of closedTrades(input)) {
      const symbol = t.book.slice(instance.length + 1);
      out.push({ ...t, instance, symbol, quoteAsset: src.rules(symbol)?.quoteAsset });
    }
  }
  out.sort((a, b) => a.exitTime - b.exitTime || a.entryTime - b.entryTime || a.book.localeCompare(b.book));
  return { trades: out.map((t, i) => ({ ...t, id: i + 1 })), fees };
}

/** A trade as the API and the page show it: rounded to its pair's precision, times ISO 8601. */
export function tradeJson(t: Trade, rules: PairRules | undefined) {
  const r = rounder(rules);
  return {
    id: t.id,
    instance: t.instance,
    symbol: t.symbol,
    quoteAsset: t.quoteAsset ?? null,
    direction: t.direction,
    quantity: r.base(t.quantity),
    entryTime: new Date(t.entryTime).toISOString(),
    exitTime: new Date(t.exitTime).toISOString(),
    entryPrice: r.price(t.entryPrice),
    exitPrice: r.price(t.exitPrice),
    pnl: r.quote(t.pnl),
    pnlPct: t.pnlRatio === undefined ? null : plain(t.pnlRatio.mul(100).toDecimalPlaces(2)),
    durationMs: t.durationMs,
    entryTag: t.entryTag ?? null,
    exitTag: t.exitTag ?? null,
  };
}

const DAY_MS = 86_400_000;

/** The UTC start of the period that holds `ms`: the day, the ISO week (from Monday), the month. */
export function periodStart(ms: number, period: Period): number {
  const d = new Date(ms);
  if (period === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (period === 'day') return day;
  return day - ((d.getUTCDay() + 6) % 7) * DAY_MS;
}

/** The label of a period (`2024-01-02`, `2024-01-01` for the week from that Monday, `2024-01`). */
export function periodLabel(start: number, period: Period): string {
  const iso = new Date(start).toISOString();
  return period === 'month' ? iso.slice(0, 7) : iso.slice(0, 10);
}

export interface ProfitRow {
  period: string;
  start: number;
  quoteAsset: string;
  trades: number;
  wins: number;
  winRate: Dec | undefined;
  pnl: Dec;
  fees: Dec;
}

/**
 * Realised PnL (of the trades closed in the period, net of fees), trades, win rate, and the fees paid in the
 * period, per period and quote asset, newest period first.
 */
export function profitByPeriod(trades: readonly Trade[], fees: readonly FeePaid[], period: Period): ProfitRow[] {
  const groups = new Map<string, { start: number; quote: string; trades: Trade[]; fees: Dec }>();
  const group = (time: number, quote: string) => {
    const start = periodStart(time, period);
    const key = `${start}/${quote}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { start, quote, trades: [], fees: ZERO }));
    return g;
  };
  for (const t of trades) group(t.exitTime, t.quoteAsset ?? '?').trades.push(t);
  for (const f of fees) {
    const g = group(f.time, f.quoteAsset);
    g.fees = g.fees.plus(f.fee);
  }
  return [...groups.values()]
    .sort((a, b) => b.start - a.start || a.quote.localeCompare(b.quote))
    .map((g) => {
      const s = tradeStats(g.trades);
      return {
        period: periodLabel(g.start, period),
        start: g.start,
        quoteAsset: g.quote,
        trades: s.trades,
        wins: s.wins,
        winRate: s.winRate,
        pnl: s.pnl,
        fees: g.fees,
      };
    });
}

/** A profit row as JSON: quote amounts to `places` (the quote's precision), the win rate in percent. */
export function profitJson(row: ProfitRow, places: number | undefined) {
  const q = (d: Dec) => roundedText(d, places);
  return {
    period: row.period,
    start: new Date(row.start).toISOString(),
    quoteAsset: row.quoteAsset,
    trades: row.trades,
    wins: row.wins,
    winRatePct: row.winRate === undefined ? null : plain(row.winRate.mul(100).toDecimalPlaces(1)),
    pnl: q(row.pnl),
    fees: q(row.fees),
  };
}
