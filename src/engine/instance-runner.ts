/**
 * One bot instance (one strategy file): its strategy context (one object, reused for every hook), its
 * persisted state, its position, and the single safe wrapper every hook is called through. A hook that
 * throws or rejects pauses this instance, with the reason logged and recorded; the daemon goes on.
 *
 * Every hook is bounded by the strategy file's `hookTimeoutMs`. A hook whose promise has not settled by then is
 * abandoned: the instance is paused with the reason, the engine's lock and jobs go on at once, and whatever
 * the hook does when (if ever) it settles is ignored (intents it queues are dropped). JavaScript cannot
 * preempt synchronous code: a hook that blocks the thread (a busy loop) holds everything until it returns;
 * with `measureSync` (the daemon) such an overrun is then measured and pauses the instance, so it happens once.
 */
import type { InstanceConfig, PortfolioLimits, RiskLimits } from '../config/strategy-file.js';
import type { PairList } from '../config/pair-list.js';
import { StrategyError } from '../errors.js';
import type { Ticker } from '../ports/venue-records.js';
import { D, type Dec } from '../market/decimal.js';
import type { PairRules } from '../market/pair-rules.js';
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type {
  Balance,
  FillView,
  Intent,
  OrderView,
  Position,
  StrategyContext,
  StrategyDefinition,
  StrategyLogger,
} from '../strategy/api.js';
import type { FillRow } from '../store/fills.js';
import type { OrderRow } from '../store/order-journal.js';
import type { Store } from '../store/store.js';
import { isWriteFailure } from '../store/database.js';
import { InstanceLifecycle, type InstanceStatus } from './instance-lifecycle.js';
import { IntentQueue } from './intent-builders.js';
import type { MarketState } from './market-state.js';
import type { JournalCache } from './journal-cache.js';
import { positionFill, positionFromFills, type PositionTracker } from '../market/position.js';
import type { Candle, CandleBuilder, CandleNeeds, Timeframe } from '../market/candles.js';
import { IndicatorSet, type IndicatorSpecs, type IndicatorViews } from '../strategy/indicators.js';
import { candleNeeds, informativeNeeds } from '../strategy/candle-needs.js';
import { isHeldExit } from './exits/exit-orders.js';

/** What the engine needs to run one instance: the loader's output ({ file, config, definition, params }). */
export interface InstanceSpec {
  config: InstanceConfig;
  definition: StrategyDefinition;
  params: unknown;
}

type State = Record<string, unknown>;

/** What an instance reads of its engine: a class for the reason EngineParts is one (engine-parts.ts). */
export class RunnerDeps {
  constructor(
    readonly store: Store,
    readonly journal: JournalCache,
    readonly market: MarketState,
    readonly clock: Clock,
    readonly logger: Logger,
    readonly canCancel: boolean,
    /** Measure synchronous hooks on the wall clock and pause the instance when one overran (the daemon; never a backtest, whose results must not depend on the machine's speed). */
    readonly measureSync: boolean,
    /** The candles of the instance's symbol (undefined when no instance on it declared any). */
    readonly candles: CandleBuilder | undefined,
    /** The candles of another symbol (an informative pair's). */
    readonly candlesOf: (symbol: string) => CandleBuilder | undefined = () => undefined,
  ) {}
}

const NO_CANDLES: readonly Candle[] = Object.freeze([]);

/** A hook's time limit when the strategy file sets none. */
export const DEFAULT_HOOK_TIMEOUT_MS = 5_000;

/** Refusal events for the same reason are recorded at most once per this many ms (each one is counted). */
const REFUSAL_EVENT_INTERVAL_MS = 60_000;

/** Whether a hook's answer (callHook, callFill) is still to come: `let ok = r.callHook(h); if (isPromise(ok)) ok = await ok;`. */
export function isPromise(x: unknown): x is Promise<unknown> {
  return x instanceof Promise;
}

function optDec(text: string | undefined): Dec | undefined {
  return text === undefined ? undefined : new D(text);
}

