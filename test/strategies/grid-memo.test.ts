/**
 * The grid skips its work on ticks whose inputs are as quiet ticks saw them (strategies/grid.ts, onTick), and
 * tells the engine the price band in which a quiet call's outcome holds (ctx.quietBetween), so that the engine
 * does not call it there at all. Both must be optimisations only: the same run with the memo defeated (a fresh
 * context object for every hook call, so nothing is ever remembered) and no band declared (every new ticker
 * calls it) must place the same orders, get the same fills, log the same messages (leaving the range, notices)
 * and end with the same state.
 */
import { describe, expect, it } from 'vitest';
import grid from '../../strategies/grid.js';
import { runBacktest } from '../../src/backtest/runner.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { onePairInstance } from '../../src/config/strategy-file.js';
import { defineStrategy, type StrategyContext, type StrategyLogger } from '../../src/strategy/api.js';
import { FROM, SAMPLE, TO } from '../backtest/fixtures.js';

const configs = {
  'centred on the first price, seeded with base': {
    levels: 4,
    spacingPct: '0.25',
    quantity: '0.001',
    initialBase: '0.002',
  },
  // The market opens (21,715) below the reference: levels above it arm only once the price rises past them,
  // which is what the memo's price bands must notice.
  'a reference above the market': { levels: 6, spacingAbs: '25', quantity: '0.001', referencePrice: '21800' },
  // A narrow range the price leaves and re-enters again and again, under a budget that stops buys.
  'a narrow range under a tight budget': { levels: 2, spacingPct: '0.2', quantity: '0.001', budgetQuote: '45' },
};

type Ctx = StrategyContext<unknown, Record<string, unknown>>;

/**
 * The grid run through contexts that record what it logs: one per engine context, or (`memo` false) a new one per
 * call that declares no quiet band.
 */
function recorded(memo: boolean) {
  const logs: string[] = [];
  let state = '';
  const wrappers = new WeakMap<object, Ctx>();
  const wrap = (ctx: Ctx): Ctx => {
    const known = memo ? wrappers.get(ctx) : undefined;
    if (known) return known;
    const log: StrategyLogger = {
      debug: () => undefined,
      info: (msg, data) => logs.push(`info ${msg} ${JSON.stringify(data)}`),
      warn: (msg, data) => logs.push(`warn ${msg} ${JSON.stringify(data)}`),
      error: (msg, data) => logs.push(`error ${msg} ${JSON.stringify(data)}`),
    };
    const wrapper = Object.create(ctx, {
      log: { value: log },
      ...(memo ? {} : { quietBetween: { value: () => undefined } }),
    }) as Ctx;
    wrappers.set(ctx, wrapper);
    return wrapper;
  };
  // The grid's hooks are synchronous: the state after one is the state it left.
  const after = (ctx: Ctx, pending: unknown) => {
    if (pending !== undefined) throw new Error('expected a synchronous hook');
    state = JSON.stringify(ctx.state);
  };
  const definition = defineStrategy({
    ...grid,
    onTick: (ctx) => after(ctx as Ctx, grid.onTick(wrap(ctx as Ctx) as never)),
    onFill: (ctx, fill) => after(ctx as Ctx, grid.onFill!(wrap(ctx as Ctx) as never, fill)),
  });
  return { definition, logs, state: () => state };
}

describe('grid tick memo and quiet bands', () => {
  it.each(Object.entries(configs))(
    'changes nothing (%s): same orders, fills, logs and state with and without them',
    async (_, p) => {
      const config = onePairInstance({ name: 'grid-memo', strategy: 'grid', symbol: 'BTCUSDT', params: p });
      const params: unknown = grid.params.parse(config.params);
      const data = await loadTicks([SAMPLE], { from: Date.parse(FROM), to: Date.parse(TO) });
      const settings = { balances: { USDT: '1000', BTC: '0.002' } };
      const memo = recorded(true);
      const full = recorded(false);
      const a = await runBacktest([{ config, definition: memo.definition, params }], data, settings);
      const b = await runBacktest([{ config, definition: full.definition, params }], data, settings);
      expect(a.trace.fills.length).toBeGreaterThan(10);
      expect(a.trace).toEqual(b.trace);
      expect(a.final).toEqual(b.final);
      expect(memo.logs.length).toBeGreaterThan(0);
      expect(memo.logs).toEqual(full.logs);
      expect(memo.state()).toEqual(full.state());
    },
  );
});
