/**
 * The grid skips its work on ticks whose inputs are as the last quiet tick saw them (strategies/grid.ts,
 * onTick). That must be an optimisation only: the same run with the memo defeated (a fresh context object
 * for every hook call, so nothing is ever remembered) must place the same orders and get the same fills.
 */
import { describe, expect, it } from 'vitest';
import grid from '../../strategies/grid.js';
import { runBacktest } from '../../src/backtest/runner.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { StrategyFileSchema } from '../../src/config/strategy-file.js';
import { defineStrategy } from '../../src/strategy/api.js';
import { FROM, SAMPLE, TO } from '../backtest/fixtures.js';

const configs = {
  'centred on the first price, seeded with base': {
    levels: 4,
    spacingPct: '0.25',
    quantity: '0.001',
    initialBase: '0.002',
  },
  // The market opens (21,715) below the reference: levels above it arm only once the price rises past them,
  // which is what the memo's price band must notice.
  'a reference above the market': { levels: 6, spacingAbs: '25', quantity: '0.001', referencePrice: '21800' },
};

/** A context whose identity is new on every call: the grid's per-context memo never hits. */
const fresh = <C extends object>(ctx: C): C => Object.create(ctx) as C;
const forgetful = defineStrategy({
  ...grid,
  onTick: (ctx) => grid.onTick(fresh(ctx)),
  onFill: (ctx, fill) => grid.onFill!(fresh(ctx), fill),
});

describe('grid tick memo', () => {
  it.each(Object.entries(configs))('changes nothing (%s): same orders and fills with and without it', async (_, p) => {
    const config = StrategyFileSchema.parse({ name: 'grid-memo', strategy: 'grid', symbol: 'BTCUSDT', params: p });
    const params: unknown = grid.params.parse(config.params);
    const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
    const settings = { balances: { USDT: '1000', BTC: '0.002' } };
    const memo = await runBacktest([{ config, definition: grid, params }], data, settings);
    const full = await runBacktest([{ config, definition: forgetful, params }], data, settings);
    expect(memo.trace.fills.length).toBeGreaterThan(20);
    expect(memo.trace).toEqual(full.trace);
    expect(memo.final).toEqual(full.final);
  });
});
