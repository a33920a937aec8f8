/**
 * One backtest: the real Engine with the real strategies, on one account of the simulated exchange's
 * MatchingEngine (in process, through InProcessVenue), a ':memory:' store and a virtual clock, driven tick by
 * tick by the Replay (replay.ts). Nothing here reads the wall clock or sleeps.
 */
import { watchedSymbols } from '../strategy/candle-needs.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import { BotError } from '../errors.js';
import { Engine, type InstanceSummary } from '../engine/engine.js';
import type { InstanceSpec } from '../engine/instance-runner.js';
import { type Dec, ZERO } from '../market/decimal.js';
import type { Venue } from '../ports/venue.js';
import { InProcessVenue } from '../venues/in-process-venue.js';
import { MatchingEngine } from '../sim/matching-engine.js';
import { replayMarket } from '../sim/pair-market.js';
import { stepOf } from '../sim/data-step.js';
import type { PairConfig } from '../ports/venue-records.js';
import type { SimFill } from '../sim/state.js';
import type { OrderRow } from '../store/order-journal.js';
import { openStore, type Store } from '../store/store.js';
import { ChartSeries, chartCandles, chartNeeds, REPORT_SLOTS, reportTimeframe } from './chart-series.js';
import { TIMEFRAME_MS } from '../market/candles.js';
import { type ChartData, chartData } from '../strategy/indicator-chart.js';
import { type DrawdownPoint, type EquitySample, EquityTracker } from './equity-tracker.js';
import { type DataGap, defaultMaxGapMs, findGaps, GapSamples } from './data-gaps.js';
import { NoCancelVenue } from '../venues/no-cancel-venue.js';
import { assetTotals, BalanceReader, Replay, ReplayParts } from './replay.js';
import { RunLog } from './run-log.js';
import type { TickData } from './tick-data.js';
import { VirtualClock } from '../clocks/virtual-clock.js';
import { DEFAULT_DAEMON_SCHEDULE, type DaemonSchedule } from '../config/env.js';
import { ScheduledReplay } from './scheduled-replay.js';
import { marketTicker } from './market-entries.js';
import { type CandleTicks, candleTicks, type CandleWalks } from './candle-ticks.js';
import { type CandlePath, DEFAULT_CANDLE_PATH } from '../sim/candle-path.js';
import { valueAt } from './number-column.js';

const API_KEY = 'backtest';

export interface BacktestSettings {
  /** Starting balances by asset code, exact text. */
  balances: Readonly<Record<string, string>>;
  /** Maker and taker fee ratios (default 0.001 each, the exchange's); a pair whose configuration carries fees keeps them. */
  makerFee?: string;
  takerFee?: string;
  /** Ticks a resting limit must be traded through to fill (default 1). */
  fillThroughTicks?: number;
  /** Data-time delay before an order reaches the book (default: one step of the data, see sim/data-step.ts). */
  latencyMs?: number;
  /** Taker slippage in basis points (default 0). */
  slippageBps?: string;
  /** The path inside a candle, on data imported from candles (default DEFAULT_CANDLE_PATH, sim/candle-path.ts). */
  candlePath?: CandlePath;
  /**
   * Share of a tick's traded base volume resting fills may take, a ratio in (0, 1], on data that carry it
   * (candles); null or absent: no cap.
   */
  participation?: string | null;
  /** false: the venue has no cancel (strategies that require it are refused). Default true. */
  cancel?: boolean;
  /**
   * Every instance sees every tick, and pair configs and balances are re-read at every multiple of refreshMs
   * (the loop before schedules were applied). Default false: each instance's schedule applies, as on paper.
   */
  everyTick?: boolean;
  /** Pair configs and balances are re-read at every multiple of this in the every-tick loop (default 60 s). */
  refreshMs?: number;
  /** The daemon's orders poll and refresh schedules (default its defaults: ORDERS_POLL, REFRESH). */
  jobs?: DaemonSchedule;
  /** The equity curve is sampled at every multiple of this (default one hour). */
  sampleMs?: number;
  /** Longer stretches without a tick of a symbol are gaps (data-gaps.ts; default 4 data steps, at least 60 s). */
  maxGapMs?: number;
  /**
   * Epoch ms at which trading starts: ticks before it only build the strategies' candles (their warm-up), as
   * the data before a daemon's start would have. Default: the first tick.
   */
  start?: number;
}

