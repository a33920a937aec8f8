/**
 * One contract suite, many price feeds (as the venues' and the transports'): the cases every PriceFeed of
 * src/sim/feeds.ts must pass, registered with vitest by `runFeedContract`. test/sim/feeds.test.ts runs them on the
 * replay, lockstep, random-walk and proxy feeds.
 *
 * What a harness must provide: a feed of `symbol` (BTCUSDT unless the case asks for another) that serves `prices`
 * in order, one second apart, where it serves data at all (a random walk makes its own); `advance` moves it on by
 * one of its steps (the replay's clock to its next ticker, a market-watch request, a walk's step); the warnings it
 * gave. The feed runs on the real matching engine with the default market.
 */
import { describe, expect, it } from 'vitest';
import { BotError } from '../../src/errors.js';
import type { PriceFeed } from '../../src/sim/feeds.js';
import { MatchingEngine, type TickerInput } from '../../src/sim/matching-engine.js';

export interface FeedHarness {
  feed: PriceFeed;
  advance(): Promise<void>;
  warnings: readonly string[];
}

export interface FeedContractOptions {
  /** The feed serves the prices it is given (recordings, an upstream), not prices of its own. */
  servesData: boolean;
}

export type MakeFeed = (prices: number[], symbol?: string) => Promise<FeedHarness> | FeedHarness;

/** The real engine, keeping every ticker it took. */
export class TakenTickers extends MatchingEngine {
  readonly taken: TickerInput[] = [];
  override onTicker(ticker: TickerInput, volume?: number): void {
    super.onTicker(ticker, volume);
    this.taken.push(ticker);
  }
}

async function run(make: MakeFeed, prices: number[], steps: number, symbol?: string) {
  const h = await make(prices, symbol);
  const engine = new TakenTickers();
  await h.feed.start(engine);
  for (let i = 0; i < steps; i++) await h.advance();
  return { h, engine };
}

export function runFeedContract(name: string, make: MakeFeed, options: FeedContractOptions): void {
  describe(`PriceFeed contract: ${name}`, () => {
    it('has fed nothing before it starts', async () => {
      const h = await make([100, 101, 102]);
      expect(h.feed.progress).toMatchObject({ fed: 0, done: false });
      await h.feed.stop();
    });

    it('gives the engine its tickers in time order; its progress counts them and holds the last time', async () => {
      const { h, engine } = await run(make, [100, 101, 102, 103], 3);
      const { taken } = engine;
      expect(taken.length).toBeGreaterThan(0);
      const times = taken.map((t) => t.t);
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(h.feed.progress.fed).toBe(taken.length);
      expect(h.feed.progress.time).toBe(times.at(-1));
      const last = taken.filter((t) => t.s === 'BTCUSDT').at(-1)!;
      expect(engine.lastPrice('BTCUSDT')?.toString()).toBe(String(last.p));
      if (options.servesData) expect(taken.map((t) => t.p)).toEqual([100, 101, 102, 103].slice(0, taken.length));
      expect(h.warnings).toEqual([]);
      await h.feed.stop();
    });

    it('feeds nothing once stopped, and a second stop is harmless', async () => {
      const { h, engine } = await run(make, [100, 101, 102, 103, 104, 105], 1);
      await h.feed.stop();
      const fed = engine.taken.length;
      for (let i = 0; i < 3; i++) await h.advance();
      expect(engine.taken).toHaveLength(fed);
      expect(h.feed.progress.fed).toBe(fed);
      await h.feed.stop();
    });

    it('never feeds a pair the exchange does not list: refused at start, naming it, or left out', async () => {
      const h = await make([0.1, 0.2], 'DOGEUSDT');
      const engine = new TakenTickers();
      const started = await Promise.resolve()
        .then(() => h.feed.start(engine))
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      if (started !== undefined) {
        expect(started).toBeInstanceOf(BotError);
        expect((started as Error).message).toContain('DOGEUSDT');
      } else for (let i = 0; i < 2; i++) await h.advance();
      expect(engine.taken.filter((t) => t.s === 'DOGEUSDT')).toEqual([]);
      await h.feed.stop();
    });

    it.runIf(options.servesData)(
      'skips a ticker the engine refuses with a warning naming it, and goes on with the next',
      async () => {
        const { h, engine } = await run(make, [100, -5, 102], 3);
        expect(engine.taken.map((t) => t.p)).toEqual([100, 102]);
        expect(h.feed.progress.fed).toBe(2);
        expect(h.warnings).toEqual([expect.stringMatching(/^skipped a ticker of BTCUSDT at \d+: /)]);
        expect(engine.lastPrice('BTCUSDT')?.toString()).toBe('102');
        await h.feed.stop();
      },
    );
  });
}
