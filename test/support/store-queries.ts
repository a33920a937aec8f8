/**
 * The operator layer's real queries over a store, for tests of a face (the listener, the chat) that need no
 * engine: the engine's side is a daemon whose instances are not loaded, with the balances and pair rules given.
 */
import { join } from 'node:path';
import type { Balance } from '../../src/strategy/api.js';
import type { PairRules } from '../../src/market/pair-rules.js';
import { createQueries } from '../../src/operator/queries.js';
import type { LogTail } from '../../src/ops/log-tail.js';
import type { Store } from '../../src/store/store.js';

export function storeQueries(
  store: Store,
  dir: string,
  options: {
    balances?: Balance[];
    rules?: Record<string, PairRules>;
    logs?: LogTail;
    /** Each multi-pair file's maxOpenTrades, as the engine would say. */
    maxOpenTrades?: Record<string, number>;
  } = {},
) {
  return createQueries({
    store,
    now: () => Date.now(),
    wallNow: () => Date.now(),
    killSwitchFile: join(dir, 'KILL'),
    engine: {
      instances: () => [],
      brakes: () => ({ killSwitch: false, stopBuy: false, breakerOpenUntil: undefined, halted: undefined }),
      running: true,
      balances: () => options.balances ?? [],
      journalProblem: () => undefined,
      pairRules: (symbol) => options.rules?.[symbol],
      venueRefusals: () => [],
      indicatorSpecs: () => ({}),
      maxOpenTrades: (group) => options.maxOpenTrades?.[group],
    },
    jobs: () => [],
    prices: () => new Map(),
    logs: (n) => options.logs?.recent(n) ?? [],
    daemon: { mode: 'paper', venue: 'test', banner: 'test' },
  });
}
