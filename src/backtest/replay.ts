/**
 * The backtest's tick loop. Per recorded tick it does what the daemon's jobs do on a live tick: refresh when a
 * refresh boundary has passed, then the market moves (matching), the engine observes the ticker (onTick,
 * intents placed), and the orders poll runs (fills recorded and delivered to onFill; the engine itself skips
 * it when the venue's revision has not moved and nothing is pending).
 *
 * The loop is synchronous and stops only where the engine hands back a promise (an order to place, a poll to
 * run): `run()` returns it, and is called again once it settled, resuming the same tick at the step after.
 * So the loop is an ordinary hot function that V8 optimises once, rather than an async function whose every
 * await resumes in unoptimised code and sends the loop through on-stack replacement again.
 */
import type { Engine } from '../engine/engine.js';
import type { Ticker } from '../ports/venue-records.js';
import type { Dec } from '../market/decimal.js';
import type { MatchingEngine } from '../sim/matching-engine.js';
import type { CandleInfo } from './candle-ticks.js';
import { MarketEntries } from './market-entries.js';
import type { ChartSeries } from './chart-series.js';
import type { EquityTracker } from './equity-tracker.js';
import type { GapSamples } from './data-gaps.js';
import type { SymbolInfo } from './tick-columns.js';
import type { TickData } from './tick-data.js';
import type { VirtualClock } from '../clocks/virtual-clock.js';
import { valueAt } from './number-column.js';

/** Each asset's total (free + locked) on the account. */
export function assetTotals(sim: MatchingEngine, apiKey: string, codes: readonly string[]): Record<string, Dec> {
  const out: Record<string, Dec> = {};
  for (const code of codes) {
    const b = sim.balanceOf(apiKey, code);
    out[code] = b.free.plus(b.locked);
  }
  return out;
}

/** Reads the account's totals into the equity tracker whenever the venue's revision moved. */
export class BalanceReader {
  revision = -1;

  constructor(
    private readonly sim: MatchingEngine,
    private readonly apiKey: string,
    private readonly quoteAsset: string,
    private readonly bases: readonly string[],
    private readonly equity: EquityTracker,
  ) {}

  read(): void {
    const totals = assetTotals(this.sim, this.apiKey, [this.quoteAsset, ...this.bases]);
    this.equity.setBalances(
      totals[this.quoteAsset] as Dec,
      this.bases.map((b) => totals[b] as Dec),
    );
    this.revision = this.sim.revision;
  }
}

/** What a replay drives and reads on every tick: a class for the reason EngineParts is one (engine/engine-parts.ts). */
export class ReplayParts {
  constructor(
    readonly clock: VirtualClock,
    readonly sim: MatchingEngine,
    readonly engine: Engine,
    readonly equity: EquityTracker,
    /** One per symbol of the unit; none when the run gathers no chart. */
    readonly charts: ChartSeries[],
    readonly balances: BalanceReader,
    /** Per symbol of the data: the assets its tickers name (the market's, ids made unique). */
    readonly symbols: readonly SymbolInfo[],
    /** Sample times inside a hole in the data (data-gaps.ts): no sample is taken there. */
    readonly gaps: GapSamples,
    /** Base volume traded on each tick (the participation cap) and candles' ranges; undefined: no candles. */
    readonly volume: CandleInfo | undefined,
  ) {}
}

const PROGRESS_MASK = (1 << 16) - 1;

/**
 * A fresh ticker of tick `i`, as the daemon parses one per poll (a strategy may keep the previous one); `infos`
 * per symbol of the data, the assets its tickers name.
 */
export function tickerAt(
  data: TickData,
  infos: readonly SymbolInfo[],
  i: number,
  candles: CandleInfo | undefined,
): Ticker {
  const { sym, time, price, high, low, vb, vq } = data.columns;
  const info = infos[sym[i] as number] as SymbolInfo;
  const h = valueAt(high, i);
  const l = valueAt(low, i);
  const b = valueAt(vb, i);
  const q = valueAt(vq, i);
  return {
    symbol: info.symbol,
    last: valueAt(price, i),
    time: valueAt(time, i),
    high: h === h ? h : undefined,
    low: l === l ? l : undefined,
    baseVolume: b === b ? b : undefined,
    quoteVolume: q === q ? q : undefined,
    baseAsset: info.b,
    quoteAsset: info.q,
    baseAssetId: info.bi,
    quoteAssetId: info.qi,
    candle: candles?.rangeAt(i),
  };
}

/** What each replayed tick leaves in the results: equity samples, balances when the venue moved, the chart. */
export class TickAccount {
  /** Ticks of the unit's symbols replayed so far. */
  done = 0;
  onProgress: ((done: number) => void) | undefined;
  private nextSample: number;

