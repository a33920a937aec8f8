/**
 * The replay moves a tick that can fill nothing by its price alone (MarketEntries.move, MatchingEngine.quietPrice)
 * and gives the simulated market that tick's whole entry (24-hour range and volumes, what a taker's impact reads)
 * when something may read it: flush(), before the engine runs.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MarketEntries } from '../../src/backtest/market-entries.js';
import { valueAt } from '../../src/backtest/number-column.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { SAMPLE } from './fixtures.js';

const FROM = Date.parse('2023-03-09T00:00:00Z');

let data: TickData;
beforeAll(async () => {
  data = await loadTicks([SAMPLE], { from: FROM, to: FROM + 600_000 });
});

describe('MarketEntries', () => {
  it('moves a quiet tick by its price, and gives its entry to the market on flush', () => {
    const { vb } = data.columns;
    const i = (() => {
      for (let k = 1; k < data.length; k++) if (valueAt(vb, k) !== valueAt(vb, 0)) return k;
      throw new Error('the slice has no two ticks of different volumes');
    })();
    const sim = new MatchingEngine();
    const entries = new MarketEntries(data);
    sim.onTicker(entries.at(0));
    entries.move(sim, i, undefined);
    // No order rests: the tick is quiet, its price moved, the entry still the first tick's.
    const [moved] = sim.tickers('BTCUSDT');
    expect(moved).toMatchObject({ p: valueAt(data.columns.price, i), vb: valueAt(vb, 0) });
    entries.flush(sim);
    expect(sim.tickers('BTCUSDT')[0]).toMatchObject({ p: valueAt(data.columns.price, i), vb: valueAt(vb, i) });
  });
});
