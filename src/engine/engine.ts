/**
 * The trading engine: runs every configured instance against one venue, on whatever clock it is given.
 * Its jobs are plain async methods — start, observe (market data in), marketCycle (fetch + observe),
 * pollOrders, refresh, stop — so the daemon maps them to a scheduler and the backtester calls them on a
 * virtual clock: the same engine either way. It knows only the ports (Venue, Clock) and the strategy API.
 */
import { BotError } from '../errors.js';
import { Incidents } from '../ops/incident.js';
import type { PairConfig, Ticker } from '../ports/venue-records.js';
import { isPairListCandidate, type PairList } from '../config/pair-list.js';
import { pairInstanceName } from '../market/instance-names.js';
import { type Dec, type DecimalLike, dec } from '../market/decimal.js';
import type { PairRules } from '../market/pair-rules.js';
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Venue } from '../ports/venue.js';
import type { Balance } from '../strategy/api.js';
import type { FillRow } from '../store/fills.js';
import { isActive, type OrderRow } from '../store/order-journal.js';
import type { Store } from '../store/store.js';
import { isWriteFailure } from '../store/database.js';
import { EngineParts } from './engine-parts.js';
import { type InstanceSpec, InstanceRunner, isPromise, RunnerDeps } from './instance-runner.js';
import { type BySymbol, Instances, type InstanceSummary } from './instances.js';
import type { IndicatorSpecs } from '../strategy/indicators.js';
import type { CandleBuilder } from '../market/candles.js';
import { CandleBooks } from './candle-books.js';
import { MarketState } from './market-state.js';
import { JournalCache } from './journal-cache.js';
import { intentBuilders } from './intent-builders.js';
import { type CancelResult, OrderManager, type SubmitOutcome } from './order-manager.js';
import { Portfolios } from './portfolio.js';
import { PairLists } from './pair-lists.js';
import type { ExitOrder, ExitResult } from './exits/position-exit.js';
import { DeclaredExits, type DeclaringInstance } from './exits/declared-exits.js';
import { Mutex } from './mutex.js';
import type { FillSink } from './fill-recorder.js';
import { OrderSync } from './order-sync.js';
import { TickPath } from './tick-path.js';
import { FillDelivery } from './fill-delivery.js';
import { OrdersPoll } from './orders-poll.js';
import { VenueReads } from './venue-reads.js';
import { refuseForeignOrders, startProblem } from './start-checks.js';
import { type CircuitBreakerOptions, DEFAULT_CIRCUIT_BREAKER } from './risk.js';
import { TradingGuard } from './trading-guard.js';

/** Why an instance is paused by the operator, and who asked (`api 127.0.0.1`, `telegram:42`). */
export interface PauseCause {
  reason: string;
  source?: string;
}