  constructor(
    private readonly p: ReplayParts,
    private readonly sampleMs: number,
  ) {
    this.nextSample = (Math.floor(p.clock.time / sampleMs) + 1) * sampleMs;
  }

  /** The equity samples due by `t` (before the tick at `t` moves anything), none inside a hole in the data. */
  sampleUpTo(t: number): void {
    while (t >= this.nextSample) {
      if (!this.p.gaps.madeUp(this.nextSample)) this.p.equity.sample(this.nextSample);
      this.nextSample += this.sampleMs;
    }
  }

  /** After the tick of unit symbol `k` at `t` has been handled (its price in the equity's prices). */
  settle(t: number, k: number): void {
    const { sim, balances, equity, charts } = this.p;
    if (sim.revision !== balances.revision) balances.read();
    const e = equity.update(t);
    // No chart at all when the run gathers none (RunOptions.charts).
    charts[k]?.add(t, e);
    if ((++this.done & PROGRESS_MASK) === 0) this.onProgress?.(this.done);
  }
}

/**
 * A refresh that cannot learn anything is skipped: with no order, fill or cancel on the venue (its revision)
 * and no intent processed since the last one, the venue's pair configs and balances are what the engine
 * already holds. The daemon's refresh would read the same figures.
 */
export class RefreshGate {
  private revision = -1;
  private intents = -1;

  constructor(private readonly p: Pick<ReplayParts, 'sim' | 'engine'>) {}

  refresh(): Promise<void> | undefined {
    const { sim, engine } = this.p;
    if (this.idle()) return undefined;
    this.revision = sim.revision;
    this.intents = engine.intentsProcessed();
    return engine.refresh();
  }

  /** refresh() now would do nothing: neither the venue nor the intents processed moved since the last one. */
  idle(): boolean {
    return this.p.sim.revision === this.revision && this.p.engine.intentsProcessed() === this.intents;
  }
}

/** Steps of one tick at which the loop may stop for a promise and resume. */
const REFRESH = 0;
const MARKET = 1;
const POLL = 2;
const SETTLE = 3;

export class Replay {
  readonly account: TickAccount;
  private i: number;
  private step = REFRESH;
  private nextRefresh: number;
  private readonly gate: RefreshGate;
  private readonly batch: Ticker[] = [];
  private readonly entries: MarketEntries;

  constructor(
    private readonly data: TickData,
    /** The unit's index of each symbol of the data, -1 for symbols of no strategy of the unit. */
    private readonly slot: Int32Array,
    private readonly first: number,
    private readonly p: ReplayParts,
    private readonly refreshMs: number,
    sampleMs: number,
  ) {
    this.i = first;
    this.nextRefresh = (Math.floor(p.clock.time / refreshMs) + 1) * refreshMs;
    this.account = new TickAccount(p, sampleMs);
    this.gate = new RefreshGate(p);
    this.entries = new MarketEntries(data);
  }

  /** Replays ticks until the end (undefined) or until a promise must settle: call again once it has. */
  run(): Promise<void> | undefined {
    const { sym, time, price } = this.data.columns;
    const { clock, sim, engine, equity } = this.p;
    const infos = this.p.symbols;
    const prices = equity.prices;
    const n = this.data.length;
    for (; this.i < n; this.i++, this.step = REFRESH) {
      const i = this.i;
      const s = sym[i] as number;
      const k = this.slot[s] as number;
      if (k === -1) continue;
      const t = valueAt(time, i);
      const p = valueAt(price, i);
      if (this.step === REFRESH) {
        this.account.sampleUpTo(t);
        clock.time = t;
        if (t >= this.nextRefresh) {
          this.nextRefresh = (Math.floor(t / this.refreshMs) + 1) * this.refreshMs;
          this.entries.flush(sim);
          const refreshed = this.gate.refresh();
          if (refreshed) return this.resumeAt(MARKET, refreshed);
        }
        this.step = MARKET;
      }
      if (this.step === MARKET) {
        if (i !== this.first) this.entries.move(sim, i, this.p.volume);
        prices[k] = p;
        // A candle's extremes are the modelled path: the market walks it, no strategy observes it (invariant 15).
        if (this.p.volume?.inPath(i) === true) {
          this.account.settle(t, k);
          continue;
        }
        this.entries.flush(sim);
        this.batch[0] = tickerAt(this.data, infos, i, this.p.volume);
        const observed = engine.observe(this.batch);
        if (observed) return this.resumeAt(POLL, observed);
        this.step = POLL;
      }
      if (this.step === POLL) {
        const polled = engine.pollOrders();
        if (polled) return this.resumeAt(SETTLE, polled);
      }
      this.account.settle(t, k);
    }
    this.entries.flush(sim);
    return undefined;
  }

  private resumeAt(step: number, pending: Promise<void>): Promise<void> {
    this.step = step;
    return pending;
  }
}
