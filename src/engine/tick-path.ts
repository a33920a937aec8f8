/**
 * The path of one tick (docs/architecture.md): each ticker cached (market state, candles), then for every
 * instance on its symbol its declared exits and protections (running or paused), then its strategy's onTick
 * through the safe wrapper, and the intents it queued processed under the engine's lock. The intents of the
 * other hooks (onStart, onFill, onStop) go the same way (processQueued).
 *
 * It runs up to a million times a second in a backtest: its asynchronous continuations live in functions of
 * their own, because a closure over a parameter or a loop variable costs an allocation on every call of the
 * function that declares it, even when the closure is never created.
 */
import type { Ticker } from '../ports/venue-records.js';
import type { Intent } from '../strategy/api.js';
import type { CandleBooks } from './candle-books.js';
import type { DeclaredExits } from './exits/declared-exits.js';
import { protects } from './instance-lifecycle.js';
import type { InstanceRunner } from './instance-runner.js';
import type { BySymbol } from './instances.js';
import type { MarketState } from './market-state.js';
import type { Mutex } from './mutex.js';
import type { OrderManager } from './order-manager.js';
import type { PairLists } from './pair-lists.js';
import type { Portfolios } from './portfolio.js';

export class TickPath {
  constructor(
    private readonly market: MarketState,
    private readonly candles: CandleBooks,
    private readonly exits: DeclaredExits,
    private readonly orders: OrderManager,
    private readonly lock: Mutex,
    private readonly lists: PairLists,
    private readonly portfolios: Portfolios,
  ) {}

  /** The engine is stopping: no strategy decides any more (a market job's decisions still running apart). */
  private halted = false;
  /** One instance's quiet band, read into it by quietBands. */
  private readonly band = new Float64Array(2);

  /** From now on ticks run exits and protections only: no onTick (the engine's stop). */
  halt(): void {
    this.halted = true;
  }

  /** A pair off its file's pair list that holds nothing (no position, no working order): its strategy is not called. */
  private idleOffList(r: InstanceRunner): boolean {
    return this.lists.offList(r) && r.openOrderViews().length === 0 && !this.portfolios.holds(r);
  }

  /** New market data, kept whether the engine runs or not: each ticker in the market state and its candles. */
  cache(tickers: readonly Ticker[]): void {
    const { market, candles } = this;
    for (let i = 0; i < tickers.length; i++) {
      const t = tickers[i] as Ticker;
      market.setTicker(t);
      candles.observe(t);
    }
  }

  /** Ticks the instances `index` lists for these tickers' symbols; undefined when nothing needed to wait. */
  run(tickers: readonly Ticker[], index: BySymbol): Promise<void> | undefined {
    return this.tickFrom(tickers, index, 0, 0);
  }

  /**
   * `firings` firings of a market job on the tickers the market already holds, each of which would do nothing but
   * count a tick (refireable said so, and nothing ran since): counted as ticks of its running instances.
   */
  countFirings(index: BySymbol, firings: number): void {
    for (const list of index.values()) {
      for (let j = 0; j < list.length; j++) {
        const r = list[j] as InstanceRunner;
        if (r.status === 'running' && !this.idleOffList(r)) r.countTicks(firings);
      }
    }
  }

  /**
   * A firing of a market job for `index` on the tickers the market holds would do nothing but count a tick: every
   * instance of `index` is stopped, or idle (not busy, its exits and protections idle, its state saved) and, when
   * running, one whose onTick would not be called (InstanceRunner.tickUnchanged).
   */
  refireable(index: BySymbol): boolean {
    for (const list of index.values()) {
      for (let j = 0; j < list.length; j++) {
        const r = list[j] as InstanceRunner;
        const status = r.status;
        if (!protects(status)) continue;
        if (r.busy || r.isDirty || !this.exits.idle(r)) return false;
        if (status === 'running' && !r.tickUnchanged && !this.idleOffList(r)) return false;
      }
    }
    return true;
  }

