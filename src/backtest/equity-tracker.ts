/**
 * The account's value in the quote asset, followed on every tick: in doubles for speed (two multiply-adds a
 * tick), with the exact Decimal balances kept by reference so that the samples and both ends of the maximum
 * drawdown are recomputed exactly. Balances change only when the venue's revision moves, so they are read
 * from the matching engine then, not per tick.
 */
import { type Dec, fromWire, ZERO } from '../market/decimal.js';

export interface EquitySample {
  time: number;
  /** Last price of each symbol (in the unit's order; NaN before its first tick). */
  prices: number[];
  equity: Dec;
  /** Total (free + locked) of each symbol's base asset (same order), and of the quote asset. */
  held: readonly Dec[];
  quote: Dec;
}

/** The samples as chart points: [seconds, equity to the cent], one per second (the later sample wins). */
export function equityCurve(samples: readonly EquitySample[]): [number, number][] {
  const out: [number, number][] = [];
  for (const s of samples) {
    const point: [number, number] = [Math.floor(s.time / 1000), Math.round(s.equity.toNumber() * 100) / 100];
    if (out.length > 0 && (out[out.length - 1] as [number, number])[0] === point[0]) out[out.length - 1] = point;
    else out.push(point);
  }
  return out;
}

export interface DrawdownPoint {
  time: number;
  equity: Dec;
}

interface Snapshot {
  time: number;
  prices: Float64Array;
  held: readonly Dec[];
  quote: Dec;
}

export class EquityTracker {
  /** Last price per symbol of the unit (NaN before its first tick). */
  readonly prices: Float64Array;
  private held: Dec[];
  private heldN: Float64Array;
  private quote: Dec = ZERO;
  private quoteN = 0;
  private peakN = -Infinity;
  private readonly peak: Snapshot;
  private worst = 0;
  private worstPeak: Snapshot | undefined;
  private worstTrough: Snapshot | undefined;
  readonly samples: EquitySample[] = [];

  /** `symbols` many base assets (one per symbol, in order) and one quote asset. */
  constructor(symbols: number) {
    this.prices = new Float64Array(symbols).fill(NaN);
    this.held = new Array<Dec>(symbols).fill(ZERO);
    this.heldN = new Float64Array(symbols);
    this.peak = { time: 0, prices: new Float64Array(symbols), held: this.held, quote: ZERO };
  }

  /** `held` is kept by reference (samples and snapshots share it): pass a new array each time, never reuse one. */
  setBalances(quote: Dec, held: Dec[]): void {
    this.quote = quote;
    this.quoteN = quote.toNumber();
    this.held = held;
    for (let k = 0; k < held.length; k++) this.heldN[k] = (held[k] as Dec).toNumber();
  }

  /** After a tick was processed: follows the peak and the deepest drawdown from it; returns the equity. */
  update(time: number): number {
    let e = this.quoteN;
    const { prices, heldN } = this;
    for (let k = 0; k < heldN.length; k++) {
      const h = heldN[k] as number;
      if (h !== 0) e += h * (prices[k] as number);
    }
    if (e > this.peakN) {
      this.peakN = e;
      const peak = this.peak;
      peak.time = time;
      peak.prices.set(prices);
      peak.held = this.held;
      peak.quote = this.quote;
    } else if ((this.peakN - e) / this.peakN > this.worst) {
      this.worst = (this.peakN - e) / this.peakN;
      this.worstPeak = { ...this.peak, prices: this.peak.prices.slice() };
      this.worstTrough = { time, prices: prices.slice(), held: this.held, quote: this.quote };
    }
    return e;
  }

  sample(time: number): void {
    this.samples.push({
      time,
      prices: Array.from(this.prices),
      equity: exact(this.quote, this.held, this.prices),
      held: this.held,
      quote: this.quote,
    });
  }

  /** The deepest fall from a previous peak, exact at both ends; undefined when equity never fell. */
  drawdown(): { peak: DrawdownPoint; trough: DrawdownPoint } | undefined {
    const { worstPeak: p, worstTrough: t } = this;
    if (!p || !t) return undefined;
    return {
      peak: { time: p.time, equity: exact(p.quote, p.held, p.prices) },
      trough: { time: t.time, equity: exact(t.quote, t.held, t.prices) },
    };
  }
}

function exact(quote: Dec, held: readonly Dec[], prices: Float64Array): Dec {
  let e = quote;
  for (let k = 0; k < held.length; k++) {
    const p = prices[k] as number;
    const h = held[k] as Dec;
    if (p === p && !h.isZero()) e = e.plus(h.mul(fromWire(p)));
  }
  return e;
}
