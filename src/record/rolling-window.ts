/**
 * Trailing-window aggregates over a time series, each update amortised O(1): a monotonic deque for the
 * extreme (no rescans of the window) and a queue with exact running sums for volumes.
 */
import { ZERO, type Dec } from '../market/decimal.js';

/** Entries in time order behind a head index: eviction from the front is O(1) amortised. */
abstract class TimeQueue<T extends { time: number }> {
  protected readonly items: T[] = [];
  protected head = 0;

  /** Drops entries with time <= cutoff. */
  evict(cutoff: number): void {
    while (this.head < this.items.length && this.items[this.head]!.time <= cutoff) {
      this.dropped(this.items[this.head++]!);
    }
    // Compact once the dead prefix is large, so memory stays bounded by the window.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
  }

  protected abstract dropped(item: T): void;
}

interface Entry {
  time: number;
  value: number;
  text: string;
}

/** Highest (or lowest) value among entries whose time is after the eviction cutoff. */
export class RollingExtreme extends TimeQueue<Entry> {
  /** `max` keeps the highest value, otherwise the lowest. */
  constructor(private readonly max: boolean) {
    super();
  }

  push(time: number, value: number, text: string): void {
    // An entry that is older and no better than the new one can never be the extreme again.
    while (this.items.length > this.head) {
      const last = this.items[this.items.length - 1]!;
      if (this.max ? last.value > value : last.value < value) break;
      this.items.pop();
    }
    this.items.push({ time, value, text });
  }

  /** The extreme in the window, undefined when the window is empty. */
  best(): Entry | undefined {
    return this.items[this.head];
  }

  protected dropped(): void {}
}

interface Amount {
  time: number;
  base: Dec;
  quote: Dec;
}

/** Exact sums of base and quote amounts over the window. */
export class RollingSum extends TimeQueue<Amount> {
  base: Dec = ZERO;
  quote: Dec = ZERO;

  push(time: number, base: Dec, quote: Dec): void {
    this.items.push({ time, base, quote });
    this.base = this.base.plus(base);
    this.quote = this.quote.plus(quote);
  }

  protected dropped(gone: Amount): void {
    this.base = this.base.minus(gone.base);
    this.quote = this.quote.minus(gone.quote);
  }
}
