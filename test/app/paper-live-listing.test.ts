/**
 * Issue 41: paper on live prices takes up a pair the exchange lists after the start, as live does
 * (test/engine/pair-list-listing.test.ts): the simulated exchange learns the new pair's rules and prices from the
 * exchange, so a pair list takes it up at its next refresh and trades it on paper. In process: a simulated exchange
 * served over HTTP stands for the exchange, the paper venue is the daemon's own (setUpVenue: the embedded simulated
 * exchange fed by the proxy feed, the signed client), on a virtual clock the test moves.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/app/env.js';
import { setUpVenue } from '../../src/app/venue-setup.js';
import { planVenue } from '../../src/app/venue-plan.js';
import { somePairListMayChoose } from '../../src/config/strategy-file.js';
import { Engine } from '../../src/engine/engine.js';
import { silentLogger } from '../../src/ops/logger.js';
import type { PairConfig } from '../../src/ports/venue-records.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { startSimServer } from '../../src/sim/sim-server.js';
import { openStore } from '../../src/store/store.js';
import { VirtualClock } from '../engine/harness.js';
import { usdtInstances } from '../support/pair-list-file.js';
import { whenDone } from '../support/scoped.js';
import { tempDir } from '../support/temp-dir.js';

/** A pair of an asset nobody knew at the start (its rules ETHUSDT's). */
function newPair(): PairConfig {
  const eth = new MatchingEngine().pairConfigs('ETHUSDT')[0]!;
  return { ...eth, symbol: 'NEWUSDT', baseAsset: 'NEW', baseAssetId: 777 };
}

async function paperOnLivePrices() {
  const clock = new VirtualClock();
  const exchange = await startSimServer({
    engine: new MatchingEngine({ clock, pairs: new MatchingEngine().pairConfigs('BTCUSDT') }),
  });
  whenDone(() => exchange.close());
  const dir = tempDir('paper-live-listing');
  const env = parseEnv({
    MODE: 'paper',
    EXCHANGE_BASE_URL: exchange.url,
    DB_PATH: join(dir, 'paper.db'),
    EXCHANGE_RATE_LIMIT: '100000',
  });
  const store = openStore({ path: env.DB_PATH, clock });
  whenDone(() => store.close());
  const instances = usdtInstances(['BTCUSDT']);
  const setup = await setUpVenue(planVenue(env), env, ['BTCUSDT'], silentLogger, store, undefined, clock, 0, (s) =>
    somePairListMayChoose(instances, s),
  );
  whenDone(() => setup.close());
  const engine = new Engine({ venue: setup.client, clock, store, logger: silentLogger, instances });
  whenDone(() => engine.stop());
  const prices = new Map([['BTCUSDT', 100]]);
  /** Moves the clock, prices the exchange's pairs, then one market job and one orders poll. */
  const cycle = async (ms: number) => {
    clock.advance(ms);
    for (const [s, p] of prices) exchange.engine.onTicker({ s, p, t: clock.now(), vq: 1_000_000 });
    await engine.marketCycle(engine.schedules()[0]!);
    await engine.pollOrders();
  };
  cycle.first = () => exchange.engine.onTicker({ s: 'BTCUSDT', p: 100, t: clock.now(), vq: 1_000_000 });
  return { exchange, setup, store, engine, prices, cycle };
}

describe('paper on live prices', () => {
  it('takes up a pair the exchange lists after the start at the next refresh, and trades it', async () => {
    const { exchange, setup, store, engine, prices, cycle } = await paperOnLivePrices();
    cycle.first();
    await engine.start();
    await cycle(1_000);
    expect(engine.instances().map((i) => i.name)).toEqual(['usdt/BTCUSDT']);

    // The exchange lists a pair of a new asset: the paper exchange learns its rules, and the list takes it up.
    exchange.engine.listPair(newPair());
    prices.set('NEWUSDT', 10);
    await cycle(60_000);
    expect(engine.instances().map((i) => `${i.name} ${i.status}`)).toEqual([
      'usdt/BTCUSDT running',
      'usdt/NEWUSDT running',
    ]);
    expect(setup.sim?.engine.pairConfigs('NEWUSDT')).toEqual([
      expect.objectContaining({ symbol: 'NEWUSDT', baseAsset: 'NEW', baseAssetId: 777, status: 'TRADING' }),
    ]);
    const newOrders = () => store.orders.all().filter((o) => o.symbol === 'NEWUSDT');
    expect(newOrders().map(({ side, price, status }) => ({ side, price, status }))).toEqual([
      { side: 'BUY', price: '5', status: 'OPEN' },
    ]);

    // Its price falls through the order: filled on paper, the new asset in the account.
    prices.set('NEWUSDT', 4.9);
    await cycle(5_000);
    expect(newOrders()[0]?.status).toBe('FILLED');
    expect(store.fills.forInstance('usdt/NEWUSDT').map((f) => [f.price, f.qty])).toEqual([['5', '0.01']]);
    const balances = await setup.client.balance();
    expect(balances['777']).toMatchObject({ value: 0.00999 });
  });
});
