/**
 * A run's results as summary.json holds them: the inputs (so a result says what produced it), the metrics
 * (exact decimals as strings; ratios and percentages at fixed places; Sharpe/Sortino, floats by nature, at
 * four places), the balances and the instances' end state. Every number is formatted here, once, so the
 * output is byte-identical for identical inputs.
 */
import type { InstanceSummary } from '../engine/engine.js';
import { type Dec, fromWire, ZERO } from '../market/decimal.js';
import type { SimFill } from '../sim/state.js';
import {
  type ClosedTrade,
  closedTrades,
  pairingText,
  statsBy,
  type TradeFill,
  type TradeStats,
  tradeStats,
} from '../market/round-trips.js';
import {
  cagr,
  change,
  exposure,
  longestDrawdown,
  periodReturns,
  type ReturnPeriod,
  riskRatios,
} from './performance-metrics.js';
import type { RefusalGroup } from './run-log.js';
import type { JobSettings } from './job-settings.js';
import { type FillModel, fillModelOf } from './fill-model.js';
import type { BacktestRun } from './runner.js';
import type { ConfigInput } from './strategy-configs.js';
import type { RecordingFile } from './tick-data.js';

/** Everything a run depends on: the settings (balances resolved), the files with their hashes, the overrides. */
export interface BacktestInputs extends Required<JobSettings> {
  configs: ConfigInput[];
  data: RecordingFile[];
  /** Sweep overrides by params path, when this run is one combination of a sweep. */
  overrides: Record<string, unknown>;
}

export interface Metrics {
  initialEquity: string;
  finalEquity: string;
  pnl: string;
  totalReturnPct: string;
  buyAndHoldPct: string;
  maxDrawdownPct: string;
  sharpe: string | null;
  sortino: string | null;
  winRatePct: string | null;
  profitFactor: string | null;
  fills: number;
  orders: number;
  /** Closed trades (market/round-trips.ts: fee dust below the step makes none). */
  roundTrips: number;
  /** Mean PnL per closed trade, in quote. */
  expectancy: string | null;
  /** Compound annual growth of equity over the run's span, %. */
  cagrPct: string | null;
  /** CAGR over the max drawdown. */
  calmar: string | null;
  /** Every fee valued in the quote asset at its fill's price. */
  feesQuote: string;
  /** Fees by the asset they were paid in, exact. */
  fees: Record<string, string>;
  exposurePct: string;
}

/** The metrics that are one value each (not the fees by asset). */
export type ScalarMetric = Exclude<keyof Metrics, 'fees'>;

/** One closed trade as summary.json and trades.csv give it: prices and PnL exact to 8 places, PnL % to 4. */
export interface TradeRow {
  instance: string;
  symbol: string;
  direction: 'long' | 'short';
  entryTime: string;
  exitTime: string;
  durationMs: number;
  entryPrice: string;
  exitPrice: string;
  quantity: string;
  pnl: string;
  pnlPct: string | null;
  entryTag: string | null;
  exitTag: string | null;
}

export interface TradeGroup {
  tag: string;
  trades: number;
  winRatePct: string | null;
  pnl: string;
  profitFactor: string | null;
  expectancy: string | null;
}

/**
 * One instance's share of the run (a multi-pair file has one per pair): its closed trades, their PnL net of fees
 * and win rate, the fees of its fills in quote, and the share of the run's time it held a position. The run's
 * metrics are the total.
 */
export interface PairRow {
  instance: string;
  symbol: string;
  fills: number;
  trades: number;
  winRatePct: string | null;
  pnl: string;
  feesQuote: string;
  exposurePct: string;
}

/** A hook error (the instance paused): when in the data's time, what, and where in the strategy module. */
export interface HookErrorRow {
  instance: string;
  time: string;
  message: string;
  at: string | null;
}

/** A stretch of data time without a tick of `symbol`, longer than the run's --max-gap. */
export interface GapRow {
  symbol: string;
  from: string;
  to: string;
  ms: number;
}