export interface EngineOptions {
  venue: Venue;
  clock: Clock;
  store: Store;
  logger: Logger;
  instances: readonly InstanceSpec[];
  /** An instance was made after the start (a pair its file's pair list took up when the exchange listed it). */
  instanceAdded?: (spec: InstanceSpec) => void;
  /** New orders stop while this file exists (checked before every order and every poll). */
  killSwitchFile?: string;
  circuitBreaker?: Partial<CircuitBreakerOptions>;
  /** Extra quote a BUY must have free beyond its value, as a ratio (default 0.001: the exchange's usual fee). */
  feeMargin?: DecimalLike;
  /** How long after sending an unknown create may take to appear on the venue (default 60 s). */
  reconcileWindowMs?: number;
  /** Tolerated difference between the venue's clock and ours (default 30 s). */
  clockSkewMs?: number;
  /** Trade history is re-read from this long before the newest recorded trade (default 60 s). */
  tradeLookbackMs?: number;
  /** Consecutive trade-history failures before fills come from executedQty deltas (default 3). */
  tradeHistoryFallbackAfter?: number;
  /** How long a final order may wait for its trades before the rest is recorded as a delta (default 5 min). */
  fillGraceMs?: number;
  /** How long stop() waits for work in flight (default 10 s). */
  stopTimeoutMs?: number;
  /**
   * Measure synchronous hooks on the wall clock and pause an instance whose hook overran its limit (the
   * daemon). Off in backtests: their results must not depend on the machine's speed.
   */
  measureHooks?: boolean;
  /**
   * An orders poll that recorded fills ends without waiting for the balance read that follows them: the read,
   * then the fills' delivery to onFill, go on beside the next jobs, so a slow read holds up none of them.
   * Default: on a clock that does not wait for its jobs (the wall clock); not on one that does (a backtest's or
   * a test's virtual clock, paper's replay clock), so that a run is exact: the read, and the orders onFill
   * places, are part of the poll there (at its time), as they are when quick.
   */
  readBalancesApart?: boolean;
  /**
   * A market job ends once its tickers are in: the decisions on them (each instance's exits and onTick, its
   * orders, the poll after them) go on beside the next jobs, and a market job that fires while they still run
   * brings fresh tickers to them (the instances not yet ticked decide on those) instead of waiting its turn.
   * So the market watch keeps its cadence however long the decisions wait for the request budget (a
   * many-pair file's placements: bench:live-pairs). Default as readBalancesApart, for the same reason.
   */
  decideApart?: boolean;
  /**
   * Instances that start paused (name to why, and who paused them) and run no onStart: a pause the operator
   * (or an exit) made before the stop holds across it, and an exit asked for before a crash is finished before
   * their strategy may trade again.
   */
  startPaused?: ReadonlyMap<string, PauseCause>;
  /**
   * Save each symbol's candles in the store (at every refresh and at stop) and take them up at start, so a
   * restarted daemon has its strategies' lookback at once. Off in backtests (they never restart).
   */
  persistCandles?: boolean;
  /**
   * On an empty journal, open orders the account already has are adopted as external (true, the default), or
   * the start is refused until the operator decides (false: a live start without --adopt-open-orders), since
   * a deleted journal or another bot may own them.
   */
  adoptOpenOrders?: boolean;
}

export type { InstanceSummary } from './instances.js';

/** Resolves true when `work` settles within `ms`, false otherwise (work goes on; its errors are the caller's to log). */
async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The spec of a pair list's file on `symbol`, from its spec on another pair (a pair the list takes up later). */
function pairSpec(template: InstanceSpec, symbol: string): InstanceSpec {
  const group = template.config.group ?? template.config.name;
  return { ...template, config: { ...template.config, symbol, name: pairInstanceName(group, symbol) } };
}

export class Engine implements FillSink {
  private readonly parts: EngineParts;
  /** The instances and their indexes (by name, symbol, schedule). */
  private readonly roster: Instances;
  private readonly orders: OrderManager;
  private readonly sync: OrderSync;
  private readonly exits: DeclaredExits;
  private readonly reads: VenueReads;
  private readonly ticks: TickPath;
  private readonly delivery: FillDelivery;
  private readonly poll: OrdersPoll;
  private readonly lock = new Mutex();
  private readonly decideApart: boolean;
  /** The decisions of each schedule's last market job while they run, and when they began (decideApart). */
  private readonly deciding = new Map<string, { since: number; done: Promise<void> }>();
  /** Their failures, told per incident as the scheduler tells a job's (decideApart). */
  private readonly decisionsFailing: Incidents;
  private readonly stopTimeoutMs: number;
  private readonly adoptOpenOrders: boolean;
  private state: 'new' | 'starting' | 'running' | 'stopping' | 'stopped' = 'new';
  private readonly startPaused: ReadonlyMap<string, PauseCause>;
  private readonly candles: CandleBooks;
  private readonly pairLists: PairLists;
  private readonly portfolios: Portfolios;
  /** Per pair list's file, the spec of its instances (a pair the list takes up later is made from it). */
  private readonly listTemplates = new Map<string, InstanceSpec>();
  private readonly instanceAdded: ((spec: InstanceSpec) => void) | undefined;

