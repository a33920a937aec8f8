/** The sweep's ranking on hand-made metrics: the objective, its ties, and what is never ranked. */
import { describe, expect, it } from 'vitest';
import type { Metrics } from '../../src/backtest/summary.js';
import { rank, RANK_BY } from '../../src/backtest/sweep.js';

function result(index: number, m: Partial<Metrics>, ended: string[] = []) {
  const metrics = { totalReturnPct: '0', sharpe: null, roundTrips: 10, ...m } as Metrics;
  return { index, overrides: { i: index }, metrics, ended, equity: [], dataGaps: { maxGapMs: 60_000, gaps: [] } };
}

describe('ranking a sweep', () => {
  it('orders by the objective, a missing value last, then by total return, then grid order', () => {
    const ranked = rank([
      result(0, { sharpe: '1.5', totalReturnPct: '2' }),
      result(1, { sharpe: null, totalReturnPct: '9' }),
      result(2, { sharpe: '2.5', totalReturnPct: '1' }),
      result(3, { sharpe: '1.5', totalReturnPct: '3' }),
      result(4, { sharpe: '1.5', totalReturnPct: '3' }),
    ]);
    expect(ranked.map((r) => [r.index, r.rank])).toEqual([
      [2, 1],
      [3, 2],
      [4, 3],
      [0, 4],
      [1, 5],
    ]);
    const byReturn = rank(
      [result(0, { sharpe: '3', totalReturnPct: '1' }), result(1, { sharpe: '1', totalReturnPct: '2' })],
      { rankBy: 'return', minTrades: 0 },
    );
    expect(byReturn.map((r) => r.index)).toEqual([1, 0]);
    expect(RANK_BY).toEqual(['return', 'sharpe', 'sortino', 'calmar', 'profit-factor', 'expectancy']);
  });

  it('never ranks a failed combination or one with fewer trades than asked, however good', () => {
    const ranked = rank(
      [
        result(0, { sharpe: '9', totalReturnPct: '50' }, ['instance a ended paused: onTick threw: boom']),
        result(1, { sharpe: '8', totalReturnPct: '40', roundTrips: 2 }),
        result(2, { sharpe: '0.1', totalReturnPct: '0.5', roundTrips: 3 }),
        result(3, { sharpe: '-1', totalReturnPct: '-1', roundTrips: 30 }),
      ],
      { rankBy: 'sharpe', minTrades: 3 },
    );
    expect(ranked.map((r) => [r.index, r.rank, r.status])).toEqual([
      [2, 1, 'ranked'],
      [3, 2, 'ranked'],
      [0, null, 'failed'],
      [1, null, 'too few trades'],
    ]);
  });
});