  /**
   * Once refireable(index) holds: the price bands, per symbol of `symbols`, within which firings on new tickers would
   * still do nothing but keep them and count a tick (each running instance's quiet band for its symbol, intersected;
   * -Infinity to Infinity where none asks), into `bands` ([low, high] exclusive, two entries a symbol). False when
   * some running instance has no band, or a symbol's candles are kept (they take every ticker).
   */
  quietBands(index: BySymbol, symbols: readonly string[], bands: Float64Array): boolean {
    const band = this.band;
    for (let s = 0; s < symbols.length; s++) {
      const symbol = symbols[s] as string;
      if (this.candles.keeps(symbol)) return false;
      let low = -Infinity;
      let high = Infinity;
      const list = index.get(symbol) ?? [];
      for (let j = 0; j < list.length; j++) {
        const r = list[j] as InstanceRunner;
        if (r.status !== 'running' || this.idleOffList(r)) continue;
        if (!r.quietPrices(band)) return false;
        if ((band[0] as number) > low) low = band[0] as number;
        if ((band[1] as number) < high) high = band[1] as number;
      }
      bands[2 * s] = low;
      bands[2 * s + 1] = high;
    }
    return true;
  }

  /** The instance's queued intents (from onStart, onFill or onStop), then its state. The caller holds the lock. */
  async processQueued(r: InstanceRunner): Promise<void> {
    if (!r.hasIntents) return;
    await this.processTaken(r, r.takeIntents());
  }

  private tickFrom(tickers: readonly Ticker[], index: BySymbol, i0: number, j0: number): Promise<void> | undefined {
    for (let i = i0; i < tickers.length; i++) {
      const list = index.get((tickers[i] as Ticker).symbol);
      if (list === undefined) continue;
      for (let j = i === i0 ? j0 : 0; j < list.length; j++) {
        const pending = this.tick(list[j] as InstanceRunner);
        if (pending) return this.tickAfter(pending, tickers, index, i, j + 1);
      }
    }
    return undefined;
  }

  private async tickAfter(
    pending: Promise<void>,
    tickers: readonly Ticker[],
    index: BySymbol,
    i: number,
    j: number,
  ): Promise<void> {
    await pending;
    await this.tickFrom(tickers, index, i, j);
  }

  /**
   * One instance's tick: its declared exits and protections, running or paused (a pause stops its strategy
   * deciding, never its position's protection), then its strategy's onTick when it runs.
   */
  private tick(r: InstanceRunner): Promise<void> | undefined {
    const status = r.status;
    if (!protects(status) || r.busy) return undefined;
    const exiting = this.exits.tick(r);
    if (exiting) return exiting;
    if (status !== 'running' || this.halted || (r.group !== undefined && this.idleOffList(r))) return undefined;
    const ok = r.callTick();
    if (ok === true) return this.afterTick(r);
    if (ok === false) return undefined;
    return this.afterAsyncTick(r, ok);
  }

  private async afterAsyncTick(r: InstanceRunner, ok: Promise<boolean>): Promise<void> {
    if (await ok) await this.afterTick(r);
  }

  private afterTick(r: InstanceRunner): Promise<void> | undefined {
    if (r.hasIntents) return this.processAfterTick(r, r.takeIntents());
    if (r.isDirty) r.saveState();
    return undefined;
  }

  /** A tick's intents, under the lock (taken at once; the instance is busy until they are processed). */
  private processAfterTick(r: InstanceRunner, intents: Intent[]): Promise<void> {
    return this.lock.run(() => this.processTaken(r, intents));
  }

  /** Intents taken from a hook, then its state; the instance's next hook may run once this settles. */
  private async processTaken(r: InstanceRunner, intents: Intent[]): Promise<void> {
    try {
      await this.exits.strategySends(r, intents);
      await this.orders.process(r, intents, this.exits);
      r.saveState();
    } finally {
      r.intentsProcessed();
    }
  }
}