  constructor(options: EngineOptions) {
    const { venue, clock, store, logger } = options;
    const journal = new JournalCache(store);
    const market = new MarketState();
    const guard = new TradingGuard(clock, logger, store, options.killSwitchFile, {
      ...DEFAULT_CIRCUIT_BREAKER,
      ...options.circuitBreaker,
    });
    this.parts = new EngineParts(venue, clock, store, logger, journal, market, guard);
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    this.decideApart = options.decideApart ?? !options.clock.awaitsFirings;
    this.decisionsFailing = new Incidents(
      options.logger,
      () => options.clock.now(),
      (schedule) => `market job decisions (${schedule})`,
    );
    this.startPaused = options.startPaused ?? new Map();
    this.adoptOpenOrders = options.adoptOpenOrders ?? true;
    this.instanceAdded = options.instanceAdded;
    const canCancel = typeof venue.cancelOrder === 'function';
    const measureSync = options.measureHooks === true;
    this.candles = new CandleBooks(options.instances, store, clock, logger, options.persistCandles === true);
    this.roster = new Instances(options.instances, (spec) => {
      const candles = this.candles.get(spec.config.symbol);
      return new InstanceRunner(
        spec,
        new RunnerDeps(store, journal, market, clock, logger, canCancel, measureSync, candles, (symbol) =>
          this.candles.get(symbol),
        ),
      );
    });
    this.reads = new VenueReads(this.parts, this.roster.symbols);
    // The fill recorder tells this engine (FillSink), which hands each fill to the delivery made below.
    this.sync = new OrderSync(
      this.parts,
      {
        window: { windowMs: options.reconcileWindowMs ?? 60_000, skewMs: options.clockSkewMs ?? 30_000 },
        tradeLookbackMs: options.tradeLookbackMs ?? 60_000,
        tradeHistoryFallbackAfter: options.tradeHistoryFallbackAfter ?? 3,
        fillGraceMs: options.fillGraceMs ?? 300_000,
        notPlacedConfirmations: 2,
      },
      this,
    );
    const feeMargin = dec(options.feeMargin ?? '0.001');
    this.pairLists = new PairLists(this.roster.all, market, logger, (time, change) => {
      try {
        store.events.record(time, undefined, 'pairlist-changed', { ...change });
      } catch (err) {
        // A journal refusing writes loses the event (the trading guard tells it), not the list.
        if (!isWriteFailure(err)) throw err;
      }
    });
    const portfolios = new Portfolios(this.roster.all, journal, market, this.pairLists);
    this.portfolios = portfolios;
    for (const spec of options.instances)
      if (spec.config.pairlist !== undefined && spec.config.group !== undefined)
        this.listTemplates.set(spec.config.group, spec);
    this.orders = new OrderManager(this.parts, feeMargin, this.sync, portfolios);
    this.exits = new DeclaredExits(
      this.parts,
      this.orders,
      this.sync,
      this.lock,
      () => this.reads.balances(),
      options.instances.map((spec, i) => [this.roster.all[i] as InstanceRunner, spec] as const),
    );
    this.ticks = new TickPath(market, this.candles, this.exits, this.orders, this.lock, this.pairLists, portfolios);
    this.delivery = new FillDelivery(this.parts, this.roster, this.exits, this.reads, this.ticks);
    this.poll = new OrdersPoll(
      this.parts,
      this.sync,
      this.orders,
      this.roster,
      this.reads,
      this.delivery,
      this.exits,
      this.lock,
      options.readBalancesApart ?? !clock.awaitsFirings,
    );
  }

  /**
   * Market data from before the start (a backtest's warm-up): it builds candles, nothing else sees it.
   * `volume24h` is the ticker's rolling 24-hour base volume (NaN when none).
   */
  warmUp(symbol: string, time: number, price: number, volume24h: number): void {
    this.candles.warmUp(symbol, time, price, volume24h);
  }

  /** The indicators an instance declares for its current params (the page's chart draws them); none when unknown. */
  indicatorSpecs(name: string): IndicatorSpecs {
    const r = this.roster.named(name);
    return r?.definition.indicators?.(r.params) ?? {};
  }

  /** The candle book of a symbol (tests and the warm-up's callers read what was built). */
  candleBook(symbol: string): CandleBuilder | undefined {
    return this.candles.get(symbol);
  }

  /** The symbols the market job of `schedule` reads: its instances' and the informative pairs they read. */
  watchedSymbols(schedule: string): ReadonlySet<string> {
    return this.roster.watched(schedule) ?? new Set();
  }

  /** The distinct schedules of the instances: one market job each. */
  schedules(): string[] {
    return this.roster.schedules();
  }

  /** Intents processed over all instances (the backtest's cheap test of whether anything happened). */
  intentsProcessed(): number {
    return this.roster.intentsProcessed();
  }

  instances(): InstanceSummary[] {
    return this.roster.summaries();
  }

