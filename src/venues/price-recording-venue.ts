/**
 * A Venue decorator that remembers the last price of the configured symbols from every market watch and writes
 * it to the store now and then, so `status` can value open positions from SQLite alone, with or without a
 * running daemon. It also keeps each symbol's candles for the page's price chart (the chart's own books, never a
 * strategy's: `chartNeeds`), saved in the store's candles table under `chart:<symbol>` about once a wall-clock
 * minute and at the stop, taken up again at the next start. Everything else passes straight through.
 */
import { CandleBuilder, type CandleNeeds, type CandleSnapshot } from '../market/candles.js';
import type { Ticker } from '../ports/venue-records.js';
import { fromWire, plain } from '../market/decimal.js';
import type { ClockReading } from '../ports/clock.js';
import { ForwardingVenue } from './forwarding-venue.js';
import type { Venue } from '../ports/venue.js';
import type { LastPrice } from '../store/last-prices.js';
import type { Store } from '../store/store.js';

/** Each write is a committed (fsynced) transaction: status does not need fresher prices than this. */
const WRITE_INTERVAL_MS = 5_000;

/**
 * How often the chart's candles are saved, in wall-clock time (they are rebuilt from nothing else). A save writes
 * every candle the chart keeps (thousands a symbol): once a minute of a replay's time, at PAPER_SPEED 60 once a
 * wall second, was most of a paper daemon's work, for a chart that only a crash would cut short.
 */
const CHART_SAVE_MS = 60_000;

/** The store's key of a symbol's chart candles (beside the engine's, keyed by the symbol alone). */
const chartKey = (symbol: string) => `chart:${symbol}`;

/** Prices kept per symbol for the dashboard's chart (one per market watch, at the time it was seen). */
export const PRICE_HISTORY_POINTS = 2_000;

export interface PricePoint {
  time: number;
  price: number;
}

export class PriceRecordingVenue extends ForwardingVenue {
  private readonly latest = new Map<string, Ticker>();
  private written = new Map<string, number>();
  private lastWrite = -Infinity;
  private readonly history = new Map<string, PricePoint[]>();
  private readonly charts = new Map<string, CandleBuilder>();
  private readonly symbols: Set<string>;
  private chartsSaved: number;

  /**
   * `chartNeeds`: the candles to keep per symbol for the chart (none: no chart candles). `pace`: the clock's time
   * per wall-clock time (PAPER_SPEED on a replay of recordings), so that the chart is saved once a wall minute.
   */
  constructor(
    inner: Venue,
    private readonly store: Store,
    private readonly clock: ClockReading,
    symbols: Iterable<string>,
    chartNeeds: ReadonlyMap<string, CandleNeeds> = new Map(),
    private readonly pace = 1,
  ) {
    super(inner);
    this.symbols = new Set(symbols);
    this.chartsSaved = clock.now();
    for (const [symbol, needs] of chartNeeds) this.keepChart(symbol, needs);
  }

  /** A symbol traded from now on (a pair a pair list took up after the start): its prices and chart kept too. */
  watch(symbol: string, chartNeeds: CandleNeeds | undefined): void {
    this.symbols.add(symbol);
    if (chartNeeds !== undefined && !this.charts.has(symbol)) this.keepChart(symbol, chartNeeds);
  }

  private keepChart(symbol: string, needs: CandleNeeds): void {
    const book = new CandleBuilder(needs);
    const saved = this.store.candles.get(chartKey(symbol));
    try {
      if (saved !== undefined) book.restore(JSON.parse(saved) as CandleSnapshot);
    } catch {
      // Unreadable: the chart starts afresh (display only).
    }
    this.charts.set(symbol, book);
  }

  /** A symbol's chart candles (the page's price chart), when kept. */
  chartCandles(symbol: string): CandleBuilder | undefined {
    return this.charts.get(symbol);
  }

  /** Market data from before the start (paper on recordings' warm-up): the chart's candles, as the engine's. */
  warmUp(symbol: string, time: number, price: number): void {
    this.charts.get(symbol)?.tick(time, price, NaN);
  }

  override async marketWatch(symbol?: string): Promise<Ticker[]> {
    const tickers = await this.inner.marketWatch(symbol);
    const now = this.clock.now();
    for (const t of tickers) {
      if (!this.symbols.has(t.symbol)) continue;
      this.latest.set(t.symbol, t);
      this.remember(t.symbol, { time: now, price: t.last });
      // On the daemon's clock, as the fills and orders the page marks on it (a lockstep replay's is the wall's).
      this.charts.get(t.symbol)?.tick(now, t.last, NaN);
    }
    if (this.clock.now() - this.lastWrite >= WRITE_INTERVAL_MS) this.flush();
    return tickers;
  }

  /** The recent prices of each configured symbol, oldest first (bounded). */
  recentPrices(): ReadonlyMap<string, readonly PricePoint[]> {
    return this.history;
  }

  private remember(symbol: string, point: PricePoint): void {
    let points = this.history.get(symbol);
    if (points === undefined) this.history.set(symbol, (points = []));
    points.push(point);
    // Trimmed a tenth at a time rather than one shift per point.
    if (points.length > PRICE_HISTORY_POINTS) points.splice(0, points.length - PRICE_HISTORY_POINTS * 0.9);
  }

  /** Writes the prices seen since the last write, and the chart's candles when due (also called at shutdown). */
  flush(final = false): void {
    const now = this.clock.now();
    this.lastWrite = now;
    if ((final || now - this.chartsSaved >= CHART_SAVE_MS * this.pace) && this.store.db.open) {
      this.chartsSaved = now;
      this.store.transaction(() => {
        for (const [symbol, book] of this.charts)
          this.store.candles.put(chartKey(symbol), JSON.stringify(book.snapshot()), now);
      });
    }
    const changed: LastPrice[] = [];
    for (const [symbol, t] of this.latest)
      if (this.written.get(symbol) !== t.time) changed.push({ symbol, price: plain(fromWire(t.last)), time: t.time });
    if (changed.length === 0 || !this.store.db.open) return;
    this.store.transaction(() => {
      for (const p of changed) this.store.prices.put(p, now);
    });
    this.written = new Map([...this.latest].map(([s, t]) => [s, t.time]));
  }
}
