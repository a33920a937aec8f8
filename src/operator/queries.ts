/**
 * What an operator reads, once for every face (the control API, the chat commands, the page, the metrics):
 * the status read model (the one behind `bot status`, cached for a second), instances with the engine's
 * schedule and counters, orders, fills, events, PnL series, prices, balances, the brakes and the jobs.
 * Reads never change anything (design.md invariant 11); none of them writes SQL: the store does.
 */
import { createHash } from 'node:crypto';
import type { Engine } from '../engine/engine.js';
import { D, type Dec, dec, plain } from '../market/decimal.js';
import { assetPlaces, roundedText } from '../market/display.js';
import type { JobStats } from '../ports/scheduler.js';
import {
  type ApiPrecision,
  buildStatusView,
  eventRowJson,
  instanceRounder,
  fillJson,
  orderJson,
  type StatusView,
  statusJson,
} from '../status/status-view.js';
import type { EventKind } from '../store/events.js';
import type { FillTotal } from '../store/fills.js';
import type { OrderCount } from '../store/order-journal.js';
import type { Store } from '../store/store.js';
import { pnlSeries } from './pnl-series.js';
import { allTrades, type Period, profitByPeriod, profitJson, type Trade, tradeJson } from './trades.js';
import { statsBy, tradeStats, type TradeStats } from '../market/round-trips.js';
import type { LogLine } from '../ops/log-tail.js';
import { type CandleNeeds, TIMEFRAME_MS, TIMEFRAMES, type Timeframe } from '../market/candles.js';
import { type CandleSource, chartData } from '../strategy/indicator-chart.js';

/** What the control API and the metrics need of the journal's and the read model's shapes, from here alone. */
export { EVENT_KINDS } from '../store/events.js';
export { API_PRECISIONS } from '../status/status-view.js';
export type { FillTotal, OrderCount };
export type { InstanceStatusReport } from '../status/status-report.js';
export type { GroupTotal } from '../status/instance-groups.js';
export type { StatusView } from '../status/status-view.js';

/** How long a status view is reused: the page polls, Prometheus scrapes, the database is read once a second. */
const STATUS_CACHE_MS = 1_000;

/** What runs where: the page's banner. */
export interface DaemonInfo {
  mode: 'live' | 'paper';
  /** The venue by name (`paper: simulated exchange`, `live: api.example.com`), never a bare port. */
  venue: string;
  banner: string;
}

export interface QueryDeps {
  store: Store;
  engine: Pick<
    Engine,
    | 'instances'
    | 'brakes'
    | 'running'
    | 'balances'
    | 'journalProblem'
    | 'pairRules'
    | 'venueRefusals'
    | 'indicatorSpecs'
    | 'maxOpenTrades'
  >;
  /** The venue's time (the daemon's clock) and the wall's. */
  now: () => number;
  wallNow: () => number;
  /** Paper on recordings: the replay clock's lag behind its pace (recorded ms) and its pace. */
  replay?: () => { lagMs: number; speed: number };
  killSwitchFile: string;
  jobs: () => JobStats[];
  /** Recent prices per symbol (the chart). */
  prices: () => ReadonlyMap<string, readonly { time: number; price: number }[]>;
  daemon: DaemonInfo;
  /** A symbol's candles kept for the page's chart (PriceRecordingVenue), when kept. */
  chartCandles?: (symbol: string) => (CandleSource & { needs: CandleNeeds }) | undefined;
  /** The daemon's latest warnings and errors, oldest first (the chat's /logs); none when the log keeps no tail. */
  logs?: (n: number) => LogLine[];
}

/** Closed trades' figures of one group (a pair, an exit reason) in one quote asset. */
export interface PerformanceRow {
  quoteAsset: string;
  trades: number;
  wins: number;
  winRatePct: string | null;
  pnl: string;
}

export interface Page<T> {
  items: T[];
  next: number | null;
}

export type OperatorQueries = ReturnType<typeof createQueries>;

/** Slots a price chart shows at most (its time axis: one per candle of its timeframe, empty ones included). */
export const CHART_SLOTS = 2000;