  /** Figures the venue gave that were refused as impossible since the start, by field (venue-answers.ts). */
  venueRefusals(): { field: string; count: number }[] {
    return this.sync.answers.refusals();
  }

  // Operator steering (operator/actions.ts): small, each one idempotent; the caller checks names and
  // journals who asked.

  /** Whether the last orders poll read every symbol it had to (false: the venue failed for one). */
  get ordersPollComplete(): boolean {
    return this.poll.complete;
  }

  /** Whether the engine runs its jobs (started and not stopping). */
  get running(): boolean {
    return this.state === 'running';
  }

  /**
   * Pauses a running instance: no hook runs and its strategy places nothing; its orders stay, and its declared
   * exits and protections still run. False when not running.
   */
  pauseInstance(name: string, reason: string, source?: string): boolean {
    const r = this.roster.named(name);
    return r !== undefined && r.pauseByOperator(reason, source);
  }

  /** Resumes a paused instance (fills recorded meanwhile are delivered next). False when it was not paused. */
  resumeInstance(name: string): boolean {
    const r = this.roster.named(name);
    if (r === undefined || this.state !== 'running') return false;
    return r.resume();
  }

  /** Cancels one active journaled order on the venue, whoever placed it; undefined when it is not active. */
  cancelOrder(localId: string): Promise<CancelResult | undefined> {
    return this.lock.run(async () => {
      const row = this.parts.journal.get(localId);
      if (row === undefined || !isActive(row.status)) return undefined;
      return this.orders.cancelOnVenue(row, this.parts.logger);
    });
  }

  /**
   * Gets out of an instance's position: pauses it, cancels its open orders and sells what it holds less dust
   * through the order path (position-exit.ts). Undefined when no instance has that name.
   */
  exitPosition(name: string, order: ExitOrder, reason: string): Promise<ExitResult | undefined> {
    const r = this.roster.named(name);
    if (r === undefined) return Promise.resolve(undefined);
    return this.lock.run(() => this.exits.exit(r, order, reason));
  }

  /**
   * An entry the operator forces (Freqtrade's forcebuy) for a running instance: a BUY at MARKET spending
   * `quoteAmount`, or a LIMIT at `order.price` for what `quoteAmount` buys there, rounded onto the pair's grid
   * as a strategy's, through a strategy's entry path (brakes, protections, rules, risk, balance, journal before
   * send). Its fill reaches the strategy (onFill) and the declared exits as any entry's does. Undefined when no
   * instance has that name.
   */
  forceEntry(name: string, order: ExitOrder, quoteAmount: Dec, tag: string): Promise<SubmitOutcome | undefined> {
    const r = this.roster.named(name);
    if (r === undefined) return Promise.resolve(undefined);
    return this.lock.run(async () => {
      if (r.status !== 'running') return { ok: false, reason: `instance ${name} is ${r.status}, not running` };
      const rules = this.parts.market.rules.get(r.symbol);
      if (rules === undefined) return { ok: false, reason: `no pair rules for ${r.symbol} (not loaded yet)` };
      const build = intentBuilders(() => rules, []);
      const intent =
        order.type === 'MARKET'
          ? build.market('BUY', { quoteAmount }, { tag })
          : build.limit('BUY', order.price, quoteAmount.div(order.price), { tag });
      return this.orders.submitForcedEntry(r, intent, this.exits);
    });
  }

  /** Stop-buy: no new BUY orders while on (exits and protective SELLs still go out); recorded, kept across restarts. */
  setStopBuy(on: boolean, source: string): boolean {
    return this.parts.guard.setStopBuy(on, source);
  }

  /** Reads the kill switch now, so that a change is recorded at once; true while it is on. */
  checkKillSwitch(): boolean {
    return this.parts.guard.checkKillSwitch();
  }

  /** Why the journal cannot be trusted (its file gone or replaced, or a write it refused), or undefined. */
  journalProblem(): string | undefined {
    return this.parts.guard.journalProblem();
  }

  /** The brakes as they stand, without recording anything. */
  brakes(): {
    killSwitch: boolean;
    stopBuy: boolean;
    breakerOpenUntil: number | undefined;
    halted: string | undefined;
  } {
    const { guard } = this.parts;
    return {
      killSwitch: guard.killSwitch.isOn(),
      stopBuy: guard.stopBuy,
      breakerOpenUntil: guard.breakerOpenUntil(),
      halted: guard.halted,
    };
  }