/** One order or fill as a parity test compares them with the daemon's. */
export interface TraceEntry {
  time: number;
  type: string;
  side: string;
  price: string | undefined;
  quantity: string | undefined;
}

export interface BacktestRun {
  symbols: string[];
  /** The latency the matching engine applied (ms of data time), and the data's step it defaults to. */
  latencyMs: number;
  dataStepMs: number;
  /** The candle path applied, and to how many candles (null and 0 when the data hold none). */
  candlePath: CandlePath | null;
  candles: number;
  /** The participation cap applied (a ratio), null when none (off, or no volume per tick in the data). */
  participation: string | null;
  /** Each symbol's quantity step (a net position below it is fee dust, not exposure). */
  quantitySteps: ReadonlyMap<string, Dec>;
  quoteAsset: string;
  /** The quote asset's precision (decimal places) in the pairs' rules: money is shown to it. */
  quotePrecision: number;
  baseAssets: string[];
  ticks: number;
  firstTime: number;
  lastTime: number;
  /** Per symbol (in `symbols` order): its price at its first and at its last tick replayed. */
  priceRange: { symbol: string; first: number; last: number }[];
  initial: Record<string, Dec>;
  final: Record<string, Dec>;
  initialEquity: Dec;
  finalEquity: Dec;
  /**
   * At the first tick, at every sampleMs boundary (the state before the boundary's first tick) but those inside
   * a gap past maxGapMs, at the end.
   */
  equity: EquitySample[];
  /** The bound applied, and the gaps in the data replayed (from the first traded tick on) longer than it. */
  maxGapMs: number;
  gaps: DataGap[];
  /** Per symbol (in `symbols` order): its downsampled price, with the equity at those ticks, for the report. */
  /**
   * Each symbol's chart (report.html): its candles at the report's timeframe from the run's start and its instances'
   * indicators on them, and the equity after the last tick of each of its candles: [candle's start, that tick's
   * time, equity].
   */
  charts: { symbol: string; chart: ChartData; equity: [number, number, number][] }[];
  /** The deepest fall of equity from a previous peak over all ticks, exact at both ends. */
  drawdown: { peak: DrawdownPoint; trough: DrawdownPoint } | undefined;
  /** Every fill of the account, oldest first, exact. */
  fills: readonly SimFill[];
  /** Every journal row, in placement order. */
  orders: OrderRow[];
  /** The instance (and tag) of each venue order id. */
  orderOwner: ReadonlyMap<number, OrderRow>;
  instances: InstanceSummary[];
  /** The order and fill sequence, for parity with the daemon (storeTrace). */
  trace: Trace;
  /** The run's log (data-time stamped), its refusals by reason and its hook errors. */
  log: RunLog;
  /** The same per instance, by name. */
  traces: Map<string, Trace>;
}

export interface RunOptions {
  /** Called every 65,536 ticks and at the end. */
  onProgress?: (done: number, total: number) => void;
  /** The strategy module files run, so a hook error in the log names its line in them. */
  moduleFiles?: readonly string[];
  /** false: count refusals and hook errors, keep no log lines (a sweep's combinations). Default true. */
  keepLog?: boolean;
  /**
   * true: no other reader sees the data's columns during the run (no worker thread shares them), so the candle
   * path is walked on them in place and undone after the run, instead of on copies (candle-ticks.ts). Default false.
   */
  inPlace?: boolean;
  /** The candle walks of earlier runs on the same data, to take instead of walking again (a sweep's worker). */
  walks?: CandleWalks;
  /**
   * false: no report chart is gathered (`charts` is empty): a sweep's combinations, whose page draws their equity
   * curves, not report.html. Default true.
   */
  charts?: boolean;
}

