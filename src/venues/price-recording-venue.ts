/**
 * A Venue decorator that remembers the last price of the configured symbols from every market watch and writes
 * it to the store now and then, so `status` can value open positions from SQLite alone, with or without a
 * running daemon. Everything else passes straight through.
 */
import type { Ticker } from '../ports/venue-records.js';
import { fromWire, plain } from '../market/decimal.js';
import type { ClockReading } from '../ports/clock.js';
import { ForwardingVenue } from './forwarding-venue.js';
import type { Venue } from '../ports/venue.js';
import type { LastPrice } from '../store/last-prices.js';
import type { Store } from '../store/store.js';

/** Each write is a committed (fsynced) transaction: status does not need fresher prices than this. */
const WRITE_INTERVAL_MS = 5_000;

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

  constructor(
    inner: Venue,
    private readonly store: Store,
    private readonly clock: ClockReading,
    private readonly symbols: ReadonlySet<string>,
  ) {
    super(inner);
  }

  override async marketWatch(symbol?: string): Promise<Ticker[]> {
    const tickers = await this.inner.marketWatch(symbol);
    const now = this.clock.now();
    for (const t of tickers) {
      if (!this.symbols.has(t.symbol)) continue;
      this.latest.set(t.symbol, t);
      this.remember(t.symbol, { time: now, price: t.last });
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

  /** Writes the prices seen since the last write (also called at shutdown). */
  flush(): void {
    const now = this.clock.now();
    this.lastWrite = now;
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