  /** Lifts an authentication halt once a signed read succeeds (it throws when the keys still fail). */
  clearAuthHalt(): Promise<boolean> {
    return this.reads.clearAuthHalt();
  }

  /**
   * New params, risk limits, exits and protections for instances, from strategy files reloaded and validated by
   * the caller; returns the instances whose exits or protections changed. Those apply under the lock, from the
   * next tick: each change is recorded (`exits-changed`), a protection no longer declared is lifted, changed
   * protections count the journal's trades again (as a start does), and a stop held on the exchange is brought
   * in line through the order path (cancelled, then placed at the new level once; cancelled when no longer
   * declared). The watch's state (a trailing stop's high, a protection's window and trips) is kept.
   */
  async reconfigure(specs: readonly InstanceSpec[]): Promise<string[]> {
    const reloaded: DeclaringInstance[] = [];
    const named = new Set<InstanceRunner>();
    for (const spec of specs) {
      const r = this.roster.named(spec.config.name);
      if (r === undefined) continue;
      r.reconfigure(spec);
      reloaded.push([r, spec]);
      named.add(r);
      const group = spec.config.group;
      if (group !== undefined && this.listTemplates.has(group)) this.listTemplates.set(group, spec);
    }
    // The pairs a list took up after the start are made from its file's spec: they take the reload too.
    for (const r of this.roster.all) {
      const template = r.group === undefined ? undefined : this.listTemplates.get(r.group);
      if (template === undefined || !specs.includes(template) || named.has(r)) continue;
      const spec = pairSpec(template, r.symbol);
      r.reconfigure(spec);
      reloaded.push([r, spec]);
    }
    return this.lock.run(async () => (await this.exits.reload(reloaded)).map((r) => r.name));
  }

  /** The most pairs of strategy file `group` that may hold a trade at once (its portfolio's maxOpenTrades). */
  maxOpenTrades(group: string): number | undefined {
    return this.roster.all.find((r) => r.group === group)?.portfolio?.maxOpenTrades;
  }

  /** A pair's rules as the venue last gave them (undefined before they are loaded, or for another symbol). */
  pairRules(symbol: string): PairRules | undefined {
    return this.parts.market.rules.get(symbol);
  }

  /** The account's balances as last read. */
  balances(): Balance[] {
    return [...this.parts.market.balances.values()];
  }

  /**
   * Loads the journal, pair rules and balances, reconciles every live journal row with the venue and adopts
   * unknown open orders on configured symbols, then runs onStart and delivers fills not yet delivered.
   * Nothing is sent before reconciliation ends; if the venue cannot be read, start fails and nothing is sent.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new BotError('E_ENGINE_STATE', `engine cannot start: it is ${this.state}`);
    this.state = 'starting';
    try {
      await this.startLocked();
    } catch (err) {
      this.state = 'stopped';
      throw err;
    }
  }

  private startLocked(): Promise<void> {
    const { journal, logger, market } = this.parts;
    journal.load();
    this.delivery.load();
    this.candles.restore();
    for (const r of this.roster.all) r.init();
    return this.lock.run(async () => {
      await this.reads.pairsAndBalances();
      for (const r of this.roster.all) this.exits.start(r);
      if (!this.adoptOpenOrders && this.parts.store.orders.isEmpty()) await refuseForeignOrders(this.parts);
      for (const r of this.roster.all) {
        const reason = startProblem(this.parts, r);
        if (reason) r.refuseStart(reason);
      }
      const unreconciled = (symbol: string | undefined, err: unknown) =>
        new BotError(
          'E_RECONCILE',
          `cannot reconcile the journal with the venue${symbol === undefined ? '' : ` for ${symbol}`}: nothing was sent`,
          { cause: err, context: { symbol } },
        );
      const live = journal.symbols();
      let failure: BotError | undefined;
      // Every symbol with live rows on one read of open orders, order history and trades (as the orders poll).
      try {
        await this.sync.pollMany(
          [...live],
          (symbol) => this.roster.symbols.has(symbol),
          (symbol, err) => (failure ??= unreconciled(symbol, err)),
        );
      } catch (err) {
        throw unreconciled(undefined, err);
      }
      try {
        await this.sync.pollIdle(
          [...this.roster.symbols].filter((s) => !live.has(s)),
          (symbol, err) => (failure ??= unreconciled(symbol, err)),
        );
      } catch (err) {
        throw unreconciled(undefined, err);
      }
      if (failure) throw failure;
      this.sync.reportExternal(true);
      this.state = 'running';
      for (const r of this.roster.all) await this.begin(r);
      await this.delivery.deliverAll();
      await this.exits.polled(this.roster.all);
      logger.info({ instances: this.roster.all.length, symbols: [...market.rules.keys()] }, 'engine started');
    });
  }

  /** Starts a ready instance (onStart, then what it queued), or holds it paused as the operator left it. */
  private async begin(r: InstanceRunner): Promise<void> {
    if (!r.markStarted()) return;
    const held = this.startPaused.get(r.name);
    if (held !== undefined) {
      r.pauseByOperator(held.reason, held.source);
      return;
    }
    let ok = r.callHook('onStart');
    if (isPromise(ok)) ok = await ok;
    if (!ok) return;
    r.saveState();
    await this.ticks.processQueued(r);
  }