export function orderView(row: OrderRow): OrderView {
  return {
    localId: row.localId,
    exchangeId: row.exchangeId,
    symbol: row.symbol,
    side: row.side,
    type: row.type as OrderView['type'],
    status: row.status,
    price: optDec(row.price),
    stopPrice: optDec(row.stopPrice),
    limitPrice: optDec(row.limitPrice),
    quantity: new D(row.quantity ?? 0),
    filledQuantity: new D(row.filledQty),
    tag: row.tag,
    createdAt: row.createdAt,
  };
}

/** A strategy's `ctx.log`: methods, not closures made per instance (see IntentQueue in intent-builders.ts). */
class StrategyLog implements StrategyLogger {
  constructor(private readonly logger: Logger) {}

  debug(msg: string, data?: Record<string, unknown>): void {
    this.logger.debug(data ?? {}, msg);
  }

  info(msg: string, data?: Record<string, unknown>): void {
    this.logger.info(data ?? {}, msg);
  }

  warn(msg: string, data?: Record<string, unknown>): void {
    this.logger.warn(data ?? {}, msg);
  }

  error(msg: string, data?: Record<string, unknown>): void {
    this.logger.error(data ?? {}, msg);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

class InstanceContext extends IntentQueue implements StrategyContext<unknown, State> {
  readonly instance: string;
  readonly symbol: string;
  readonly canCancel: boolean;
  readonly log: StrategyLogger;
  private readonly marketState: MarketState;
  /** The pair's rules as of `rulesVersion`: strategies read them several times a tick, they change on refresh. */
  private cachedRules: PairRules | undefined;
  private rulesVersion = -1;

  constructor(private readonly runner: InstanceRunner) {
    super(runner.queue);
    this.instance = runner.name;
    this.symbol = runner.symbol;
    this.canCancel = runner.deps.canCancel;
    this.log = new StrategyLog(runner.logger);
    this.marketState = runner.deps.market;
  }

  /** The instance's params (replaced when the operator reloads the strategy files). */
  get params(): unknown {
    return this.runner.params;
  }

  get rules(): PairRules {
    const market = this.marketState;
    if (this.rulesVersion !== market.rulesVersion) {
      this.cachedRules = market.rules.get(this.symbol);
      this.rulesVersion = market.rulesVersion;
    }
    const rules = this.cachedRules;
    if (!rules) throw new Error(`no pair rules for ${this.symbol} (pair configuration not loaded)`);
    return rules;
  }

  get ticker(): Ticker | undefined {
    return this.marketState.tickers.get(this.symbol);
  }

  /** Parsed once per price, and only when a strategy asks. */
  get price(): Dec | undefined {
    return this.marketState.lastPrice(this.symbol);
  }

  get openOrders(): readonly OrderView[] {
    return this.runner.openOrderViews();
  }

  get position(): Position {
    return this.runner.position;
  }

  get balances(): ReadonlyMap<string, Balance> {
    return this.marketState.balances;
  }

  get state(): State {
    return this.runner.state;
  }

  now(): number {
    return this.runner.readClock();
  }

  candles(timeframe: Timeframe, count: number, options?: { forming?: boolean; symbol?: string }): readonly Candle[] {
    const symbol = options?.symbol;
    const own = symbol === undefined || symbol === this.symbol;
    const book = own ? this.runner.deps.candles : this.runner.deps.candlesOf(symbol);
    if (book === undefined) return NO_CANDLES;
    const ownKept = own ? (this.runner.candleLimits[timeframe] ?? 0) : 0;
    const kept =
      symbol === undefined ? ownKept : Math.max(ownKept, this.runner.informativeLimits.get(symbol)?.[timeframe] ?? 0);
    return book.candles(timeframe, Math.min(count, kept), options?.forming === true);
  }

  tickerOf(symbol: string): Ticker | undefined {
    return symbol === this.symbol || this.runner.informativeLimits.has(symbol)
      ? this.marketState.tickers.get(symbol)
      : undefined;
  }

  get indicators(): IndicatorViews<IndicatorSpecs> {
    return this.runner.indicators;
  }

  quietBetween(low: number, high: number): void {
    this.runner.declareQuiet(low, high);
  }
}

/** What an instance did so far: ticks its strategy saw, intents, refusals, orders placed, fills recorded. */
export interface InstanceCounters {
  ticks: number;
  intents: number;
  refused: number;
  placed: number;
  fills: number;
}

export class InstanceRunner {
  readonly name: string;
  readonly symbol: string;
  readonly schedule: string;
  /** Limits and params are replaced when the operator reloads the strategy files (reconfigure). */
  private riskLimits: RiskLimits;
  private currentParams: unknown;
  /** The strategy file of several pairs this instance is one of (its name), and the limits across them. */
  readonly group: string | undefined;
  private portfolioLimits: PortfolioLimits | undefined;
  /** The pair list of its file, when the file chooses its pairs from the market watch (engine/pair-lists.ts). */
  readonly pairList: PairList | undefined;
  readonly definition: StrategyDefinition;
  readonly logger: Logger;
  readonly queue: Intent[] = [];
  readonly ctx: InstanceContext;
  private readonly lifecycle = new InstanceLifecycle();
  /** The position its recorded fills add up to (fillRecorded folds each one in). */
  private tracker: PositionTracker;
  /** The last local id number used: `<instance>-<seq>`, deterministic so backtests are byte-identical. */
  private seq = 0;
  /** A fill was recorded that onFill has not seen yet. */
  private undelivered = true;
  /** A hook is running (an async one may span other jobs): ticks are skipped and fills wait meanwhile. */
  private inHook = false;
  /** Batches of intents taken from a hook and not yet processed (journaled, sent or refused). */
  private unprocessed = 0;
  /** The UTC day on which the daily loss limit was last reported, so it is reported once a day. */
  private lossHaltReportedDay = -1;
  private readonly count: InstanceCounters = { ticks: 0, intents: 0, refused: 0, placed: 0, fills: 0 };
  readonly hookTimeoutMs: number;
  /** Bumped when a hook is abandoned, so its late settlement is recognised and ignored. */
  private hookGeneration = 0;
  /** performance.now() when the current synchronous hook began (only with measureSync). */
  private hookStarted = 0;
  private raw: State = {};
  private proxy: State = {};
  private dirty = false;
  private savedJson: string | undefined;
  private viewsVersion = -1;
  private views: readonly OrderView[] = [];
  private lastRefusal: { reason: string; time: number; suppressed: number } | undefined;
  /** Closed candles this instance may read per timeframe (what it declared, at least its indicators' warm-up). */
  private kept: CandleNeeds = {};
  /** Closed candles it may read of each informative pair. */
  private informativeKept: ReadonlyMap<string, CandleNeeds> = new Map();
  /** It reads candles or indicators (its own or an informative pair's): more than the price changes a call. */
  private readsCandles = false;
  private indicatorSet = new IndicatorSet({});
  /** The running hook read ctx.now(). */
  private clockRead = false;
  /**
   * What the last onTick that changed nothing saw (idempotentTick): while the market, its orders, the balances,
   * the rules and `inputs` are as they were, another call would change nothing either, and is not made.
   */
  private quietTicker: Ticker | undefined = undefined;
  private quietOrders = -1;
  private quietBalances = -1;
  private quietRules = -1;
  private quietInputs = -1;
  /**
   * The band of last prices the last quiet onTick declared (ctx.quietBetween), [low, high] exclusive: a ticker whose
   * price lies in it counts as the one that call saw. NaN when none; bandNow is what the running call declared.
   */
  private readonly quietBand = new Float64Array([NaN, NaN]);
  private readonly bandNow = new Float64Array([NaN, NaN]);
  /** A ctx.quietBetween that can never count was warned of (once an instance). */
  private quietWarned = false;
  /** Bumped by whatever else changes what onTick sees: a fill, another hook, new params, a resume. */
  private inputs = 0;

  constructor(
    spec: InstanceSpec,
    readonly deps: RunnerDeps,
  ) {
    this.name = spec.config.name;
    this.symbol = spec.config.symbol;
    this.schedule = spec.config.schedule;
    this.riskLimits = spec.config.risk;
    this.currentParams = spec.params;
    this.group = spec.config.group;
    this.portfolioLimits = spec.config.portfolio;
    this.pairList = spec.config.pairlist;
    this.definition = spec.definition;
    this.hookTimeoutMs = spec.config.hookTimeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS;
    this.logger = deps.logger.child({ instance: this.name });
    this.tracker = positionFromFills([]);
    this.ctx = new InstanceContext(this);
    this.makeIndicators(spec);
  }

  /** A fresh set of the definition's indicators for these params (fed from the kept candles at the next hook). */
  private makeIndicators(spec: InstanceSpec): void {
    this.kept = candleNeeds(spec.definition, spec.params);
    this.informativeKept = informativeNeeds(spec.definition, spec.params);
    this.readsCandles = Object.keys(this.kept).length > 0 || this.informativeKept.size > 0;
    this.indicatorSet = new IndicatorSet(this.definition.indicators?.(spec.params) ?? {});
  }

  get indicators(): IndicatorViews<IndicatorSpecs> {
    return this.indicatorSet.views;
  }

  /** The risk limits of its strategy file. */
  get limits(): RiskLimits {
    return this.riskLimits;
  }

  get portfolio(): PortfolioLimits | undefined {
    return this.portfolioLimits;
  }

  /** The strategy's params, as validated against its schema. */
  get params(): unknown {
    return this.currentParams;
  }

  /** Closed candles this instance may read per timeframe. */
  get candleLimits(): Readonly<CandleNeeds> {
    return this.kept;
  }

  /** Closed candles this instance may read of each informative pair, by symbol. */
  get informativeLimits(): ReadonlyMap<string, Readonly<CandleNeeds>> {
    return this.informativeKept;
  }

  /** Feeds the indicators the candles closed since the last hook (before every hook). */
  feedIndicators(): void {
    this.indicatorSet.feed(this.deps.candles, this.deps.candlesOf);
  }

  /** Loads persisted state, the local id sequence and the position from the store. */
  init(): void {
    const { store } = this.deps;
    const saved = store.state.get(this.name);
    this.savedJson = saved;
    const parsed: unknown = saved === undefined ? {} : JSON.parse(saved);
    this.raw = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as State) : {};
    // Top-level writes mark the state dirty for free; nested changes are found by the full comparison that
    // runs after every hook that queued intents, after onStart/onFill/onStop, and on each refresh.
    this.proxy = new Proxy(this.raw, {
      set: (target, key, value) => {
        this.dirty = true;
        return Reflect.set(target, key, value);
      },
      deleteProperty: (target, key) => {
        this.dirty = true;
        return Reflect.deleteProperty(target, key);
      },
    });
    this.seq = store.orders.maxSeq(this.name);
    this.tracker = store.fills.positions.resumed(this.name);
  }

  get state(): State {
    return this.proxy;
  }

  /** What the instance did so far (ticks its strategy saw, intents, refusals, orders placed, fills). */
  get counters(): Readonly<InstanceCounters> {
    return this.count;
  }

  /** The position its recorded fills add up to. */
  get position(): Position {
    return this.tracker.position;
  }

  /** The PnL realised on UTC day `day` (the daily loss limit's figure). */
  realisedOn(day: number): Dec {
    return this.tracker.realisedOn(day);
  }

  /** The local id (and its sequence number) of the next order the instance journals. */
  nextLocalId(): { localId: string; seq: number } {
    this.seq++;
    return { localId: `${this.name}-${this.seq}`, seq: this.seq };
  }

  /** ctx.now(): the engine's clock, noted as read (a call that read it is not taken as unchanged by the next). */
  readClock(): number {
    this.clockRead = true;
    return this.deps.clock.now();
  }

  /** Firings of its schedule that found nothing changed (TickPath.refire): ticks its strategy was not called on. */
  countTicks(firings: number): void {
    this.count.ticks += firings;
  }

  /** An intent of the instance is processed (a strategy's, or an exit made for it). */
  countIntent(): void {
    this.count.intents++;
  }

  /** The venue accepted an order of the instance. */
  countPlaced(): void {
    this.count.placed++;
  }

  /** A fill of the instance was recorded (committed): the position takes it, and onFill is to be told. */
  fillRecorded(fill: FillRow): void {
    this.inputs++;
    this.tracker.apply(positionFill(fill));
    this.count.fills++;
    this.undelivered = true;
  }

  /**
   * Whether fills wait for onFill and may be delivered now (running, no hook of it in progress); taking them
   * clears the mark, which fillsUndelivered sets again when onFill could not be told.
   */
  takeFillsToDeliver(): boolean {
    if (!this.undelivered || this.status !== 'running' || this.busy) return false;
    this.undelivered = false;
    return true;
  }

  /** onFill was not told every fill (its hook failed): they are delivered once it may run again. */
  fillsUndelivered(): void {
    this.undelivered = true;
  }

  /** Recorded fills wait for a running instance's onFill (the poll's cheap test of work left). */
  get deliveryPending(): boolean {
    return this.undelivered && this.status === 'running';
  }

  get status(): InstanceStatus {
    return this.lifecycle.status;
  }

  get reason(): string | undefined {
    return this.lifecycle.reason;
  }

  /** Intents are queued (by the last hook) and not yet processed. */
  get hasIntents(): boolean {
    return this.queue.length > 0;
  }

  /**
   * The queued intents, in order; the queue is empty afterwards. Until the caller reports them processed
   * (intentsProcessed), the instance is busy: no other hook of it runs, so none decides without seeing them in
   * ctx.openOrders (a tick's exit waiting for the engine's lock while a poll delivers the entry's fill).
   */
  takeIntents(): Intent[] {
    this.unprocessed++;
    return this.queue.splice(0);
  }

  intentsProcessed(): void {
    this.unprocessed--;
  }

  /** A hook runs, or the intents of one are not processed yet: the instance's other hooks wait. */
  get busy(): boolean {
    return this.inHook || this.unprocessed > 0;
  }

  /** Start-up found a reason this instance cannot run (a venue without cancel, an unknown symbol…). */
  refuseStart(reason: string): void {
    if (!this.lifecycle.move('refused', reason)) return;
    this.logger.error(`instance ${this.name} not started: ${reason}`);
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'start-refused', { reason });
  }