/** Per symbol of the data (by index): how many ticks it has from `from` on, and the index of its first (one pass). */
function symbolTicks(data: TickData, from: number): { count: Int32Array; first: Int32Array } {
  const count = new Int32Array(data.symbols.length);
  const first = new Int32Array(data.symbols.length).fill(-1);
  const sym = data.columns.sym;
  for (let i = from; i < data.length; i++) {
    const s = sym[i] as number;
    if (count[s]!++ === 0) first[s] = i;
  }
  return { count, first };
}

/** The times of one symbol's ticks, in order. */
function* symbolTimes(data: TickData, s: number): Generator<number> {
  const { sym, time } = data.columns;
  for (let i = 0; i < data.length; i++) if (sym[i] === s) yield valueAt(time, i);
}

export interface Trace {
  orders: TraceEntry[];
  fills: TraceEntry[];
}

/**
 * The orders (as journaled) and fills (as recorded) of some instances, read from a store: the same function
 * reads a backtest's store and a daemon's database, so a parity test compares like with like. Fills are in
 * time order, ties in instance-name then recording order. `rows`: the store's order rows read already (all()).
 */
export function storeTrace(
  store: Store,
  instances: readonly string[],
  rows: readonly OrderRow[] = store.orders.all(),
): Trace {
  const byId = new Map(rows.map((r) => [r.localId, r]));
  const fills = [...instances]
    .sort()
    .flatMap((name) => store.fills.forInstance(name))
    .sort((a, b) => a.time - b.time);
  return {
    orders: rows
      .filter((o) => o.instance !== undefined && instances.includes(o.instance))
      .map((o) => ({
        time: o.createdAt,
        type: o.type,
        side: o.side,
        price: o.price,
        quantity: o.quantity ?? (o.quoteAmount === undefined ? undefined : `quote:${o.quoteAmount}`),
      })),
    fills: fills.map((f) => ({
      time: f.time,
      type: byId.get(f.orderLocalId)?.type ?? 'UNKNOWN',
      side: f.side,
      price: f.price,
      quantity: f.qty,
    })),
  };
}

/**
 * Exact accounting: each asset's final total (free + locked) must be the initial amount plus what the fills
 * brought in minus what they paid out and their fees. A difference is a bug, never rounding: it throws.
 */
export function checkAccounting(
  initial: Readonly<Record<string, Dec>>,
  final: Readonly<Record<string, Dec>>,
  fills: readonly SimFill[],
  pairs: ReadonlyMap<string, { base: string; quote: string }>,
): void {
  const expected = new Map<string, Dec>(Object.entries(initial));
  const add = (asset: string, amount: Dec) => expected.set(asset, (expected.get(asset) ?? ZERO).plus(amount));
  for (const f of fills) {
    const pair = pairs.get(f.symbol);
    if (!pair) throw new BotError('E_BACKTEST_ACCOUNTING', `fill ${f.id} on unknown pair ${f.symbol}`);
    const buy = f.side === 'BUY';
    add(pair.base, buy ? f.baseQty : f.baseQty.neg());
    add(pair.quote, buy ? f.quoteQty.neg() : f.quoteQty);
    add(f.feeAsset.code, f.fee.neg());
  }
  const problems: string[] = [];
  for (const asset of [...new Set([...expected.keys(), ...Object.keys(final)])].sort()) {
    const want = expected.get(asset) ?? ZERO;
    const have = final[asset] ?? ZERO;
    if (!want.eq(have))
      problems.push(
        `${asset}: expected ${want.toFixed()} (initial + fills - fees), the account holds ${have.toFixed()}`,
      );
  }
  if (problems.length > 0)
    throw new BotError('E_BACKTEST_ACCOUNTING', `accounting mismatch: ${problems.join('; ')}`, {
      context: { problems },
    });
}