  /**
   * Pairs the exchange listed after the start that a pair list due now may choose (pair-lists.ts): their rules
   * read in one request, then an instance made and started on each, as at the start, for every list that may
   * choose it. A pair whose rules cannot be read, or that is not trading, is left out with the reason and tried
   * again at the list's next refresh: nothing is traded on it before its rules are known.
   */
  private takeUp(symbols: readonly string[]): Promise<void> {
    const { logger, market } = this.parts;
    return this.lock.run(async () => {
      let configs: readonly PairConfig[];
      try {
        configs = await this.reads.pairs(new Set(symbols));
      } catch (err) {
        const why = `its rules could not be read from the exchange (${err instanceof Error ? err.message : String(err)})`;
        for (const s of symbols) this.leaveOut(s, why);
        return;
      }
      for (const symbol of symbols) {
        const status = configs.find((c) => c.symbol === symbol)?.status;
        if (status !== 'TRADING' || market.rules.get(symbol) === undefined) {
          this.leaveOut(
            symbol,
            status === undefined
              ? "not in the exchange's pair configuration yet"
              : `its status is ${status}, not TRADING`,
          );
          continue;
        }
        for (const [group, template] of this.listTemplates) {
          if (!isPairListCandidate(template.config.pairlist as PairList, symbol)) continue;
          const spec = pairSpec(template, symbol);
          this.candles.add(spec);
          const r = this.roster.add(spec);
          if (r === undefined) continue;
          this.pairLists.add(r);
          this.portfolios.add(r);
          this.exits.add(r, spec);
          r.init();
          this.exits.start(r);
          const reason = startProblem(this.parts, r);
          if (reason) r.refuseStart(reason);
          await this.begin(r);
          this.instanceAdded?.(spec);
          logger.info(
            { instance: r.name, symbol },
            `pairlist of ${group}: ${symbol} newly listed, instance ${r.name} made`,
          );
        }
      }
    });
  }

  private leaveOut(symbol: string, why: string): void {
    this.parts.logger.warn({ symbol }, `pairlist: ${symbol} left out: ${why}; tried again at the next refresh`);
    this.pairLists.notTakenUp(symbol, why);
  }

  /**
   * New market data: caches each ticker and runs onTick for the running instances on its symbol (only those
   * on `schedule` when given), then processes the intents they queued. Returns undefined when nothing needed
   * to wait (the usual tick): `const p = engine.observe(t); if (p) await p;`.
   */
  observe(tickers: readonly Ticker[], schedule?: string): Promise<void> | undefined {
    this.ticks.cache(tickers);
    if (this.state !== 'running') return undefined;
    this.pairLists.observed(this.parts.clock.now(), schedule);
    const index = schedule === undefined ? this.roster.bySymbol : this.roster.onSchedule(schedule);
    if (index === undefined) return undefined;
    return this.ticks.run(tickers, index);
  }

