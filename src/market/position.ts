/**
 * An instance's position from its own fills, folded in recording order: net base quantity, average entry
 * price and realised PnL in the quote asset, exact. Fees paid in the base asset change the quantity (a BUY
 * of 1 with a 0.001 base fee holds 0.999); fees paid in the quote asset are realised costs at once; fees in
 * a third asset are not converted (they stay visible on the fill rows).
 */
import { D, type Dec, ZERO } from './decimal.js';
import type { Side } from './pair-rules.js';

export interface Position {
  /** Base asset held by this instance from its own fills (bought minus sold). */
  quantity: Dec;
  /** Average entry price of the open quantity (quote per base), zero when flat. */
  averagePrice: Dec;
  realisedPnl: Dec;
}

/** A stored fill's figures as decimal text (the journal's fill rows have them). */
export interface FillFigures {
  side: Side;
  price: string;
  qty: string;
  fee: string;
  feeIn: 'base' | 'quote' | 'other';
  time: number;
}

export interface PositionFill {
  side: Side;
  price: Dec;
  qty: Dec;
  fee: Dec;
  feeIn: 'base' | 'quote' | 'other';
  time: number;
}

const DAY_MS = 86_400_000;

/** Days since the epoch in UTC: the key of the daily loss limit. */
export function utcDay(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** What a position's fold carries from one fill to the next (what a stored fold keeps). */
export interface PositionBook {
  quantity: Dec;
  /** Quote value of the open quantity at its average price. */
  cost: Dec;
  realised: Dec;
}

export class PositionTracker {
  private quantity: Dec = ZERO;
  /** Quote value of the open quantity at its average price. */
  private cost: Dec = ZERO;
  private realised: Dec = ZERO;
  private readonly realisedByDay = new Map<number, Dec>();
  private snapshot: Position = { quantity: ZERO, averagePrice: ZERO, realisedPnl: ZERO };

  /** A tracker that goes on from a stored fold, with the realised PnL of the days given (the others start empty). */
  static resume(book: PositionBook, days: ReadonlyMap<number, Dec> = new Map()): PositionTracker {
    const tracker = new PositionTracker();
    tracker.quantity = book.quantity;
    tracker.cost = book.cost;
    tracker.realised = book.realised;
    for (const [day, realised] of days) tracker.realisedByDay.set(day, realised);
    tracker.snapshot = snapshotOf(book);
    return tracker;
  }

  /** The fold's state, to store and resume from. */
  get book(): PositionBook {
    return { quantity: this.quantity, cost: this.cost, realised: this.realised };
  }

  /** Folds one fill in; returns the PnL it realised (negative for a loss, fees included). */
  apply(fill: PositionFill): Dec {
    const baseFee = fill.feeIn === 'base' ? fill.fee : ZERO;
    const quoteFee = fill.feeIn === 'quote' ? fill.fee : ZERO;
    const delta = fill.side === 'BUY' ? fill.qty.minus(baseFee) : fill.qty.plus(baseFee).neg();
    let realised = quoteFee.neg();
    if (!delta.isZero()) {
      // The fill's quote value, split between the part that closes and the part that opens without a
      // per-unit price, so a whole fill or a whole position is accounted exactly.
      const value = fill.qty.mul(fill.price);
      const held = this.quantity;
      if (held.isZero() || held.isNeg() === delta.isNeg()) {
        this.cost = this.cost.plus(value);
        this.quantity = held.plus(delta);
      } else {
        const closed = D.min(delta.abs(), held.abs());
        const closedCost = closed.eq(held.abs()) ? this.cost : this.cost.mul(closed).div(held.abs());
        const proceeds = closed.eq(delta.abs()) ? value : value.mul(closed).div(delta.abs());
        realised = realised.plus(held.isPos() ? proceeds.minus(closedCost) : closedCost.minus(proceeds));
        const opened = delta.abs().minus(closed);
        this.quantity = held.plus(delta);
        this.cost = opened.isZero() ? this.cost.minus(closedCost) : value.minus(proceeds);
      }
      if (this.quantity.isZero()) this.cost = ZERO;
    }
    this.realised = this.realised.plus(realised);
    const day = utcDay(fill.time);
    this.realisedByDay.set(day, (this.realisedByDay.get(day) ?? ZERO).plus(realised));
    this.snapshot = snapshotOf(this.book);
    return realised;
  }

  /** The current position (a new object after each fill, so a strategy may keep one as a snapshot). */
  get position(): Position {
    return this.snapshot;
  }

  /** Realised PnL of fills whose time falls on the given UTC day. */
  realisedOn(day: number): Dec {
    return this.realisedByDay.get(day) ?? ZERO;
  }

  /** PnL of the open quantity if it were closed at `price` (before fees). */
  unrealisedAt(price: Dec): Dec {
    const { quantity, averagePrice } = this.snapshot;
    return quantity.isZero() ? ZERO : price.minus(averagePrice).mul(quantity);
  }
}

function snapshotOf(book: PositionBook): Position {
  const { quantity, cost, realised } = book;
  return { quantity, averagePrice: quantity.isZero() ? ZERO : cost.div(quantity.abs()), realisedPnl: realised };
}

/** A position from stored fill rows (recording order), as at start or for `status`. */
export function positionFromFills(rows: readonly FillFigures[]): PositionTracker {
  const tracker = new PositionTracker();
  for (const f of rows) tracker.apply(positionFill(f));
  return tracker;
}

export function positionFill(f: FillFigures): PositionFill {
  return { side: f.side, price: new D(f.price), qty: new D(f.qty), fee: new D(f.fee), feeIn: f.feeIn, time: f.time };
}
