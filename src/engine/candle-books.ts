/**
 * The engine's candles: one CandleBuilder (market/candles.ts) per symbol an instance declared candles or
 * indicators on (its own, or an informative pair it reads), as long as the longest lookback of them, fed every ticker the engine observes (and a warm-up's
 * data before the start). With `persist` (the daemon) they are saved in the store's `candles` table at each
 * refresh and at stop, and taken up at start, so a restarted daemon has its strategies' lookback at once.
 */
import { CandleBuilder, type CandleNeeds, type CandleSnapshot } from '../market/candles.js';
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Ticker } from '../ports/venue-records.js';
import type { Store } from '../store/store.js';
import { candleNeeds, informativeNeeds } from '../strategy/candle-needs.js';
import type { InstanceSpec } from './instance-runner.js';

export class CandleBooks {
  private readonly books = new Map<string, CandleBuilder>();

  constructor(
    specs: readonly InstanceSpec[],
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Save and take up the candles (the daemon); backtests never restart. */
    private readonly persist: boolean,
  ) {
    const needs = new Map<string, CandleNeeds>();
    const add = (symbol: string, more: CandleNeeds) => {
      const merged = needs.get(symbol) ?? {};
      for (const [tf, n] of Object.entries(more) as [keyof CandleNeeds, number][])
        merged[tf] = Math.max(merged[tf] ?? 0, n);
      needs.set(symbol, merged);
    };
    for (const spec of specs) {
      add(spec.config.symbol, candleNeeds(spec.definition, spec.params));
      for (const [symbol, more] of informativeNeeds(spec.definition, spec.params)) add(symbol, more);
    }
    for (const [symbol, need] of needs)
      if (Object.keys(need).length > 0) this.books.set(symbol, new CandleBuilder(need));
  }

  /**
   * The book of an instance made after the start (a pair a pair list took up): its own candles from now on, when
   * its strategy declares any and no book of its symbol is kept yet (an informative pair's is shared as it is).
   */
  add(spec: InstanceSpec): void {
    const symbol = spec.config.symbol;
    const need = candleNeeds(spec.definition, spec.params);
    if (!this.books.has(symbol) && Object.keys(need).length > 0) this.books.set(symbol, new CandleBuilder(need));
  }

  /** The candles of `symbol` (undefined when no instance on it declared any). */
  get(symbol: string): CandleBuilder | undefined {
    return this.books.get(symbol);
  }

  /** Whether candles of `symbol` are kept: each of its tickers then counts (observe). */
  keeps(symbol: string): boolean {
    return this.books.has(symbol);
  }

  /**
   * A ticker observed: its symbol's candles take it (cheap when no instance declared any: the tick path); one that
   * closes a candle (Ticker.candle, candle data) brings the candle's open, high and low first, so the candles are
   * the data's even though the path inside it is never observed.
   */
  observe(t: Ticker): void {
    if (this.books.size === 0) return;
    const book = this.books.get(t.symbol);
    if (book === undefined) return;
    const volume = t.baseVolume ?? NaN;
    const c = t.candle;
    if (c !== undefined) {
      book.tick(t.time, c.open, volume);
      book.tick(t.time, c.high, volume);
      book.tick(t.time, c.low, volume);
    }
    book.tick(t.time, t.last, volume);
  }

  /** Market data from before the start (a warm-up). `volume24h` is the rolling 24-hour base volume (NaN: none). */
  warmUp(symbol: string, time: number, price: number, volume24h: number): void {
    this.books.get(symbol)?.tick(time, price, volume24h);
  }

  /** Takes up the candles an earlier run saved (a book unreadable is built afresh). */
  restore(): void {
    if (!this.persist) return;
    for (const [symbol, book] of this.books) {
      const saved = this.store.candles.get(symbol);
      if (saved === undefined) continue;
      try {
        book.restore(JSON.parse(saved) as CandleSnapshot);
      } catch (err) {
        this.logger.warn({ err, symbol }, 'saved candles unreadable: building them afresh');
      }
    }
  }

  save(): void {
    if (!this.persist) return;
    for (const [symbol, book] of this.books)
      this.store.candles.put(symbol, JSON.stringify(book.snapshot()), this.clock.now());
  }
}
