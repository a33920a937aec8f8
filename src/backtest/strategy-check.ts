/**
 * `bot check-strategy`: does a strategy's result depend on where its run starts, or on data after a decision?
 * (Freqtrade's recursive-analysis and lookahead-analysis, on this engine.) Every run is a backtest on the same
 * recording, each warmed up as a backtest from --from is (the data before its start builds candles and
 * indicators, warmUpMs of it):
 *
 * - the reference: from the first moment the data holds a whole warm-up (or --from), to the end;
 * - runs from later starts: every indicator value they read must agree with the reference's for the same
 *   candle (within `tolerance` of the largest size that value takes in the reference: converged indicators
 *   agree to about a ten-thousandth), and their first decision (the first order placed) with the reference's
 *   first decision after that start. Each start is moved on to a ticker the reference observed just after
 *   which it holds no position and no open order, so both decide from the same place on the same data (a start
 *   inside a trade would differ by design; where the reference is never flat again, only the indicators are
 *   compared);
 * - runs on the data cut just after a decision of the reference: every order placed up to that decision and
 *   every indicator value read must be the reference's exactly. A difference there means something the
 *   strategy used at that moment came from after it.
 *
 * The strategy's hooks are the module's own; onTick is wrapped to read ctx.indicators (and the ticker seen) after
 * each call.
 */
import { BotError } from '../errors.js';
import type { InstanceSpec } from '../engine/instance-runner.js';
import type { IndicatorView } from '../strategy/indicators.js';
import type { StrategyContext } from '../strategy/context.js';
import { isActive, type OrderRow } from '../store/order-journal.js';
import { warmUpMs } from '../strategy/candle-needs.js';
import { type Dec, ZERO } from '../market/decimal.js';
import { type BacktestRun, type BacktestSettings, backtestMarket, runBacktest } from './runner.js';
import { belowMinimum, type PairRules, pairRulesFrom } from '../market/pair-rules.js';
import { firstTickAt, sliceTicks, type TickData } from './tick-data.js';
import { iso } from './summary.js';
import { valueAt } from './number-column.js';

export interface CheckOptions {
  /** Runs from later starts (evenly spread over the reference's span). */
  starts: number;
  /** Runs on the data cut after a decision of the reference (evenly chosen among its decisions). */
  cuts: number;
  /** How far a later start's indicator value may be from the reference's, a share of the value's size. */
  tolerance: number;
  /** After each run: runs done, of all. */
  onProgress?: (done: number, total: number, what: string) => void;
}

export const DEFAULT_CHECK: Omit<CheckOptions, 'onProgress'> = { starts: 3, cuts: 5, tolerance: 1e-3 };

export interface IndicatorDifference {
  /** The run's start (later starts) or cut (cuts), epoch ms. */
  run: number;
  kind: 'start' | 'cut';
  instance: string;
  indicator: string;
  /** Open time of the candle the value is of. */
  candle: number;
  reference: unknown;
  found: unknown;
}

export interface DecisionDifference {
  run: number;
  kind: 'start' | 'cut';
  /** The decisions (orders placed) as text, null: none. */
  reference: string | null;
  found: string | null;
}

export interface StrategyCheck {
  warmUpMs: number;
  reference: { from: number; to: number; decisions: number };
  /**
   * The later starts, each moved on to a moment the reference was flat (`flat`), else left where asked (its
   * indicators compared, not its decisions).
   */
  starts: { asked: number; from: number; flat: boolean }[];
  cuts: number[];
  /** Indicator values and decisions compared. */
  compared: { values: number; decisions: number };
  indicators: IndicatorDifference[];
  decisions: DecisionDifference[];
}

/** A holding worth less than this share of the starting equity is fee dust (a buy's base fee leaves some). */
const DUST = 1e-4;

/** What a run's instances read: `instance\tindicator\tcandle` -> value (null: not ready). */
type Readings = Map<string, unknown>;

/**
 * The instances with onTick wrapped to record their indicators after each call, and the times of the tickers they
 * saw (on candle data, the closes: a run can start only at an observation).
 */
function recorded(instances: readonly InstanceSpec[], readings: Readings, seen: Set<number>): InstanceSpec[] {
  return instances.map((i) => {
    const definition = i.definition;
    const name = i.config.name;
    const onTick = async (ctx: StrategyContext) => {
      if (ctx.ticker !== undefined) seen.add(ctx.ticker.time);
      await definition.onTick.call(definition, ctx);
      for (const [key, view] of Object.entries(ctx.indicators as Record<string, IndicatorView<unknown>>))
        if (Number.isFinite(view.time)) readings.set(`${name}\t${key}\t${view.time}`, view.value ?? null);
    };
    return { ...i, definition: { ...definition, onTick } };
  });
}