  /**
   * Whether firings of the market job of `schedule` on the tickers the engine already holds (a backtest's job
   * between two ticks) would do nothing but count a tick (TickPath.refireable), with no order placed since the
   * last poll waiting for one; refireUnchanged then passes them. A strategy that does not declare idempotentTick
   * is called at every firing: false.
   */
  mayRefire(schedule: string): boolean {
    if (this.state !== 'running' || this.orders.placedSincePoll) return false;
    const index = this.roster.onSchedule(schedule);
    return index === undefined || this.ticks.refireable(index);
  }

  /**
   * `firings` such firings, the last at `last`, right after mayRefire said yes (nothing ran since): counted as
   * ticks, and true; false, and nothing done, when a pair list is due by `last` (the caller fires them one by one).
   */
  refireUnchanged(schedule: string, firings: number, last: number): boolean {
    if (last >= this.pairLists.dueAt()) return false;
    const index = this.roster.onSchedule(schedule);
    if (index !== undefined) this.ticks.countFirings(index, firings);
    return true;
  }

  /**
   * For a backtest's market job of `schedule` whose tickers moved since it last fired: whether its firings would
   * still do nothing but keep the new tickers and count a tick while each symbol of `symbols` keeps its price in a
   * band, with the bands (TickPath.quietBands; [low, high] exclusive, two entries a symbol). The caller then passes
   * them as refireUnchanged does, and hands the engine the tickers they would have kept (cacheTickers) before
   * anything else runs.
   */
  quietBands(schedule: string, symbols: readonly string[], bands: Float64Array): boolean {
    if (!this.mayRefire(schedule)) return false;
    const index = this.roster.onSchedule(schedule);
    return index === undefined || this.ticks.quietBands(index, symbols, bands);
  }

  /** The earliest time a pair list is due (Infinity: none): a market job's firing from then on works it out. */
  pairListsDueAt(): number {
    return this.pairLists.dueAt();
  }

  /** Tickers that firings which called nothing would have kept (a backtest's quiet stretch): in the market state. */
  cacheTickers(tickers: readonly Ticker[]): void {
    this.ticks.cache(tickers);
  }

  /**
   * One market job: fetches the tickers of the instances on `schedule` (one request for all their symbols
   * when there are several, else one for the symbol), observes them, and polls orders at once when orders
   * were placed, so fills of marketable orders are seen promptly. With decideApart the job ends once the
   * tickers are in; while the decisions of an earlier job still run, the tickers are only cached, for them.
   */
  async marketCycle(schedule: string): Promise<void> {
    if (this.state !== 'running') return;
    const group = this.roster.onSchedule(schedule);
    if (!group) return;
    // While an earlier job's decisions run, a pair list's newcomers wait for the next run: only a run's start
    // moves the list's refresh on (observe), and taking them up waits for the lock those decisions hold.
    const tickers = await this.marketWatch(schedule, group, !this.deciding.has(schedule));
    if (!this.decideApart) {
      const pending = this.observeCycle(tickers, schedule);
      if (pending) await pending;
      return;
    }
    if (this.deciding.has(schedule)) {
      this.ticks.cache(tickers);
      return;
    }
    const pending = this.observeCycle(tickers, schedule);
    if (pending === undefined) return;
    const done = pending
      .then(
        () => void this.decisionsFailing.succeeded(schedule, { schedule }),
        (err: unknown) => void this.decisionsFailing.get(schedule).failed(err, undefined, { schedule }),
      )
      .finally(() => this.deciding.delete(schedule));
    this.deciding.set(schedule, { since: this.parts.clock.now(), done });
  }

  /** The market jobs' decisions running apart now (decideApart): each one's schedule and when it began. */
  decisionRuns(): { schedule: string; since: number }[] {
    return [...this.deciding].map(([schedule, run]) => ({ schedule, since: run.since }));
  }

  /** The tickers of the instances on `schedule`; a pair list's newcomers taken up first (with `takeUp`). */
  private async marketWatch(schedule: string, group: BySymbol, takeUp: boolean): Promise<Ticker[]> {
    const { venue, guard } = this.parts;
    const watched = this.roster.watched(schedule) ?? new Set(group.keys());
    // A pair list reads the whole market watch: a pair the exchange lists later joins from it.
    const only = watched.size === 1 && !this.pairLists.onSchedule(schedule) ? [...watched][0] : undefined;
    let tickers =
      only !== undefined
        ? await guard.call(`market watch ${only}`, () => venue.marketWatch(only))
        : await guard.call('market watch', () => venue.marketWatch());
    if (only === undefined) {
      const fresh = takeUp ? this.pairLists.newcomers(tickers, schedule, this.parts.clock.now()) : [];
      if (fresh.length > 0) await this.takeUp(fresh);
      tickers = tickers.filter((t) => watched.has(t.symbol));
    }
    return tickers;
  }

