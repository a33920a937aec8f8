/**
 * What size costs a taker (issue 38): the square-root law of market impact. An order of `Q` base units moves the
 * price it pays against itself by
 *
 *     impact = σ × sqrt(Q / V)
 *
 * of the price, where `V` is the base volume traded over a day and `σ` the day's volatility (Almgren, Thum,
 * Hauptmann and Li, "Direct estimation of equity market impact", 2005; Tóth et al., "Anomalous price impact and
 * the critical nature of liquidity in financial markets", 2011: the law holds across markets and sizes, with a
 * prefactor of order one, taken as 1 here). Both come from the 24-hour ticker the market watch gives on every
 * venue (live, paper, backtest): `V` its base volume, `σ` Parkinson's estimate from its high and low,
 * ln(high / low) / (2 sqrt(ln 2)). Chosen over a walk through the candle's range because it needs nothing the
 * market watch does not show (recordings of it have no candles), grows with size as measured rather than
 * linearly, and is a figure a trader can check by hand. 0.01 BTC on a day of 4 % range and 6,000 BTC is about
 * 0.3 bp; 100 BTC, 31 bp. A ticker without high, low or volume: no impact.
 */
const PARKINSON = 2 * Math.sqrt(Math.LN2);

/**
 * The share of the price a taker of `quantity` base units pays for its size, on the day of a market-watch entry
 * (its `h`, `l` and `vb`).
 */
export function impactRatio(day: Readonly<Record<string, unknown>> | undefined, quantity: number): number {
  const h = day?.h;
  const l = day?.l;
  const v = day?.vb;
  if (typeof h !== 'number' || typeof l !== 'number' || typeof v !== 'number') return 0;
  if (!(l > 0 && h >= l && v > 0 && quantity > 0)) return 0;
  return (Math.log(h / l) / PARKINSON) * Math.sqrt(quantity / v);
}
