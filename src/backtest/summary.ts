/**
 * A run's results as summary.json holds them: the inputs (so a result says what produced it), the metrics
 * (exact decimals as strings; ratios and percentages at fixed places; Sharpe/Sortino, floats by nature, at
 * four places), the balances and the instances' end state. Every number is formatted here, once, so the
 * output is byte-identical for identical inputs.
 */
import type { InstanceSummary } from '../engine/engine.js';
import { type Dec, fromWire, ZERO } from '../market/decimal.js';
import type { SimFill } from '../sim/state.js';
import { closedTrades, type TradeFill, tradeStats } from '../market/round-trips.js';
import { change, exposure, riskRatios } from './metrics.js';
import type { JobSettings } from './job.js';
import type { BacktestRun } from './runner.js';
import type { RecordingFile } from './tick-data.js';

export interface ConfigInput {
  file: string;
  sha256: string;
  /** The strategy module the file ran, and its sha256. */
  module: { file: string; sha256: string };
  name: string;
  strategy: string;
  symbol: string;
  /** The strategy file as run (sweep overrides applied). */
  config: unknown;
}

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
  roundTrips: number;
  /** Every fee valued in the quote asset at its fill's price. */
  feesQuote: string;
  /** Fees by the asset they were paid in, exact. */
  fees: Record<string, string>;
  exposurePct: string;
}

/** The metrics that are one value each (not the fees by asset). */
export type ScalarMetric = Exclude<keyof Metrics, 'fees'>;

export interface BacktestSummary {
  inputs: BacktestInputs;
  period: { from: string; to: string; ticks: number; symbols: string[]; quoteAsset: string };
  metrics: Metrics;
  drawdown: { peakTime: string; peakEquity: string; troughTime: string; troughEquity: string } | null;
  balances: { initial: Record<string, string>; final: Record<string, string> };
  instances: InstanceSummary[];
}

const PLACES = 6;

/** One line per instance that did not run to the end ('stopped'): paused by an error, or refused at start. */
export function endedEarly(instances: readonly InstanceSummary[]): string[] {
  return instances
    .filter((i) => i.status !== 'stopped')
    .map((i) => `instance ${i.name} ended ${i.status}: ${i.reason ?? ''}`);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function pct(x: Dec | undefined): string | null {
  return x === undefined ? null : x.mul(100).toFixed(PLACES);
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
  const stats = tradeStats(closedTrades(trades));
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
  const dd = run.drawdown;
  return {
    inputs,
    period: {
      from: iso(run.firstTime),
      to: iso(run.lastTime),
      ticks: run.ticks,
      symbols: run.symbols,
      quoteAsset: run.quoteAsset,
    },
    metrics: {
      initialEquity: run.initialEquity.toFixed(),
      finalEquity: run.finalEquity.toFixed(),
      pnl: run.finalEquity.minus(run.initialEquity).toFixed(),
      totalReturnPct: pct(change(run.initialEquity, run.finalEquity)) ?? ZERO.toFixed(PLACES),
      buyAndHoldPct: pct(buyAndHold(run)) ?? ZERO.toFixed(PLACES),
      maxDrawdownPct: pct(dd && change(dd.peak.equity, dd.trough.equity)?.neg()) ?? ZERO.toFixed(PLACES),
      sharpe: fixed(ratios.sharpe),
      sortino: fixed(ratios.sortino),
      winRatePct: pct(stats.winRate),
      profitFactor: stats.profitFactor === undefined ? null : stats.profitFactor.toFixed(4),
      fills: run.fills.length,
      orders: run.orders.length,
      roundTrips: stats.trades,
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
    balances: { initial: texts(run.initial), final: texts(run.final) },
    instances: run.instances,
  };
}