/** A decision as text: what was ordered, when, by which instance. */
function decision(o: OrderRow): string {
  const size = o.quantity ?? (o.quoteAmount === undefined ? '' : `quote ${o.quoteAmount}`);
  const price = o.price ?? o.stopPrice ?? '';
  return [new Date(o.createdAt).toISOString(), o.instance, o.side, o.type, price, size, o.tag ?? '']
    .filter((s) => s !== '')
    .join(' ');
}

/** Every number in a value (an indicator's: a number, or an object of numbers such as bands). */
function numbers(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(numbers);
  return [];
}

/**
 * Whether the reference holds nothing but fee dust (under the pair's minimum quantity or order value, or worth
 * less than DUST of the starting equity, at its last fill's price) and has no order open at `t`.
 */
function flatAt(run: BacktestRun, rules: ReadonlyMap<string, PairRules>, t: number): boolean {
  for (const o of run.orders) if (o.createdAt < t && (isActive(o.status) || o.updatedAt >= t)) return false;
  const held = new Map<string, { quantity: Dec; price: Dec }>();
  for (const f of run.fills) {
    if (f.time >= t) break;
    const quantity = (held.get(f.symbol)?.quantity ?? ZERO)[f.side === 'BUY' ? 'plus' : 'minus'](f.baseQty);
    held.set(f.symbol, { quantity, price: f.price });
  }
  const dust = run.initialEquity.mul(DUST);
  for (const [symbol, { quantity, price }] of held)
    if (!belowMinimum(rules.get(symbol) as PairRules, quantity.abs(), price) && quantity.abs().mul(price).gte(dust))
      return false;
  return true;
}

/**
 * The first time at or after `t` (before `end`) the reference observed a ticker just after which it is flat: the
 * first observation at or after `t` or at or after one of its events (a fill, an order's last change). A run from
 * there has its first price at that moment, as the reference has, so their next decisions are made on the same
 * data (a start between two observations would be a run with nothing to decide on until the next, where the
 * reference decided on the one before).
 */
function nextFlat(
  run: BacktestRun,
  rules: ReadonlyMap<string, PairRules>,
  observed: readonly number[],
  t: number,
  end: number,
): number | null {
  // A fill happens at a tick: the reference is flat just after the tick that closed its trade.
  const events = [t, ...run.fills.map((f) => f.time), ...run.orders.map((o) => o.updatedAt)]
    .filter((e) => e >= t && e < end)
    .sort((a, b) => a - b);
  for (const e of events) {
    const tick = atOrAfter(observed, e);
    if (tick !== null && tick < end && flatAt(run, rules, tick + 1)) return tick;
  }
  return null;
}

/** The first of `times` (ascending) at or after `t`, null when none. */
function atOrAfter(times: readonly number[], t: number): number | null {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((times[mid] as number) < t) lo = mid + 1;
    else hi = mid;
  }
  return lo < times.length ? (times[lo] as number) : null;
}

