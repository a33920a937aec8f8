/** The four price feeds (src/sim/feeds.ts) pass one contract (feed-contract.ts). */
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { lockstepFeed, proxyFeed, randomWalkFeed, replayFeed } from '../../src/sim/feeds.js';
import type { WireTicker } from '../../src/wire/schemas.js';
import { tempDir } from '../support/temp-dir.js';
import { type FeedHarness, runFeedContract } from './feed-contract.js';
import { type RawTicker, writeRecording } from './server-fixtures.js';

const T0 = Date.parse('2023-03-01T00:00:00.000Z');

/** The prices as tickers of `symbol`, one second apart from T0 + 1 s. */
const tickers = (prices: number[], symbol = 'BTCUSDT'): RawTicker[] =>
  prices.map((p, i) => ({ s: symbol, p, t: T0 + (i + 1) * 1000 }));

const recording = (prices: number[], symbol = 'BTCUSDT') =>
  writeRecording(tempDir('feed-contract'), symbol, tickers(prices, symbol));

runFeedContract(
  'replay (a virtual clock)',
  (prices, symbol): FeedHarness => {
    const warnings: string[] = [];
    const clock = new VirtualClock(T0);
    const feed = replayFeed({ files: [recording(prices, symbol)], clock, warn: (m) => warnings.push(m) });
    return { feed, warnings, advance: () => clock.advanceBy(1000) };
  },
  { servesData: true },
);

runFeedContract(
  'lockstep (a market-watch request a step)',
  (prices, symbol): FeedHarness => {
    const warnings: string[] = [];
    const feed = lockstepFeed({ files: [recording(prices, symbol)], warn: (m) => warnings.push(m) });
    return { feed, warnings, advance: async () => void (await feed.beforeMarketWatch?.()) };
  },
  { servesData: true },
);

runFeedContract(
  'random walk (a step at a time)',
  (_prices, symbol): FeedHarness => {
    const feed = randomWalkFeed({ symbols: [symbol ?? 'BTCUSDT'], seed: 7, intervalMs: 1e9 });
    return {
      feed,
      warnings: [],
      advance: () => {
        // A walk moves only once started (the contract also advances a feed it never started, or stopped).
        if (feed.progress.fed > 0) feed.step();
        return Promise.resolve();
      },
    };
  },
  { servesData: false },
);

runFeedContract(
  'proxy (an upstream market watch, a fetch a step)',
  (prices, symbol): FeedHarness => {
    const warnings: string[] = [];
    const absent = { h: undefined, l: undefined, vb: undefined, vq: undefined, bi: undefined, qi: undefined };
    const served: WireTicker[] = tickers(prices, symbol).map((t) => ({ ...t, ...absent }));
    let next = 0;
    const clock = { t: T0 };
    const feed = proxyFeed({
      upstream: { marketWatchEntries: () => Promise.resolve(next < served.length ? [served[next++]!] : []) },
      minIntervalMs: 1000,
      clock: { now: () => clock.t },
      warn: (m) => warnings.push(m),
    });
    return {
      feed,
      warnings,
      advance: async () => {
        clock.t += 1000;
        await feed.beforeMarketWatch?.();
      },
    };
  },
  { servesData: true },
);