/** The run's --max-gap bound and the gaps in the data it replayed (a sweep's combinations share them). */
export type DataGaps = Pick<BacktestSummary, 'maxGapMs' | 'gaps'>;

/**
 * What the machine outputs of a run say of their figures (summary.json, sweep.json, hyperopt.json; the CSV files
 * beside them): amounts as computed from the fills, never rounded to the pair's precision as the printed table and
 * report.html round them for people; a quotient (an average price, expectancy) to 8 places, percentages and ratios
 * to 4 or 6.
 */
export const MACHINE_PRECISION = 'full';

export interface BacktestSummary {
  /** MACHINE_PRECISION: the figures below are not rounded for display. */
  precision: typeof MACHINE_PRECISION;
  inputs: BacktestInputs;
  /** The assumptions the fills were made under (fill-model.ts). */
  fillModel: FillModel;
  period: {
    from: string;
    to: string;
    ticks: number;
    symbols: string[];
    quoteAsset: string;
    /** Decimal places of the quote asset in the pairs' rules: the printed table and the report round money to it. */
    quotePrecision: number;
  };
  /** The bound of `--max-gap` applied (ms of data time) and the gaps longer than it (data-gaps.ts), oldest first. */
  maxGapMs: number;
  gaps: GapRow[];
  metrics: Metrics;
  drawdown: { peakTime: string; peakEquity: string; troughTime: string; troughEquity: string } | null;
  /** The longest stretch under a previous peak (end null: not recovered by the end). */
  longestDrawdown: { start: string; end: string | null; days: string } | null;
  /** Each UTC day's, week's (from Monday) and month's return, %. */
  returns: Record<ReturnPeriod, { period: string; returnPct: string | null }[]>;
  balances: { initial: Record<string, string>; final: Record<string, string> };
  instances: InstanceSummary[];
  /** Each instance that did not run to the end, and why (endedEarly): a run with any has failed. */
  endedEarly: string[];
  /** Refused intents by instance, side and reason, most frequent first. */
  refusals: RefusalGroup[];
  /** Hook errors, each of which paused its instance. */
  errors: HookErrorRow[];
  /** Each instance's trades, PnL and exposure (PairRow), in the order of the strategy files. */
  pairs: PairRow[];
  trades: TradeRow[];
  /** How the closed trades pair entries with exits, in words (market/round-trips.ts). */
  pairing: string;
  /** Closed trades grouped by their entry order's tag and by their exit order's tag (the exit reason). */
  tradesByTag: { entry: TradeGroup[]; exit: TradeGroup[] };
}

const PLACES = 6;

/**
 * One line per instance that did not run to the end ('stopped'): paused by an error, or refused at start; with
 * the strategy file and line of the hook error that paused it, when known.
 */
export function endedEarly(instances: readonly InstanceSummary[], errors: readonly HookErrorRow[] = []): string[] {
  return instances
    .filter((i) => i.status !== 'stopped')
    .map((i) => {
      const at = errors.find((e) => e.instance === i.name && e.at !== null)?.at;
      return `instance ${i.name} ended ${i.status}: ${i.reason ?? ''}${at ? ` (at ${at})` : ''}`;
    });
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function pct(x: Dec | undefined): string | null {
  return x === undefined ? null : x.mul(100).toFixed(PLACES);
}

const MONEY_PLACES = 8;

function money(x: Dec): string {
  return x.toDecimalPlaces(MONEY_PLACES).toFixed();
}

function fixed(x: number | undefined, places = 4): string | null {
  return x === undefined || !Number.isFinite(x) ? null : x.toFixed(places);
}

function texts(balances: Readonly<Record<string, Dec>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const asset of Object.keys(balances).sort()) out[asset] = (balances[asset] as Dec).toFixed();
  return out;
}