  /**
   * A market job's work once its tickers are in: observe them for the instances on `schedule`, then poll
   * orders at once when orders were placed. The backtest calls it with the tickers it holds (no fetch);
   * undefined when nothing needed to wait.
   */
  observeCycle(tickers: readonly Ticker[], schedule: string): Promise<void> | undefined {
    const pending = this.observe(tickers, schedule);
    if (pending) return this.pollAfter(pending);
    return this.orders.placedSincePoll ? this.pollOrders() : undefined;
  }

  private async pollAfter(observed: Promise<void>): Promise<void> {
    await observed;
    if (this.orders.placedSincePoll) await this.pollOrders();
  }

  /**
   * The orders poll: reconciles, resolves and records fills for every symbol with live journal rows, then
   * delivers new fills to onFill. When the venue has a revision counter that has not moved since the last
   * complete poll and nothing time-based is pending (nor a journal write failure to recover from), there is
   * nothing to learn: returns undefined at once.
   */
  pollOrders(): Promise<void> | undefined {
    if (this.state !== 'running') return undefined;
    return this.poll.run();
  }

  /** pollOrders() now would do nothing and return undefined (the backtest passes such firings at once). */
  pollIdle(): boolean {
    return this.state !== 'running' || this.poll.idle();
  }

  /** An orders poll now would do nothing at all: nothing to learn (pollIdle), and no placement waiting for one. */
  pollNoop(): boolean {
    return this.pollIdle() && !this.orders.placedSincePoll;
  }

  /**
   * Pair rules and balances (less often than the other jobs), read outside the lock; then the traded symbols
   * without live orders polled and strategy state changed in place saved, under it.
   */
  async refresh(): Promise<void> {
    if (this.state !== 'running') return;
    await this.reads.pairsAndBalances();
    return this.lock.run(async () => {
      await this.poll.idleSymbols();
      for (const r of this.roster.all) if (r.status === 'running') r.saveState();
      this.exits.saveAll();
      this.candles.save();
    });
  }

  /** onStop for every running instance (intents it queues, e.g. cancels, are processed), then no more jobs. */
  async stop(): Promise<void> {
    if (this.state !== 'running') {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    this.ticks.halt();
    const { logger } = this.parts;
    const work = (async () => {
      // The balance read after fills and their delivery (it logs its failure), then onStop at the lock's next
      // turn: a market job's decisions still running (decideApart) are not waited for first. The instance
      // they are processing ends its turn; no instance after it decides (the tick path is halted).
      await this.poll.settling?.catch(() => undefined);
      await this.lock.run(async () => {
        for (const r of this.roster.all) {
          if (r.status === 'running') {
            let ok = r.callHook('onStop');
            if (isPromise(ok)) ok = await ok;
            if (ok) await this.ticks.processQueued(r);
          }
          r.markStopped();
        }
        this.candles.save();
      });
      // What is left of those decisions: instances stopped, nothing to decide; the poll after them sees 'stopping'.
      await Promise.all([...this.deciding.values()].map((run) => run.done));
      // So orders sent in the stop's last moments (a decision's turn of the lock, onStop's own) are polled here:
      // a marketable one has filled at once, and its fill is recorded now, as the job's own poll did when the
      // market job was whole (a clock that awaits its jobs still polls inside them: nothing left here).
      if (this.decideApart && this.orders.placedSincePoll) await this.poll.run();
    })().catch((err: unknown) => logger.error({ err }, 'engine stop failed'));
    const finished = await within(work, this.stopTimeoutMs);
    if (!finished) logger.warn(`engine stop: work in flight did not finish within ${this.stopTimeoutMs} ms`);
    this.state = 'stopped';
    logger.info('engine stopped');
  }

  /** FillSink: a fill was recorded (its transaction committed): fill-delivery.ts takes it from there. */
  fillRecorded(row: OrderRow, fill: FillRow): void {
    this.delivery.fillRecorded(row, fill);
  }
}
