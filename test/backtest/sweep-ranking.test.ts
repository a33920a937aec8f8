/**
 * The sweep's ranking on hand-made metrics: the objective, its ties, and what is never ranked; the printed tables
 * of a ranking and a walk-forward.
 */
import { describe, expect, it } from 'vitest';
import type { Metrics } from '../../src/backtest/summary.js';
import { rank, RANK_BY } from '../../src/backtest/sweep.js';
import { rankingRows, walkForwardTable } from '../../src/backtest/results-table.js';
import type { WalkForwardRecord } from '../../src/backtest/validation-runs.js';

function result(index: number, m: Partial<Metrics>, ended: string[] = []) {
  const metrics = { totalReturnPct: '0', sharpe: null, roundTrips: 10, ...m } as Metrics;
  return {
    index,
    overrides: { i: index },
    metrics,
    ended,
    equity: [],
    returns: [],
    dataGaps: { maxGapMs: 60_000, gaps: [] },
  };
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

describe('the printed walk-forward and ranking tables say what a reader must know', () => {
  const metrics = (sharpe: string, ret: string) => ({ sharpe, totalReturnPct: ret, roundTrips: 3 }) as Metrics;
  const span = (from: string, to: string) => ({ from: `2023-03-${from}`, to: `2023-03-${to}` });
  const record: WalkForwardRecord = {
    windows: [
      {
        train: span('01', '04'),
        test: span('04', '05'),
        chosen: { index: 0, overrides: { k: 1 }, inSample: metrics('-0.5', '-0.2') },
        outcome: 'tested',
        outOfSample: metrics('0.3', '0.1'),
        ended: [],
        trainFailures: [],
      },
      {
        train: span('02', '05'),
        test: span('05', '06'),
        chosen: { index: 1, overrides: { k: 2 }, inSample: metrics('1.2', '0.4') },
        outcome: 'failed',
        outOfSample: null,
        ended: ['instance x ended paused: onTick threw: late'],
        trainFailures: [{ part: 'window 2 train', overrides: { k: 1 }, ended: ['instance x ended paused: boom'] }],
      },
    ],
    stitched: { equity: [], returnPct: '0.1000', maxDrawdownPct: '0', complete: false, windowsTested: 1 },
    efficiency: null,
    efficiencyNote: 'n/a: the out-of-sample result is incomplete (window 2 failed)',
    untested: span('06', '08'),
  };

  it('names a failed window, the train failures, a pick that lost in-sample, the untested days and why n/a', () => {
    const text = walkForwardTable(record, ['k'], { rankBy: 'sharpe', minTrades: 0 });
    expect(text).toContain("window 1: the pick's in-sample sharpe is -0.5 (below 0): it is the least bad");
    expect(text).toContain('window 2: 1 combination(s) FAILED on the train part');
    expect(text).toContain('window 2 FAILED: instance x ended paused: onTick threw: late');
    expect(text).toMatch(/^2 .* FAILED +-$/m);
    expect(text).toContain('not tested: 2023-03-06 to 2023-03-08, after the last test part');
    expect(text).toContain(
      'stitched out-of-sample (INCOMPLETE: 1 of 2 windows tested to their end): return 0.1000 %, max drawdown 0 %, ' +
        'walk-forward efficiency n/a: the out-of-sample result is incomplete (window 2 failed)',
    );
  });

  it('prints each metric once: the objective first, never again as another column', () => {
    const results = rank([result(0, { sharpe: '1.5', totalReturnPct: '2' })]);
    for (const rankBy of RANK_BY) {
      const [head] = rankingRows(results, [], { rankBy, minTrades: 0 }, () => '');
      const lower = head!.map((h) => h.toLowerCase().replace(' %', ''));
      expect(new Set(lower).size, `${rankBy}: ${head!.join(', ')}`).toBe(lower.length);
      expect(head![1]).toBe(rankBy);
    }
  });
});