/** Runs one backtest of `instances` (one engine, one account) over the ticks of their symbols in `data`. */
export async function runBacktest(
  instances: readonly InstanceSpec[],
  recorded: TickData,
  settings: BacktestSettings,
  options: RunOptions = {},
): Promise<BacktestRun> {
  if (instances.length === 0) throw new BotError('E_USAGE', 'a backtest needs at least one strategy file');
  const candlePath = settings.candlePath ?? DEFAULT_CANDLE_PATH;
  // The data's step from the times as recorded: the walk moves a candle's extremes to its close.
  const s = recorded.symbols.findIndex((info) => info.symbol === instances[0]!.config.symbol);
  const dataStepMs = s < 0 ? 0 : stepOf(symbolTimes(recorded, s));
  const walked =
    options.walks !== undefined
      ? options.walks.of(recorded, candlePath)
      : candleTicks(recorded, candlePath, options.inPlace === true);
  try {
    return await runWalked(instances, walked, candlePath, dataStepMs, settings, options);
  } finally {
    walked.restore();
  }
}

/** runBacktest on the ticks walked by the candle path. */
async function runWalked(
  instances: readonly InstanceSpec[],
  { data, volume, candles }: CandleTicks,
  candlePath: CandlePath,
  /** The usual time between two recorded ticks of the unit's first symbol (sim/data-step.ts). */
  dataStepMs: number,
  settings: BacktestSettings,
  options: RunOptions,
): Promise<BacktestRun> {
  const participation = volume === undefined ? null : (settings.participation ?? null);
  const refreshMs = settings.refreshMs ?? 60_000;
  const sampleMs = settings.sampleMs ?? 3_600_000;
  const { symbols, pairs, quoteAsset, symIndex, market } = unitSymbols(instances, data);
  const slot = new Int32Array(data.symbols.length).fill(-1);
  symIndex.forEach((s, k) => (slot[s] = k));
  const { sym, time, price } = data.columns;
  const warmFrom = settings.start === undefined ? 0 : unitTickFrom(data, slot, 0, -Infinity);
  const from = settings.start === undefined ? 0 : unitTickFrom(data, slot, 0, settings.start);
  if (from === data.length)
    throw new BotError('E_BACKTEST_DATA', `no ticks of ${symbols.join(', ')} at or after the start of the backtest`);
  const ticks = symbolTicks(data, from);
  const total = symIndex.reduce((n, s) => n + (ticks.count[s] as number), 0);
  // Every symbol of the unit has ticks in the data (unitSymbols checked it); those before the start warm up.
  const first = Math.min(
    ...symIndex.filter((s) => (ticks.first[s] as number) >= 0).map((s) => ticks.first[s] as number),
  );

  const clock = new VirtualClock(valueAt(time, first));
  const latencyMs = settings.latencyMs ?? dataStepMs;
  const maxGapMs = settings.maxGapMs ?? defaultMaxGapMs(dataStepMs);
  const gaps = findGaps(data, slot, first, maxGapMs);
  const sim = new MatchingEngine({
    ...market,
    clock,
    latencyMs,
    slippageBps: settings.slippageBps ?? '0',
    fillThroughTicks: settings.fillThroughTicks ?? 1,
    makerFee: settings.makerFee ?? '0.001',
    takerFee: settings.takerFee ?? '0.001',
    participationRate: participation ?? undefined,
    marketImpact: participation !== null,
  });
  const unknown = Object.keys(settings.balances).filter((code) => !market.assets.some((a) => a.code === code));
  if (unknown.length > 0)
    throw new BotError(
      'E_USAGE',
      `--balance: ${unknown.join(', ')} is not an asset of the pairs replayed (they have ` +
        `${market.assets.map((a) => a.code).join(', ')})`,
    );
  sim.createAccount({ apiKey: API_KEY, balances: settings.balances });
  const inProcess = new InProcessVenue(sim, API_KEY);
  const venue: Venue = settings.cancel === false ? new NoCancelVenue(inProcess) : inProcess;
  const store = openStore({ path: ':memory:', clock });
  try {
    const bases = symbols.map((s) => (pairs.get(s) as PairAssets).base);
    const assetCodes = [...new Set([...Object.keys(settings.balances), quoteAsset, ...bases])].sort();
    const initial = assetTotals(sim, API_KEY, assetCodes);
    const log = new RunLog(clock, options.moduleFiles ?? [], options.keepLog ?? true);
    const engine = new Engine({ venue, clock, store, logger: log.logger, instances });
    // The report's chart: candles at a timeframe that draws the run in at most REPORT_SLOTS, and at its indicators'.
    const span = Math.max(0, valueAt(time, data.length - 1) - valueAt(time, first));
    const timeframe = reportTimeframe(span);
    const specsOf = (symbol: string) =>
      instances
        .filter((i) => i.config.symbol === symbol)
        .map((i) => ({ instance: i.config.name, specs: i.definition.indicators?.(i.params) ?? {} }));
    const charts = (options.charts === false ? [] : symbols).map(
      (symbol) =>
        new ChartSeries(
          chartNeeds(
            timeframe,
            span,
            specsOf(symbol).map((i) => i.specs),
          ),
          TIMEFRAME_MS[timeframe],
        ),
    );
    warmUp(engine, data, slot, warmFrom, first);
    const equity = new EquityTracker(symbols.length);
    const balances = new BalanceReader(sim, API_KEY, quoteAsset, bases, equity);

    // The market has its first price before the engine starts, as a paper venue has when the daemon starts.
    const firstSym = sym[first] as number;
    sim.onTicker(marketTicker(data, first));
    equity.prices[slot[firstSym] as number] = valueAt(price, first);
    balances.read();
    equity.sample(clock.time);
    await engine.start();

    const infos = data.symbols.map((info) => {
      const pair = market.pairs.find((p) => p.symbol === info.symbol);
      if (!pair) return info;
      const { baseAsset: b, quoteAsset: q, baseAssetId, quoteAssetId } = pair;
      return { symbol: info.symbol, b, q, bi: baseAssetId ?? undefined, qi: quoteAssetId ?? undefined };
    });
    const parts = new ReplayParts(
      clock,
      sim,
      engine,
      equity,
      charts,
      balances,
      infos,
      new GapSamples(gaps, maxGapMs),
      volume,
    );
    const replay =
      settings.everyTick === true
        ? new Replay(data, slot, first, parts, refreshMs, sampleMs)
        : new ScheduledReplay(data, slot, first, parts, settings.jobs ?? DEFAULT_DAEMON_SCHEDULE, sampleMs);
    replay.account.onProgress = (done: number) => options.onProgress?.(done, total);
    await replayAll(replay);
    // The chart's candles from the ticks the warm-up and the replay saw: every unit tick to the data's end.
    chartCandles(charts, data, slot, warmFrom, data.length);
    const fills = sim.fills(API_KEY);
    const done = replay.account.done;
    const lastTime = clock.time;
    await engine.stop();
    balances.read();
    equity.sample(lastTime);
    options.onProgress?.(done, total);

    const final = assetTotals(sim, API_KEY, assetCodes);
    checkAccounting(initial, final, fills, pairs);
    // Read once: the run's trace and each instance's are made from the same rows (a full read a trace else).
    const orders = store.orders.all();
    const trace = storeTrace(
      store,
      instances.map((i) => i.config.name),
      orders,
    );
    if (trace.fills.length !== fills.length)
      throw new BotError(
        'E_BACKTEST_ACCOUNTING',
        `the engine recorded ${trace.fills.length} fills, the venue made ${fills.length}`,
      );
    const owner = new Map<number, OrderRow>();
    for (const o of orders) if (o.exchangeId !== undefined) owner.set(Number(o.exchangeId), o);
    const samples = equity.samples;
    return {
      symbols,
      latencyMs,
      dataStepMs,
      candlePath: candles > 0 ? candlePath : null,
      candles,
      participation,
      quantitySteps: new Map([...pairs].map(([symbol, p]) => [symbol, p.step])),
      quoteAsset,
      quotePrecision: Math.max(...[...pairs.values()].map((p) => p.quotePrecision)),
      baseAssets: bases,
      ticks: done,
      firstTime: valueAt(time, first),
      lastTime,
      priceRange: symIndex.map((s, k) => ({
        symbol: symbols[k] as string,
        first: valueAt(price, ticks.first[s] as number),
        last: equity.prices[k] as number,
      })),
      initial,
      final,
      initialEquity: (samples[0] as EquitySample).equity,
      finalEquity: (samples[samples.length - 1] as EquitySample).equity,
      equity: samples,
      maxGapMs,
      gaps,
      charts: charts.map((chart, k) => {
        const symbol = symbols[k] as string;
        return {
          symbol,
          chart: chartData(chart.candles, timeframe, specsOf(symbol), REPORT_SLOTS, valueAt(time, first)),
          equity: chart.slots.map((t, j) => [t, chart.lastTick[j] as number, chart.equity[j] as number]),
        };
      }),
      drawdown: equity.drawdown(),
      fills,
      orders,
      orderOwner: owner,
      instances: engine.instances(),
      trace,
      log,
      // One instance's trace is the run's (the same rows read the same way).
      traces: new Map(
        instances.map((i) => [
          i.config.name,
          instances.length === 1 ? trace : storeTrace(store, [i.config.name], orders),
        ]),
      ),
    };
  } finally {
    store.close();
  }
}