/**
 * The chart's timeframe: the finest kept whose candles reach back to `since` (the oldest fill shown) within
 * CHART_SLOTS; else the one reaching back furthest (the finest of those); the finest kept without `since`.
 */
function chartTimeframe(book: CandleSource & { needs: CandleNeeds }, since: number | undefined): Timeframe | undefined {
  let best: { tf: Timeframe; first: number } | undefined;
  for (const tf of TIMEFRAMES) {
    if (book.needs[tf] === undefined) continue;
    const list = book.candles(tf, CHART_SLOTS, true);
    const first = list[0]?.time;
    const last = list[list.length - 1]?.time;
    if (first === undefined || last === undefined) continue;
    if (since === undefined || (first <= since && (last - since) / TIMEFRAME_MS[tf] < CHART_SLOTS)) return tf;
    if (best === undefined || first < best.first) best = { tf, first };
  }
  return best?.tf;
}

/** A win rate in percent to one place, or null without trades. */
const winRatePct = (s: TradeStats) => (s.winRate === undefined ? null : plain(s.winRate.mul(100).toDecimalPlaces(1)));

export function createQueries(deps: QueryDeps) {
  const { store, engine } = deps;
  let cached: { at: number; view: StatusView; json: string; etag: string } | undefined;

  /** The status view, its JSON and an ETag of it (reused for a second). */
  const status = () => {
    const now = deps.now();
    if (cached === undefined || now - cached.at >= STATUS_CACHE_MS || now < cached.at) {
      const view = buildStatusView(store, {
        now,
        wallNow: deps.wallNow(),
        killSwitchFile: deps.killSwitchFile,
        rules: (symbol) => engine.pairRules(symbol),
        replay: deps.replay?.(),
      });
      const json = JSON.stringify(statusJson(view));
      cached = { at: now, view, json, etag: `"${createHash('sha1').update(json).digest('base64url')}"` };
    }
    return cached;
  };

  /** Every closed trade and fee, from the journal (the instances the status knows, and the engine's). */
  const trades = () => {
    const names = new Set([
      ...status().view.report.instances.map((i) => i.instance),
      ...engine.instances().map((i) => i.name),
    ]);
    return allTrades({
      instances: [...names].sort(),
      fills: (i) => store.fills.forInstance(i),
      order: (id) => store.orders.get(id),
      rules: (symbol) => engine.pairRules(symbol),
    });
  };
  /** The pairs traded: the engine's instances' and those the journal's instances traded. */
  const tradedSymbols = () =>
    new Set([...engine.instances().map((i) => i.symbol), ...status().view.report.instances.flatMap((i) => i.symbols)]);
  /**
   * Decimal places of each quote asset, from every pair traded (not only those with a closed trade: a fee is paid
   * before any trade closes).
   */
  const quotePlaces = () => {
    const places = new Map<string, number>();
    for (const symbol of tradedSymbols()) {
      const rules = engine.pairRules(symbol);
      if (rules !== undefined) places.set(rules.quoteAsset, rules.quotePrecision);
    }
    return (quote: string) => places.get(quote);
  };

  return {
    status,
    /** Closed trades, newest first, `limit` of them before trade id `before`. */
    trades(q: { instance?: string; before?: number; limit: number }) {
      const list = trades().trades.filter(
        (t) => (q.instance === undefined || t.instance === q.instance) && (q.before === undefined || t.id < q.before),
      );
      const page = list.slice(-q.limit).reverse();
      const more = list.length > q.limit;
      return {
        items: page.map((t) => tradeJson(t, engine.pairRules(t.symbol))),
        next: more ? (page[page.length - 1]?.id ?? null) : null,
      };
    },
    /** Realised PnL, trades, win rate and fees per period and quote asset, the newest `limit` periods. */
    profit(period: Period, limit: number) {
      const all = trades();
      const places = quotePlaces();
      const rows = profitByPeriod(all.trades, all.fees, period);
      const starts = [...new Set(rows.map((r) => r.start))].slice(0, limit);
      return rows.filter((r) => starts.includes(r.start)).map((r) => profitJson(r, places(r.quoteAsset)));
    },
    /** All closed trades' figures per quote asset (never summed across quotes). */
    profitTotals() {
      const all = trades().trades;
      const places = quotePlaces();
      const byQuote = new Map<string, typeof all>();
      for (const t of all) {
        const q = t.quoteAsset ?? '?';
        byQuote.set(q, [...(byQuote.get(q) ?? []), t]);
      }
      return [...byQuote.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([quoteAsset, list]) => {
          const s = tradeStats(list);
          const q = (d: Dec) => roundedText(d, places(quoteAsset));
          return {
            quoteAsset,
            trades: s.trades,
            wins: s.wins,
            winRatePct: winRatePct(s),
            pnl: q(s.pnl),
            profitFactor: s.profitFactor === undefined ? null : plain(s.profitFactor.toDecimalPlaces(2)),
            expectancy: s.expectancy === undefined ? null : q(s.expectancy),
          };
        });
    },
    /**
     * Closed trades by pair and by exit reason (the exit's tag: `exit:stop-loss`, `exit` for the operator's, a
     * strategy's own), each in its quote asset (never summed across quotes), the best PnL first (Freqtrade's
     * /performance).
     */
    performance() {
      const all = trades().trades;
      const places = quotePlaces();
      /** The trades grouped by quote asset and `key`, the best PnL first. */
      const grouped = (key: (t: Trade) => string | undefined) =>
        statsBy(all, (t) => JSON.stringify([(t as Trade).quoteAsset ?? '?', key(t as Trade) ?? 'none']))
          .sort((a, b) => b.stats.pnl.comparedTo(a.stats.pnl))
          .map(({ key: group, stats }) => {
            const [quoteAsset, value] = JSON.parse(group) as [string, string];
            const row: PerformanceRow = {
              quoteAsset,
              trades: stats.trades,
              wins: stats.wins,
              winRatePct: winRatePct(stats),
              pnl: roundedText(stats.pnl, places(quoteAsset)),
            };
            return { value, row };
          });
      return {
        pairs: grouped((t) => t.symbol).map(({ value, row }) => ({ symbol: value, ...row })),
        exitReasons: grouped((t) => t.exitTag).map(({ value, row }) => ({ reason: value, ...row })),
      };
    },
    /**
     * The trades open now: each instance holding a position of at least its pair's step (less is dust, not a
     * trade). `trades`: the instances holding a trade as maxOpenTrades counts them (a position above dust or a
     * working buy); per multi-pair file (`groups`), its pairs holding one and that limit (null: none); `max` is the
     * limit when one file sets it.
     */
    openTrades() {
      const { view } = status();
      const open = view.report.instances.flatMap((i) => {
        const symbol = i.symbols.length === 1 ? (i.symbols[0] as string) : undefined;
        const rules = symbol === undefined ? undefined : view.rules(symbol);
        const step = rules?.stepSize ?? D('0.00000001');
        if (symbol === undefined || i.position.quantity.abs().lt(step)) return [];
        const r = instanceRounder(i, view.rules);
        return [
          {
            instance: i.instance,
            symbol,
            quantity: r.baseAsset(i.position.quantity),
            averagePrice: r.price(i.position.averagePrice),
            unrealisedPnl: i.unrealisedPnl === undefined ? null : r.quote(i.unrealisedPnl),
          },
        ];
      });
      const groups = view.groups.map((g) => ({
        group: g.name,
        open: g.instances
          .filter((i) => view.holdings.get(i.instance)?.open === true)
          .map((i) => i.symbols[0] ?? i.instance),
        max: engine.maxOpenTrades(g.name) ?? null,
      }));
      const limits = groups.filter((g) => g.max !== null);
      let trades = 0;
      for (const held of view.holdings.values()) if (held.open) trades++;
      return { open, trades, max: limits.length === 1 ? (limits[0]?.max ?? null) : null, groups };
    },
    /**
     * A symbol's price chart (the page's): candles on a linear time axis and the indicators its instances declare
     * (strategy/indicator-chart.ts), in the timeframe that shows `since` (the oldest fill the page marks); null
     * while no candle is kept for it.
     */
    chart(symbol: string, since: number | undefined) {
      const book = deps.chartCandles?.(symbol);
      const timeframe = book === undefined ? undefined : chartTimeframe(book, since);
      if (book === undefined || timeframe === undefined) return null;
      const instances = engine
        .instances()
        .filter((i) => i.symbol === symbol)
        .map((i) => ({ instance: i.name, specs: engine.indicatorSpecs(i.name) }));
      return { symbol, ...chartData(book, timeframe, instances, CHART_SLOTS) };
    },
    /** The daemon's latest `n` warnings and errors, oldest first (secrets already redacted by the log). */
    logs: (n: number): LogLine[] => deps.logs?.(n) ?? [],
    /**
     * Equity and return per quote asset, never summed across quotes: the account's balance of the quote plus
     * what the instances trading in it hold, at the last price; PnL is theirs (realised + unrealised, fees
     * in), and the return is that PnL over the equity less it (the equity before the instances traded, when
     * nothing was paid in or out since).
     */
    equity() {
      const { view } = status();
      const prices = new Map(view.prices.map((p) => [p.symbol, dec(p.price)]));
      const balances = new Map(engine.balances().map((b) => [b.asset, b.free.plus(b.locked)]));
      const byQuote = new Map<
        string,
        { held: Dec; realised: Dec; unrealised: Dec; priced: boolean; names: string[] }
      >();
      for (const i of view.report.instances) {
        const symbol = i.symbols.length === 1 ? (i.symbols[0] as string) : undefined;
        const rules = symbol === undefined ? undefined : engine.pairRules(symbol);
        if (rules === undefined || symbol === undefined) continue;
        const q = byQuote.get(rules.quoteAsset) ?? {
          held: D(0),
          realised: D(0),
          unrealised: D(0),
          priced: true,
          names: [],
        };
        const price = prices.get(symbol);
        if (price === undefined) q.priced = false;
        else q.held = q.held.plus(i.position.quantity.mul(price));
        q.realised = q.realised.plus(i.realisedPnl);
        q.unrealised = q.unrealised.plus(i.unrealisedPnl ?? D(0));
        q.names.push(i.instance);
        byQuote.set(rules.quoteAsset, q);
      }
      const places = quotePlaces();
      return [...byQuote.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([quoteAsset, q]) => {
          const round = (d: Dec) => plain(d.toDecimalPlaces(places(quoteAsset) ?? 8));
          const balance = balances.get(quoteAsset);
          const equity = balance === undefined || !q.priced ? undefined : balance.plus(q.held);
          const pnl = q.realised.plus(q.unrealised);
          const before = equity?.minus(pnl);
          return {
            quoteAsset,
            instances: q.names,
            balance: balance === undefined ? null : round(balance),
            inPositions: q.priced ? round(q.held) : null,
            equity: equity === undefined ? null : round(equity),
            realisedPnl: round(q.realised),
            unrealisedPnl: round(q.unrealised),
            pnl: round(pnl),
            returnPct:
              before === undefined || !before.gt(0) ? null : plain(pnl.div(before).mul(100).toDecimalPlaces(2)),
          };
        });
    },
    /** Forget the cached view (an action changed something). */
    invalidate(): void {
      cached = undefined;
    },
    /** Undefined (all instances) or a name the engine runs or the journal has seen. */
    knownInstance(instance: string | undefined): boolean {
      return (
        instance === undefined ||
        engine.instances().some((i) => i.name === instance) ||
        status().view.report.instances.some((i) => i.instance === instance)
      );
    },
    daemon() {
      return {
        ...deps.daemon,
        instances: engine
          .instances()
          .map((i) => ({ name: i.name, symbol: i.symbol, schedule: i.schedule, status: i.status })),
      };
    },
    instances() {
      const live = new Map(engine.instances().map((i) => [i.name, i]));
      return statusJson(status().view).instances.map((i) => {
        const running = live.get(i.instance);
        return { ...i, schedule: running?.schedule ?? null, counters: running?.counters ?? null };
      });
    },
    orders(instance: string | undefined) {
      const rows = instance === undefined ? store.orders.active() : store.orders.activeForInstance(instance);
      return rows.map(orderJson);
    },
    fills(q: {
      instance?: string;
      before?: number;
      limit: number;
      precision?: ApiPrecision;
    }): Page<ReturnType<typeof fillJson>> {
      const page = store.fills.page(q);
      return {
        items: page.fills.map((f) => fillJson(f, engine.pairRules(f.symbol), q.precision)),
        next: page.next ?? null,
      };
    },
    events(q: { instance?: string; kind?: EventKind; before?: number; limit: number }) {
      const rows = store.events.list({
        instance: q.instance,
        kinds: q.kind === undefined ? undefined : [q.kind],
        beforeId: q.before,
        limit: q.limit + 1,
      });
      const more = rows.length > q.limit;
      const page = more ? rows.slice(0, q.limit) : rows;
      return {
        items: page.map((e) => eventRowJson(e, (s) => engine.pairRules(s))),
        next: more ? (page[page.length - 1]?.id ?? null) : null,
      };
    },
    /** Each instance's PnL over time (the page's equity chart), ending at the last price. */
    pnl(instance: string | undefined) {
      const { view } = status();
      const prices = new Map(view.prices.map((p) => [p.symbol, p]));
      const series: Record<string, ReturnType<typeof pnlSeries>> = {};
      for (const i of view.report.instances) {
        if (instance !== undefined && i.instance !== instance) continue;
        const last = i.symbols.length === 1 ? prices.get(i.symbols[0] as string) : undefined;
        series[i.instance] = pnlSeries(
          store.fills.forInstance(i.instance),
          last === undefined ? undefined : { time: Math.max(last.time, view.report.time), price: last.price },
          instanceRounder(i, view.rules).quote,
        );
      }
      return series;
    },
    prices() {
      const recent: Record<string, [number, number][]> = {};
      // Whole milliseconds: a replay clock's time has fractions no one reads.
      for (const [symbol, points] of deps.prices()) recent[symbol] = points.map((p) => [Math.floor(p.time), p.price]);
      const last = status().view.prices.map((p) => ({
        symbol: p.symbol,
        price: p.price,
        time: new Date(p.time).toISOString(),
      }));
      return { last, recent };
    },
    /**
     * The account's balances as the engine last read them (assets with something free or locked), each rounded
     * to its display precision where a pair the engine trades (or the journal's instances traded) names the asset.
     */
    balances() {
      const places = assetPlaces([...tradedSymbols()].map((s) => engine.pairRules(s)));
      return engine
        .balances()
        .filter((b) => !b.free.isZero() || !b.locked.isZero())
        .map((b) => {
          const p = places.get(b.asset);
          return { asset: b.asset, free: roundedText(b.free, p), locked: roundedText(b.locked, p) };
        });
    },
    /** Every balance as numbers (the metrics). */
    balanceFigures() {
      return engine.balances().map((b) => ({ asset: b.asset, free: b.free.toNumber(), locked: b.locked.toNumber() }));
    },
    /** The quote asset of a pair the daemon knows (the metrics' quote label). */
    quoteAsset: (symbol: string): string | undefined => engine.pairRules(symbol)?.quoteAsset,
    brakes: () => engine.brakes(),
    /** Venue figures refused as impossible, by field (the metrics). */
    venueRefusals: () => engine.venueRefusals(),
    running: () => engine.running,
    engineInstances: () => engine.instances(),
    jobs: () => deps.jobs(),
    orderCounts: (): OrderCount[] => store.orders.counts(),
    fillTotals: (): FillTotal[] => store.fills.totals(),
    /** Throws when the database cannot take a write (readiness). */
    checkWritable: () => store.checkWritable(),
    /** Why the journal cannot be trusted (its file gone or replaced, a write refused), or undefined (readiness). */
    journalProblem: () => engine.journalProblem(),
  };
}
