/**
 * An instance's PnL over time, for the dashboard's equity chart: after each fill, the realised PnL so far and
 * the open position valued at that fill's price; then a last point now, at the last recorded price. Folded
 * with the same position tracker as status and the engine, so the last point equals what status shows. Each
 * total is the sum of its two rounded parts.
 */
import { type Dec, type DecimalLike, dec, plain } from '../market/decimal.js';
import { positionFill, PositionTracker } from '../market/position.js';
import type { FillRow } from '../store/fills.js';

export interface PnlPoint {
  time: number;
  realised: string;
  unrealised: string;
  total: string;
}

/** At most this many points per instance: older ones are thinned evenly (the last is always kept). */
export const MAX_PNL_POINTS = 1_000;

/** `round` writes each figure for people (the quote asset's precision); exact plain text by default. */
export function pnlSeries(
  fills: readonly FillRow[],
  last: { time: number; price: DecimalLike } | undefined,
  round: (d: Dec) => string = plain,
): PnlPoint[] {
  const tracker = new PositionTracker();
  const points: PnlPoint[] = [];
  const point = (time: number, price: DecimalLike) => {
    const realised = round(tracker.position.realisedPnl);
    const unrealised = round(tracker.unrealisedAt(dec(price)));
    // The total is its rounded parts added (exactly), so what is shown adds up: -8.96 + 0 is -8.96, never -8.97.
    // Whole milliseconds: a replay clock's time has fractions no one reads.
    points.push({ time: Math.floor(time), realised, unrealised, total: plain(dec(realised).plus(unrealised)) });
  };
  for (const f of fills) {
    tracker.apply(positionFill(f));
    point(f.time, f.price);
  }
  if (last !== undefined && fills.length > 0)
    point(Math.max(last.time, points[points.length - 1]?.time ?? 0), last.price);
  if (points.length <= MAX_PNL_POINTS) return points;
  const step = points.length / (MAX_PNL_POINTS - 1);
  const thinned: PnlPoint[] = [];
  for (let i = 0; i < MAX_PNL_POINTS - 1; i++) thinned.push(points[Math.floor(i * step)] as PnlPoint);
  thinned.push(points[points.length - 1] as PnlPoint);
  return thinned;
}