// The loops below live in functions of their own, out of runWalked: a loop that turns hot inside a large function
// has V8 compile the whole function on the spot (on-stack replacement), and again on every run of a sweep's worker
// once the code after the loop deoptimises it.

/** The engine's candles fed with the unit's ticks [from, to) (data before the backtest's start). */
function warmUp(engine: Engine, data: TickData, slot: Int32Array, from: number, to: number): void {
  const { sym, time, price, vb } = data.columns;
  for (let i = from; i < to; i++) {
    const s = sym[i] as number;
    const k = slot[s] as number;
    if (k === -1) continue;
    const t = valueAt(time, i);
    const p = valueAt(price, i);
    engine.warmUp(data.symbols[s]!.symbol, t, p, valueAt(vb, i));
  }
}

/** Runs a replay to its end, waiting wherever it hands back a promise. */
async function replayAll(replay: Replay | ScheduledReplay): Promise<void> {
  for (let pending = replay.run(); pending; pending = replay.run()) await pending;
}

/** Index of the first tick of a unit's symbol at or after `start`, from index `i` (data.length when none). */
function unitTickFrom(data: TickData, slot: Int32Array, i: number, start: number): number {
  const { sym, time } = data.columns;
  while (i < data.length && (slot[sym[i] as number] === -1 || valueAt(time, i) < start)) i++;
  return i;
}