  /** Reconciliation is done: the instance runs (onStart comes next). False when it was refused. */
  markStarted(): boolean {
    if (!this.lifecycle.move('running')) return false;
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'started', {
      symbol: this.symbol,
      strategy: this.definition.name,
    });
    return true;
  }

  /** The operator resumes a paused instance: fills recorded meanwhile are delivered next. False when not paused. */
  resume(): boolean {
    if (this.status !== 'paused' || !this.lifecycle.move('running')) return false;
    this.undelivered = true;
    this.inputs++;
    this.logger.warn(`instance ${this.name} resumed`);
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'resumed', {});
    return true;
  }

  /** The engine stops: state saved and the stop recorded; a paused instance stays paused, with its reason. */
  markStopped(): void {
    if (this.status !== 'running' && this.status !== 'paused') return;
    this.saveState();
    const data = this.status === 'paused' ? { pausedReason: this.reason } : {};
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'stopped', data);
    this.lifecycle.move('stopped');
  }

  /** Its pair came onto its file's pair list or left it: what onTick sees changed (entries allowed or not). */
  listingChanged(): void {
    this.inputs++;
  }

  /** New params and risk limits from a reloaded strategy file (already validated against the strategy's schema). */
  reconfigure(spec: InstanceSpec): void {
    this.currentParams = spec.params;
    this.inputs++;
    this.riskLimits = spec.config.risk;
    this.portfolioLimits = spec.config.portfolio;
    // Indicators of the new params, warmed up again from the candles kept (a longer lookback needs a restart).
    if (this.definition.indicators !== undefined) this.makeIndicators(spec);
  }

  get isDirty(): boolean {
    return this.dirty;
  }

  openOrderViews(): readonly OrderView[] {
    const version = this.deps.journal.version(this.name);
    if (version !== this.viewsVersion) {
      // A stop the engine holds on the exchange for the declared exits is the engine's, not the strategy's.
      this.views = this.deps.journal
        .activeFor(this.name)
        .filter((row) => !isHeldExit(row))
        .map(orderView);
      this.viewsVersion = version;
    }
    return this.views;
  }

  /** onStart, onTick or onStop through the safe wrapper: true when it returned normally. */
  callHook(hook: 'onStart' | 'onTick' | 'onStop'): boolean | Promise<boolean> {
    return this.guard(hook, undefined);
  }

  callFill(fill: FillView): boolean | Promise<boolean> {
    return this.guard('onFill', fill);
  }

  /**
   * callHook('onTick') with the hook looked up by name, not by key: it runs on every tick of a backtest. A
   * strategy that declares idempotentTick is not called on a context that a call which changed nothing saw.
   */
  callTick(): boolean | Promise<boolean> {
    const definition = this.definition;
    this.count.ticks++;
    if (definition.onTick === undefined || this.tickUnchanged) return true;
    this.feedIndicators();
    this.inHook = true;
    this.clockRead = false;
    this.bandNow[0] = this.bandNow[1] = NaN;
    if (this.deps.measureSync === true) this.hookStarted = performance.now();
    let result: void | Promise<void>;
    try {
      result = definition.onTick(this.ctx);
    } catch (err) {
      return this.threw('onTick', err);
    }
    const ok = this.settled('onTick', result);
    if (definition.idempotentTick === true) this.noteQuiet(ok);
    return ok;
  }

  /** After an onTick call: what it saw, when it changed nothing (queued no intent, wrote no key, read no clock). */
  private noteQuiet(ok: boolean | Promise<boolean>): void {
    const ticker = this.deps.market.tickers.get(this.symbol);
    const band = this.bandNow;
    const low = band[0] as number;
    const high = band[1] as number;
    band[0] = band[1] = NaN;
    if (low === low && (ok instanceof Promise || this.readsCandles)) {
      this.warnQuiet(ok instanceof Promise ? 'onTick is asynchronous' : 'the strategy reads candles or indicators');
    }
    // An informative pair's market is not among what is compared: such a strategy is always called.
    if (
      ok !== true ||
      this.queue.length > 0 ||
      this.dirty ||
      this.clockRead ||
      ticker === undefined ||
      this.informativeKept.size > 0
    ) {
      this.quietTicker = undefined;
      return;
    }
    this.quietTicker = ticker;
    // A band holds only prices: a strategy that reads candles or indicators sees more change with each ticker.
    const held = low < ticker.last && ticker.last < high && !this.readsCandles;
    this.quietBand[0] = held ? low : NaN;
    this.quietBand[1] = held ? high : NaN;
    this.quietOrders = this.deps.journal.version(this.name);
    this.quietBalances = this.deps.market.balancesVersion;
    this.quietRules = this.deps.market.rulesVersion;
    this.quietInputs = this.inputs;
  }

  /**
   * onTick would not be called now: it saw this context at its last call, which changed nothing, or the same but
   * for a ticker whose price lies in the band that call declared.
   */
  get tickUnchanged(): boolean {
    if (this.quietTicker === undefined || !this.quietContext) return false;
    const ticker = this.deps.market.tickers.get(this.symbol);
    return ticker === this.quietTicker || (ticker !== undefined && this.inQuietBand(ticker.last));
  }

  /** Whether its last quiet onTick's context is unchanged but for the ticker: orders, balances, rules, inputs. */
  private get quietContext(): boolean {
    const { market, journal } = this.deps;
    return (
      journal.version(this.name) === this.quietOrders &&
      market.balancesVersion === this.quietBalances &&
      market.rulesVersion === this.quietRules &&
      this.inputs === this.quietInputs
    );
  }

  private inQuietBand(price: number): boolean {
    return (this.quietBand[0] as number) < price && price < (this.quietBand[1] as number);
  }

  /**
   * The band of prices in which a new ticker would leave onTick uncalled (tickUnchanged), into `band` ([low,
   * high], exclusive): false when there is none (no quiet call, or its context changed, or it declared none).
   */
  quietPrices(band: Float64Array): boolean {
    if (this.quietTicker === undefined || !this.quietContext) return false;
    band[0] = this.quietBand[0] as number;
    band[1] = this.quietBand[1] as number;
    return band[0] === band[0];
  }

  /** ctx.quietBetween from the running onTick: kept when the call turns out quiet (noteQuiet). */
  declareQuiet(low: number, high: number): void {
    if (!this.inHook) return;
    if (this.definition.idempotentTick !== true) {
      this.warnQuiet('the strategy does not declare idempotentTick');
      return;
    }
    // From onTick only: callTick clears it before the call and noteQuiet reads it after; another hook's is
    // cleared by the next callTick before anything reads it.
    this.bandNow[0] = low;
    this.bandNow[1] = high;
  }

  /** Says once why a ctx.quietBetween of this instance's strategy never counts: the author meant it to. */
  private warnQuiet(why: string): void {
    if (this.quietWarned) return;
    this.quietWarned = true;
    this.logger.warn(`ctx.quietBetween is ignored: ${why} (docs/strategies.md, "Quiet price bands")`);
  }

  /** The one safe wrapper (no closure per call: onTick runs up to a million times a second in a backtest). */
  private guard(
    hook: 'onStart' | 'onTick' | 'onStop' | 'onFill',
    fill: FillView | undefined,
  ): boolean | Promise<boolean> {
    const definition = this.definition;
    if (definition[hook] === undefined) return true;
    this.inputs++;
    this.feedIndicators();
    this.inHook = true;
    if (this.deps.measureSync === true) this.hookStarted = performance.now();
    let result: void | Promise<void>;
    try {
      result = hook === 'onFill' ? definition.onFill?.(this.ctx, fill as FillView) : definition[hook]?.(this.ctx);
    } catch (err) {
      return this.threw(hook, err);
    }
    return this.settled(hook, result);
  }

  private threw(hook: string, err: unknown): false {
    this.inHook = false;
    this.pause(`${hook} threw: ${errorText(err)}`, err);
    return false;
  }

  private settled(hook: string, result: void | Promise<void>): boolean | Promise<boolean> {
    if (this.deps.measureSync === true) {
      const took = performance.now() - this.hookStarted;
      if (took > this.hookTimeoutMs) {
        this.inHook = false;
        this.pause(
          `${hook} blocked the daemon for ${Math.round(took)} ms, beyond its limit of ${this.hookTimeoutMs} ms (hookTimeoutMs)`,
        );
        return false;
      }
    }
    if (isPromise(result)) return this.bounded(hook, result);
    this.inHook = false;
    return true;
  }

  /**
   * The operator (or an exit) pauses the instance: no hook runs, its strategy places nothing, its orders stay (its
   * declared exits and protections still run: exits/declared-exits.ts). Recorded
   * `by: 'operator'`, which a restart keeps (a strategy's failure is not: the restart loads its code again).
   * False when not running.
   */
  pauseByOperator(reason: string, source?: string): boolean {
    if (!this.lifecycle.move('paused', reason)) return false;
    this.queue.length = 0;
    this.logger.warn(`instance ${this.name} paused: ${reason}`);
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'paused', {
      reason,
      by: 'operator',
      ...(source === undefined ? {} : { source }),
    });
    return true;
  }

  /** An async hook, raced against its time limit: abandoned (and its instance paused) when it overruns. */
  private bounded(hook: string, result: Promise<void>): Promise<boolean> {
    const generation = this.hookGeneration;
    const limit = this.hookTimeoutMs;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.hookGeneration++;
        this.inHook = false;
        this.pause(`${hook} did not settle within ${limit} ms (hookTimeoutMs): abandoned, its result will be ignored`);
        resolve(false);
      }, limit);
      timer.unref();
      const late = () => {
        // Abandoned: whatever it queued meanwhile is not trusted.
        if (this.status !== 'running') this.queue.length = 0;
        this.logger.warn(`${hook} settled after it was abandoned: its result is ignored`);
      };
      result.then(
        () => {
          clearTimeout(timer);
          if (generation !== this.hookGeneration) return late();
          this.inHook = false;
          resolve(true);
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (generation !== this.hookGeneration) return late();
          this.inHook = false;
          this.pause(`${hook} rejected: ${errorText(err)}`, err);
          resolve(false);
        },
      );
    });
  }

  /** The strategy failed (a hook threw or rejected, its state is not JSON): only this instance pauses. */
  pause(reason: string, cause?: unknown): void {
    if (!this.lifecycle.move('paused', reason)) return;
    // Intents from a hook that failed half-way are not trusted.
    this.queue.length = 0;
    const err = new StrategyError(reason, { cause, context: { instance: this.name } });
    this.logger.error({ err }, `instance ${this.name} paused: ${reason}`);
    this.deps.store.events.record(this.deps.clock.now(), this.name, 'paused', { reason });
  }

  /** Saves the state when it differs from the last saved text; a state that is not JSON pauses the instance. */
  saveState(): void {
    let json: string;
    try {
      json = JSON.stringify(this.raw);
    } catch (err) {
      this.pause(`state is not JSON-serialisable: ${errorText(err)}`, err);
      return;
    }
    this.dirty = false;
    if (json === this.savedJson) return;
    this.deps.store.state.put(this.name, json, this.deps.clock.now());
    this.savedJson = json;
  }

  /**
   * Saves the state and runs `write` in one transaction (the journal row of an order the state led to). When
   * the state cannot be saved (the instance is paused) `write` does not run and this returns undefined. When
   * the transaction fails, neither is kept and the state still counts as unsaved, for the next save.
   */
  saveStateWith<T>(write: () => T): T | undefined {
    const saved = this.savedJson;
    try {
      return this.deps.store.transaction(() => {
        this.saveState();
        return this.status === 'running' ? write() : undefined;
      });
    } catch (err) {
      this.savedJson = saved;
      this.dirty = true;
      throw err;
    }
  }

  /** The daily loss limit refused an entry on UTC day `day`: told (log, `daily-loss-halt` event) once that day. */
  dailyLossHalted(reason: string, day: number, now: number): void {
    if (day === this.lossHaltReportedDay) return;
    this.lossHaltReportedDay = day;
    this.logger.warn(reason);
    this.deps.store.events.record(now, this.name, 'daily-loss-halt', { reason });
  }

  /**
   * Logs and records why an intent was refused (repeats of one reason are recorded once a minute, all counted).
   * `told`: the reason is told elsewhere (the journal's refused writes, by the trading guard): counted only.
   * A journal that refuses the event's write loses the event, not the refusal.
   */
  refuse(intent: Record<string, unknown>, reason: string, told = false): void {
    this.count.refused++;
    const now = this.deps.clock.now();
    const last = this.lastRefusal;
    if (told || (last && last.reason === reason && now - last.time < REFUSAL_EVENT_INTERVAL_MS)) {
      if (!told && last) last.suppressed++;
      this.logger.debug({ intent, reason }, `intent refused: ${reason}`);
      return;
    }
    this.logger.warn({ intent, reason }, `intent refused: ${reason}`);
    const data: Record<string, unknown> = { reason, intent };
    if (last && last.suppressed > 0) data.repeatsOfPrevious = last.suppressed;
    this.lastRefusal = { reason, time: now, suppressed: 0 };
    try {
      this.deps.store.events.record(now, this.name, 'refused', data);
    } catch (err) {
      if (!isWriteFailure(err)) throw err;
    }
  }
}