/** The fee of a fill in the quote asset: base fees are valued at the fill's price. */
export function feeInQuote(f: SimFill, quoteAsset: string): Dec {
  return f.feeAsset.code === quoteAsset ? f.fee : f.fee.mul(f.price);
}

/** Fills as closed trades pair them: per instance and symbol, each with its order's id and tag and the pair's step. */
export function tradeFills(run: BacktestRun): TradeFill[] {
  return run.fills.map((f) => {
    const order = run.orderOwner.get(f.orderId);
    return {
      book: `${order?.instance ?? ''}/${f.symbol}`,
      side: f.side,
      price: f.price,
      quantity: f.baseQty,
      fee: f.fee,
      feeIn: f.feeAsset.code === run.quoteAsset ? 'quote' : 'base',
      time: f.time,
      orderId: order?.localId ?? String(f.orderId),
      tag: order?.tag,
      closes: order?.closes,
      step: run.quantitySteps.get(f.symbol),
    };
  });
}

/**
 * Buy and hold: the unit's symbols bought in equal parts at their first tick and held to their last, i.e. the
 * mean of their price changes (one symbol: its price change).
 */
export function buyAndHold(run: BacktestRun): Dec | undefined {
  let sum = ZERO;
  for (const { first, last } of run.priceRange) {
    const c = change(fromWire(first), fromWire(last));
    if (c === undefined) return undefined;
    sum = sum.plus(c);
  }
  return run.priceRange.length === 0 ? undefined : sum.div(run.priceRange.length);
}

export function summarize(run: BacktestRun, inputs: BacktestInputs): BacktestSummary {
  const trades = tradeFills(run);
  const closed = closedTrades(trades);
  const dd = run.drawdown;
  const stats = tradeStats(closed);
  const growth = cagr(run.initialEquity, run.finalEquity, run.lastTime - run.firstTime);
  const ddRatio = dd && change(dd.peak.equity, dd.trough.equity)?.neg();
  const longest = longestDrawdown(run.equity);
  const errors = run.log.hookErrors.map((e) => ({
    instance: e.instance,
    time: iso(e.time),
    message: e.message,
    at: e.at ?? null,
  }));
  const ratios = riskRatios(
    run.equity.map((s) => s.equity),
    inputs.sampleMs,
  );
  const fees: Record<string, Dec> = {};
  let feesQuote = ZERO;
  for (const f of run.fills) {
    fees[f.feeAsset.code] = fees[f.feeAsset.code]?.plus(f.fee) ?? f.fee;
    feesQuote = feesQuote.plus(feeInQuote(f, run.quoteAsset));
  }
  return {
    precision: MACHINE_PRECISION,
    inputs,
    fillModel: fillModelOf(inputs, run, inputs.data),
    period: {
      from: iso(run.firstTime),
      to: iso(run.lastTime),
      ticks: run.ticks,
      symbols: run.symbols,
      quoteAsset: run.quoteAsset,
      quotePrecision: run.quotePrecision,
    },
    maxGapMs: run.maxGapMs,
    gaps: run.gaps.map((g) => ({ symbol: g.symbol, from: iso(g.from), to: iso(g.to), ms: g.ms })),
    metrics: {
      initialEquity: run.initialEquity.toFixed(),
      finalEquity: run.finalEquity.toFixed(),
      pnl: run.finalEquity.minus(run.initialEquity).toFixed(),
      totalReturnPct: pct(change(run.initialEquity, run.finalEquity)) ?? ZERO.toFixed(PLACES),
      buyAndHoldPct: pct(buyAndHold(run)) ?? ZERO.toFixed(PLACES),
      maxDrawdownPct: pct(ddRatio) ?? ZERO.toFixed(PLACES),
      sharpe: fixed(ratios.sharpe),
      sortino: fixed(ratios.sortino),
      winRatePct: pct(stats.winRate),
      profitFactor: stats.profitFactor === undefined ? null : stats.profitFactor.toFixed(4),
      fills: run.fills.length,
      orders: run.orders.length,
      roundTrips: stats.trades,
      expectancy: stats.expectancy === undefined ? null : money(stats.expectancy),
      cagrPct: fixed(growth === undefined ? undefined : growth * 100),
      calmar: fixed(growth === undefined || !ddRatio?.gt(0) ? undefined : growth / ddRatio.toNumber()),
      feesQuote: feesQuote.toFixed(),
      fees: texts(fees),
      exposurePct: (exposure(trades, run.firstTime, run.lastTime) * 100).toFixed(4),
    },
    drawdown: dd
      ? {
          peakTime: iso(dd.peak.time),
          peakEquity: dd.peak.equity.toFixed(),
          troughTime: iso(dd.trough.time),
          troughEquity: dd.trough.equity.toFixed(),
        }
      : null,
    longestDrawdown: longest
      ? {
          start: iso(longest.start),
          end: longest.end === undefined ? null : iso(longest.end),
          days: (longest.durationMs / 86_400_000).toFixed(2),
        }
      : null,
    returns: {
      day: returnsOf(run, 'day'),
      week: returnsOf(run, 'week'),
      month: returnsOf(run, 'month'),
    },
    balances: { initial: texts(run.initial), final: texts(run.final) },
    instances: run.instances,
    endedEarly: endedEarly(run.instances, errors),
    refusals: run.log.refusals(),
    errors,
    pairs: pairRows(run, trades, closed),
    trades: closed.map(tradeRow),
    pairing: pairingText(trades),
    tradesByTag: {
      entry: statsBy(closed, (t) => t.entryTag).map(({ key, stats }) => tradeGroup(key, stats)),
      exit: statsBy(closed, (t) => t.exitTag).map(({ key, stats }) => tradeGroup(key, stats)),
    },
  };
}