interface PairAssets {
  base: string;
  quote: string;
  /** The smallest quantity the pair trades: a position below it is fee dust that can never be sold. */
  step: Dec;
  quotePrecision: number;
}

/** The pairs a backtest of `data` trades: the recordings' own, the built-in ones where a recording has none. */
export function backtestMarket(symbols: readonly string[], data: TickData) {
  const where = data.files.map((f) => f.path).join(', ');
  return replayMarket(symbols, new Map(data.pairs.map((p) => [p.symbol, p])), where);
}

/** The unit's symbols (first-config order), their pairs, the market, and their data index. */
function unitSymbols(instances: readonly InstanceSpec[], data: TickData) {
  const symbols = watchedSymbols(instances);
  const market = backtestMarket(symbols, data);
  const pairs = new Map<string, PairAssets>();
  for (const name of symbols) {
    const config = market.pairs.find((p) => p.symbol === name) as PairConfig;
    const rules = pairRulesFrom(config);
    pairs.set(name, {
      base: config.baseAsset,
      quote: config.quoteAsset,
      step: rules.stepSize,
      quotePrecision: rules.quotePrecision,
    });
  }
  const quotes = [...new Set([...pairs.values()].map((p) => p.quote))];
  if (quotes.length > 1)
    throw new BotError(
      'E_USAGE',
      `strategies run together must share one quote asset to value one equity curve, found ${quotes.join(', ')}`,
    );
  const symIndex = symbols.map((name) => {
    const i = data.symbols.findIndex((s) => s.symbol === name);
    if (i < 0)
      throw new BotError(
        'E_BACKTEST_DATA',
        `no ticks of ${name} in ${data.files.map((f) => f.path).join(', ')} (within --from/--to)`,
        { context: { symbol: name } },
      );
    return i;
  });
  return { symbols, pairs, quoteAsset: quotes[0] as string, symIndex, market };
}