export async function checkStrategy(
  instances: readonly InstanceSpec[],
  data: TickData,
  settings: BacktestSettings,
  options: CheckOptions,
): Promise<StrategyCheck> {
  if (data.length === 0) throw new BotError('E_BACKTEST_DATA', 'check-strategy: no ticks in the data');
  const warm = warmUpMs(instances);
  const { time } = data.columns;
  const first = valueAt(time, 0);
  const end = valueAt(time, data.length - 1) + 1;
  const from = Math.max(first + warm, settings.start ?? -Infinity);
  if (from >= end)
    throw new BotError(
      'E_BACKTEST_DATA',
      `check-strategy: the data (${iso(first)} to ${iso(end)}) is no longer than the strategies' warm-up ` +
        `(${Math.round(warm / 60_000)} minutes before their first decision): give more data`,
    );
  const total = 1 + options.starts + options.cuts;
  let done = 0;
  const run = async (start: number, to: number, what: string) => {
    const readings: Readings = new Map();
    const seen = new Set<number>();
    const result = await runBacktest(recorded(instances, readings, seen), sliceTicks(data, start - warm, to), {
      ...settings,
      start,
    });
    options.onProgress?.(++done, total, what);
    return { run: result, readings, observed: [...seen].sort((a, b) => a - b) };
  };

  const reference = await run(from, end, 'the reference run');
  const symbols = reference.run.symbols;
  const rules = new Map(
    backtestMarket(symbols, data)
      .pairs.filter((p) => symbols.includes(p.symbol))
      .map((p) => [p.symbol, pairRulesFrom(p)]),
  );
  const placed = reference.run.orders.filter((o) => o.instance !== undefined);
  const out: StrategyCheck = {
    warmUpMs: warm,
    reference: { from, to: end, decisions: placed.length },
    starts: [],
    cuts: [],
    compared: { values: 0, decisions: 0 },
    indicators: [],
    decisions: [],
  };
  // Each indicator field's largest size in the reference: the scale a later start's difference is measured on.
  const scale = new Map<string, number>();
  for (const [key, value] of reference.readings) {
    const series = key.slice(0, key.lastIndexOf('\t'));
    for (const n of numbers(value)) scale.set(series, Math.max(scale.get(series) ?? 0, Math.abs(n)));
  }
  const compare = (readings: Readings, at: number, kind: 'start' | 'cut') => {
    for (const [key, found] of readings) {
      if (!reference.readings.has(key)) continue;
      const want = reference.readings.get(key);
      const [a, b] = [numbers(want), numbers(found)];
      const bound = kind === 'cut' ? 0 : options.tolerance * (scale.get(key.slice(0, key.lastIndexOf('\t'))) ?? 0);
      const same = a.length === b.length && a.every((x, i) => Math.abs(x - (b[i] as number)) <= bound);
      out.compared.values++;
      if (!same) {
        const [instance, indicator, candle] = key.split('\t') as [string, string, string];
        out.indicators.push({ run: at, kind, instance, indicator, candle: Number(candle), reference: want, found });
      }
    }
  };

  for (let k = 1; k <= options.starts; k++) {
    const asked = Math.floor((from + ((end - from) * k) / (options.starts + 1)) / 60_000) * 60_000;
    const flat = nextFlat(reference.run, rules, reference.observed, asked, end);
    const start = flat ?? asked;
    out.starts.push({ asked, from: start, flat: flat !== null });
    const later = await run(start, end, `start ${k} (${iso(start)})`);
    compare(later.readings, start, 'start');
    if (flat === null) continue;
    // The reference's decisions at the start's own moment were made on the tick before it.
    const want = placed.find((o) => o.createdAt > start);
    const found = later.run.orders.find((o) => o.instance !== undefined);
    out.compared.decisions++;
    const [a, b] = [want && decision(want), found && decision(found)];
    if (a !== b) out.decisions.push({ run: start, kind: 'start', reference: a ?? null, found: b ?? null });
  }

  const times = [...new Set(placed.map((o) => o.createdAt))];
  const picks = times.length <= options.cuts ? times : spread(times, options.cuts);
  for (const [k, at] of picks.entries()) {
    // The data up to the decision's moment and the first tick at or after it: the replay fires what is due
    // before that tick, so the decision is made, and nothing of the market after it is in the run.
    const i = firstTickAt(data, at);
    const to = i < data.length ? valueAt(time, i) + 1 : end;
    out.cuts.push(at);
    const cut = await run(from, to, `cut ${k + 1} (${iso(at)})`);
    compare(cut.readings, at, 'cut');
    const upTo = (orders: readonly OrderRow[]) =>
      orders.filter((o) => o.instance !== undefined && o.createdAt <= at).map(decision);
    const [a, b] = [upTo(placed), upTo(cut.run.orders)];
    out.compared.decisions += a.length;
    const differs = a.findIndex((d, j) => d !== b[j]);
    const j = differs >= 0 ? differs : a.length !== b.length ? Math.min(a.length, b.length) : -1;
    if (j >= 0) out.decisions.push({ run: at, kind: 'cut', reference: a[j] ?? null, found: b[j] ?? null });
  }
  for (let k = picks.length; k < options.cuts; k++) options.onProgress?.(++done, total, 'no more decisions to cut at');
  return out;
}

/** `n` of `items`, evenly spread, the last included. */
function spread<T>(items: readonly T[], n: number): T[] {
  return Array.from({ length: n }, (_, k) => items[Math.round(((k + 1) * (items.length - 1)) / n)] as T);
}