function pairRows(run: BacktestRun, fills: readonly TradeFill[], closed: readonly ClosedTrade[]): PairRow[] {
  return run.instances.map(({ name, symbol }) => {
    const book = `${name}/${symbol}`;
    const own = fills.filter((f) => f.book === book);
    const stats = tradeStats(closed.filter((t) => t.book === book));
    let fees = ZERO;
    for (const f of own) fees = fees.plus(f.feeIn === 'quote' ? f.fee : f.fee.mul(f.price));
    return {
      instance: name,
      symbol,
      fills: own.length,
      trades: stats.trades,
      winRatePct: pct(stats.winRate),
      pnl: money(stats.pnl),
      feesQuote: fees.toFixed(),
      exposurePct: (exposure(own, run.firstTime, run.lastTime) * 100).toFixed(4),
    };
  });
}

function returnsOf(run: BacktestRun, period: ReturnPeriod): { period: string; returnPct: string | null }[] {
  return periodReturns(run.equity, period).map((r) => ({ period: r.period, returnPct: pct(r.ret) }));
}

export function tradeRow(t: ClosedTrade): TradeRow {
  const slash = t.book.lastIndexOf('/');
  return {
    instance: t.book.slice(0, slash),
    symbol: t.book.slice(slash + 1),
    direction: t.direction,
    entryTime: iso(t.entryTime),
    exitTime: iso(t.exitTime),
    durationMs: t.durationMs,
    entryPrice: money(t.entryPrice),
    exitPrice: money(t.exitPrice),
    quantity: t.quantity.toFixed(),
    pnl: money(t.pnl),
    pnlPct: t.pnlRatio === undefined ? null : t.pnlRatio.mul(100).toFixed(4),
    entryTag: t.entryTag ?? null,
    exitTag: t.exitTag ?? null,
  };
}

function tradeGroup(tag: string, s: TradeStats): TradeGroup {
  return {
    tag,
    trades: s.trades,
    winRatePct: pct(s.winRate),
    pnl: money(s.pnl),
    profitFactor: s.profitFactor === undefined ? null : s.profitFactor.toFixed(4),
    expectancy: s.expectancy === undefined ? null : money(s.expectancy),
  };
}
