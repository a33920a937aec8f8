import { afterEach, describe, expect, it, vi } from 'vitest';
import { ExchangeClient } from '../../src/exchange/client.js';
import { dec } from '../../src/market/decimal.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { lockstepFeed, proxyFeed, randomWalkFeed, replayFeed, type PriceFeed } from '../../src/sim/feeds.js';
import { MatchingEngine, type TickerInput } from '../../src/sim/matching-engine.js';
import { type SimServer, startSimServer } from '../../src/sim/sim-server.js';
import { type RawTicker, writeRecording } from './server-fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const T0 = Date.parse('2023-03-01T00:00:00.000Z');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The real engine, remembering every ticker it was fed. */
class RecordingEngine extends MatchingEngine {
  readonly fed: TickerInput[] = [];
  override onTicker(ticker: TickerInput, volume?: number): void {
    this.fed.push(ticker);
    super.onTicker(ticker, volume);
  }
}

const usdt = (dt: number, p: number): RawTicker => ({ s: 'BTCUSDT', p, t: T0 + dt, h: p + 1, lbl: 'x' });
const usdc = (dt: number, p: number): RawTicker => ({ s: 'BTCUSDC', p, t: T0 + dt });

/** Two symbols whose times interleave, with a tie at +3 s (the alphabetically first symbol goes first). */
function twoSymbols(): string[] {
  const dir = tempDir('sim-server');
  return [
    writeRecording(dir, 'BTCUSDT', [usdt(1000, 100), usdt(3000, 101), usdt(5000, 102)]),
    writeRecording(dir, 'BTCUSDC', [usdc(2000, 200), usdc(3000, 201), usdc(4000, 202)]),
  ];
}
const MERGED = [
  ['BTCUSDT', 1000],
  ['BTCUSDC', 2000],
  ['BTCUSDC', 3000],
  ['BTCUSDT', 3000],
  ['BTCUSDC', 4000],
  ['BTCUSDT', 5000],
].map(([s, dt]) => [s, T0 + (dt as number)]);

const order = (fed: readonly TickerInput[]) => fed.map((t) => [t.s, t.t]);

/**
 * Runs a feed on a fresh engine until it has fed `count` tickers, and stops it right there (a looping replay at
 * full speed would otherwise go round its recording for as long as the test takes to notice): `atCount` runs
 * as the last of them goes in, before anything else. Returns what was fed (`count` tickers or a few more).
 */
async function feedUntil(feed: PriceFeed, count: number, atCount?: () => void): Promise<TickerInput[]> {
  const engine = new (class extends RecordingEngine {
    override onTicker(ticker: TickerInput, volume?: number): void {
      super.onTicker(ticker, volume);
      if (this.fed.length === count) {
        atCount?.();
        void feed.stop();
      }
    }
  })();
  await feed.start(engine);
  await vi.waitFor(() => expect(engine.fed.length).toBeGreaterThanOrEqual(count));
  await feed.stop();
  return engine.fed;
}

async function serveWith(
  feed: PriceFeed,
  engine = new RecordingEngine(),
): Promise<{ server: SimServer; client: ExchangeClient; engine: RecordingEngine }> {
  const server = await startSimServer({ engine, feed });
  const client = new ExchangeClient({ baseUrl: server.url, rateLimit: false, retry: { maxAttempts: 1 } });
  cleanups.push(
    () => server.close(),
    () => client.close(),
  );
  return { server, client, engine };
}

describe('lockstep feed', () => {
  it('advances exactly one recorded ticker per market-watch request, in time order across symbols', async () => {
    const feed = lockstepFeed({ files: twoSymbols() });
    const { client, engine } = await serveWith(feed);
    expect(engine.tickers()).toEqual([]);
    const seen: [string, number][] = [];
    for (let i = 1; i <= MERGED.length; i++) {
      const tickers = await client.marketWatchEntries(i % 2 === 0 ? 'BTCUSDC' : undefined);
      expect(feed.progress.fed).toBe(i);
      expect(engine.fed).toHaveLength(i);
      const last = engine.fed[i - 1]!;
      seen.push([last.s, last.t]);
      if (i % 2 === 1) expect(tickers.find((t) => t.s === last.s)).toMatchObject({ p: last.p, t: last.t });
    }
    expect(seen).toEqual(MERGED);
    expect(feed.progress.done).toBe(false);
    expect(await client.marketWatchEntries('BTCUSDT')).toEqual([
      { s: 'BTCUSDT', p: 102, t: T0 + 5000, h: 103, lbl: 'x', b: 'BTC', q: 'USDT', bi: 1, qi: 2 },
    ]);
    expect(feed.progress).toMatchObject({ fed: 6, done: true, total: 6, time: T0 + 5000 });
    expect((await client.marketWatchEntries()).map((t) => [t.s, t.p]).sort()).toEqual([
      ['BTCUSDC', 202],
      ['BTCUSDT', 102],
    ]);
  });

  it('steps concurrent requests one ticker each', async () => {
    const feed = lockstepFeed({ files: twoSymbols() });
    const { client, engine } = await serveWith(feed);
    await Promise.all([client.marketWatchEntries(), client.marketWatchEntries(), client.marketWatchEntries()]);
    expect(order(engine.fed)).toEqual(MERGED.slice(0, 3));
  });

  it('refuses a recording of a pair the exchange does not list, saying how to give its rules, and a missing file', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(dir, 'DOGEUSDT', [{ s: 'DOGEUSDT', p: 0.1, t: T0 }]);
    await expect(startSimServer({ feed: lockstepFeed({ files: [file] }) })).rejects.toMatchObject({
      code: 'E_SIM_CONFIG',
      message: expect.stringMatching(
        new RegExp(`^no pair rules for DOGEUSDT in ${file}: re-import it with \`bot import-candles --symbol DOGEUSDT `),
      ) as string,
    });
    await expect(startSimServer({ feed: lockstepFeed({ files: [`${dir}/none.jsonl.gz`] }) })).rejects.toMatchObject({
      code: 'E_RECORDING',
      message: expect.stringContaining('none.jsonl.gz: cannot read the recording (ENOENT)') as string,
    });
  });
});

describe('replay feed', () => {
  it('feeds every ticker in time order across symbols at high speed, the first before the server starts', async () => {
    const feed = replayFeed({ files: twoSymbols(), speed: 1e9 });
    const { engine } = await serveWith(feed);
    expect(engine.fed.length).toBeGreaterThanOrEqual(1);
    await vi.waitFor(() => expect(feed.progress.done).toBe(true));
    expect(order(engine.fed)).toEqual(MERGED);
    expect(feed.progress).toMatchObject({ fed: 6, time: T0 + 5000 });
    await vi.waitFor(() => expect(feed.progress.total).toBe(6));
  });

  it('paces by the injected clock in the recording’s time: a ticker goes in once the clock reaches its time', async () => {
    const clock = new VirtualClock(T0);
    const feed = replayFeed({ files: twoSymbols(), clock });
    const engine = new RecordingEngine();
    await feed.start(engine);
    cleanups.push(() => feed.stop());
    expect(order(engine.fed)).toEqual(MERGED.slice(0, 1));
    await clock.advanceTo(T0 + 2000); // the BTCUSDC ticker at +2 s is due
    expect(engine.fed).toHaveLength(2);
    await clock.advanceTo(T0 + 2999); // +3 s not yet due (the two at +3 s go in together)
    expect(engine.fed).toHaveLength(2);
    await clock.advanceTo(T0 + 3000);
    expect(engine.fed).toHaveLength(4);
    await clock.advanceTo(T0 + 20_000);
    await vi.waitFor(() => expect(feed.progress.done).toBe(true));
    expect(order(engine.fed)).toEqual(MERGED);
  });

  it('loops with times shifted past the end, so they keep increasing', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(dir, 'BTCUSDT', [usdt(0, 100), usdt(1000, 101), usdt(2000, 102)]);
    const feed = replayFeed({ files: [file], speed: 1e9, loop: true });
    const engine = new RecordingEngine();
    await feed.start(engine);
    await vi.waitFor(() => expect(engine.fed.length).toBeGreaterThanOrEqual(7));
    await feed.stop();
    const times = engine.fed.slice(0, 7).map((t) => t.t - T0);
    expect(times).toEqual([0, 1000, 2000, 3000, 4000, 5000, 6000]);
    expect(engine.fed.slice(0, 7).map((t) => t.p)).toEqual([100, 101, 102, 100, 101, 102, 100]);
    expect(feed.progress.done).toBe(false);
  });

  it('resumes from a position: a looping replay stopped anywhere goes on with the same tickers and times', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(dir, 'BTCUSDT', [usdt(0, 100), usdt(1000, 101), usdt(2000, 102)]);
    // The uninterrupted run, as the reference.
    const reference = await feedUntil(replayFeed({ files: [file], speed: 1e9, loop: true }), 12);
    for (const stopAt of [1, 3, 4, 8]) {
      // A run stopped after `stopAt` tickers (the position read as the ledger would, at the last change)...
      const looping = replayFeed({ files: [file], speed: 1e9, loop: true });
      let position: ReturnType<NonNullable<PriceFeed['position']>>;
      const stopped = await feedUntil(looping, stopAt, () => (position = looping.position?.()));
      expect(position).toMatchObject({ files: [file] });
      // ...and the next run from its position: together, the reference's tickers.
      const resumed = await feedUntil(
        replayFeed({ files: [file], speed: 1e9, loop: true, resume: position }),
        12 - stopAt,
      );
      expect(order([...stopped.slice(0, stopAt), ...resumed].slice(0, 12))).toEqual(order(reference.slice(0, 12)));
    }
  });

  it('lockstep resumes from a position; a position past the end of the recordings starts over, warned', async () => {
    const files = twoSymbols();
    const first = lockstepFeed({ files });
    const { client } = await serveWith(first);
    for (let i = 0; i < 4; i++) await client.marketWatch();
    const position = first.position?.();
    expect(position).toMatchObject({ taken: 4, shift: 0 });
    const resumed = lockstepFeed({ files, resume: position });
    const next = await serveWith(resumed);
    await next.client.marketWatch();
    await next.client.marketWatch();
    expect(order(next.engine.fed)).toEqual(MERGED.slice(4, 6));

    const warnings: string[] = [];
    const beyond = lockstepFeed({ files, resume: { files, taken: 99, shift: 0 }, warn: (m) => warnings.push(m) });
    const third = await serveWith(beyond);
    await third.client.marketWatch();
    expect(order(third.engine.fed)).toEqual(MERGED.slice(0, 1));
    expect(warnings).toEqual([
      'the recordings hold fewer than the 99 tickers already replayed: replaying from the start',
    ]);
  });

  it('a new replay starts once the data have filled the warm-up, which it hands over; PAPER_FROM overrides it', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(
      dir,
      'BTCUSDT',
      Array.from({ length: 10 }, (_, i) => usdt(i * 1000, 100 + i)),
    );
    const warmedUp = replayFeed({ files: [file], speed: 1e9, from: 'warmed-up', warmUpMs: 4000 });
    const engine = new RecordingEngine();
    await warmedUp.start(engine);
    cleanups.push(() => warmedUp.stop());
    // The first ticker fed is 4 s after the recording's first; those before it are the warm-up, not traded on.
    expect(engine.fed[0]).toMatchObject({ t: T0 + 4000, p: 104 });
    expect(warmedUp.progress.from).toBe(T0 + 4000);
    expect(warmedUp.warmUpTickers?.().map((t) => t.p)).toEqual([100, 101, 102, 103]);

    // PAPER_FROM (a time) wins; a resumed replay goes on where it stopped whatever `from` says.
    const pinned = replayFeed({ files: [file], speed: 1e9, from: T0 + 1000, warmUpMs: 4000 });
    const second = new RecordingEngine();
    await pinned.start(second);
    cleanups.push(() => pinned.stop());
    expect(second.fed[0]).toMatchObject({ t: T0 + 1000 });
    expect(pinned.warmUpTickers?.().map((t) => t.p)).toEqual([100]);
    const resume = { files: [file], taken: 2, shift: 0, first: T0, last: T0 + 1000, step: 1000 };
    const resumed = replayFeed({ files: [file], speed: 1e9, from: 'warmed-up', warmUpMs: 4000, resume });
    const third = new RecordingEngine();
    await resumed.start(third);
    cleanups.push(() => resumed.stop());
    expect(third.fed[0]).toMatchObject({ t: T0 + 2000 });

    // A position the recordings no longer hold starts a new replay, warned once: once the warm-up is filled.
    const warnings: string[] = [];
    const beyond = replayFeed({
      files: [file],
      speed: 1e9,
      from: 'warmed-up',
      warmUpMs: 4000,
      resume: { ...resume, taken: 99 },
      warn: (m) => warnings.push(m),
    });
    const fourth = new RecordingEngine();
    await beyond.start(fourth);
    cleanups.push(() => beyond.stop());
    expect(fourth.fed[0]).toMatchObject({ t: T0 + 4000, p: 104 });
    expect(beyond.warmUpTickers?.().map((t) => t.p)).toEqual([100, 101, 102, 103]);
    expect(warnings).toEqual([
      'the recordings hold fewer than the 99 tickers already replayed: replaying from the start',
    ]);
  });

  it('a new replay after a resumed account’s records is shifted by whole days past them, its warm-up too; it resumes and loops from there', async () => {
    const DAY = 86_400_000;
    const dir = tempDir('sim-server');
    const file = writeRecording(
      dir,
      'BTCUSDT',
      Array.from({ length: 6 }, (_, i) => usdt(i * 1000, 100 + i)),
    );
    const warnings: string[] = [];
    const after = T0 + DAY + 2500;
    const shifted = replayFeed({
      files: [file],
      speed: 1e9,
      loop: true,
      from: 'warmed-up',
      warmUpMs: 2000,
      after: () => after,
      warn: (m) => warnings.push(m),
    });
    let position: ReturnType<NonNullable<PriceFeed['position']>>;
    const fed = await feedUntil(shifted, 3, () => (position = shifted.position?.()));
    // Two days: the first whole number of days that puts the first ticker after `after`.
    expect(fed.slice(0, 3).map((t) => t.t - T0)).toEqual([2 * DAY + 2000, 2 * DAY + 3000, 2 * DAY + 4000]);
    expect(shifted.warmUpTickers?.().map((t) => t.t - T0)).toEqual([2 * DAY, 2 * DAY + 1000]);
    expect(warnings).toEqual([
      `the replay's times are shifted 2 day(s) forward, to go on after the paper account's last record (${new Date(after).toISOString()}): its time never goes back`,
    ]);
    expect(position).toMatchObject({ taken: 5, shift: 2 * DAY, base: 2 * DAY });

    // Resumed from its position, `after` changes nothing, and the next pass follows on from the shifted one.
    const resumed = await feedUntil(
      replayFeed({ files: [file], speed: 1e9, loop: true, resume: position, after: () => T0 + 9 * DAY }),
      4,
    );
    expect(resumed.slice(0, 4).map((t) => t.t - T0)).toEqual([
      2 * DAY + 5000,
      2 * DAY + 6000,
      2 * DAY + 7000,
      2 * DAY + 8000,
    ]);

    // Data that start after `after` are not shifted.
    const later = await feedUntil(replayFeed({ files: [file], speed: 1e9, after: () => T0 - 1 }), 1);
    expect(later[0]?.t).toBe(T0);
  });

  it('recordings no longer than the warm-up start at their first ticker, warned; PAPER_FROM past them is refused', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(dir, 'BTCUSDT', [usdt(0, 100), usdt(1000, 101), usdt(2000, 102)]);
    const warnings: string[] = [];
    const short = replayFeed({
      files: [file],
      speed: 1e9,
      loop: true,
      from: 'warmed-up',
      warmUpMs: 3_600_000,
      warn: (m) => warnings.push(m),
    });
    const engine = new RecordingEngine();
    await short.start(engine);
    cleanups.push(() => short.stop());
    expect(engine.fed[0]).toMatchObject({ t: T0, p: 100 });
    expect(short.warmUpTickers?.()).toEqual([]);
    expect(warnings).toEqual([
      "the recordings hold no more than the strategies' warm-up (1 h of data before the first decision): the replay starts at their first ticker, and the lookbacks fill as it plays",
    ]);
    // A looping replay does not wrap around to find a PAPER_FROM its recordings do not reach.
    const late = replayFeed({ files: [file], speed: 1e9, loop: true, from: T0 + 60_000 });
    await expect(late.start(new RecordingEngine())).rejects.toThrow(
      'PAPER_FROM: nothing recorded at or after 2023-03-01T00:01:00.000Z in the recordings',
    );
    await late.stop();
  });

  it('skips a ticker the engine refuses, with a warning, and goes on', async () => {
    const dir = tempDir('sim-server');
    const file = writeRecording(dir, 'BTCUSDT', [usdt(0, 100), usdt(1000, -5), usdt(2000, 102)]);
    const warnings: string[] = [];
    const feed = replayFeed({ files: [file], speed: 1e9, warn: (m) => warnings.push(m) });
    const engine = new RecordingEngine();
    await feed.start(engine);
    await vi.waitFor(() => expect(feed.progress.done).toBe(true));
    expect(feed.progress.fed).toBe(2);
    expect(engine.lastPrice('BTCUSDT')).toBe(102);
    expect(warnings).toEqual([expect.stringContaining(`skipped a ticker of BTCUSDT at ${T0 + 1000}`)]);
  });
});

describe('random walk feed', () => {
  function walk(seed: number): number[] {
    const feed = randomWalkFeed({
      symbols: ['BTCUSDT', 'ETHUSDT'],
      seed,
      start: { BTCUSDT: '60000' },
      intervalMs: 1e9,
      volatilityBps: 50,
    });
    const engine = new MatchingEngine();
    void feed.start(engine);
    const prices: number[] = [engine.lastPrice('BTCUSDT')!, engine.lastPrice('ETHUSDT')!];
    for (let i = 0; i < 300; i++) {
      feed.step();
      prices.push(engine.lastPrice('BTCUSDT')!, engine.lastPrice('ETHUSDT')!);
    }
    void feed.stop();
    expect(feed.progress.fed).toBe(602);
    return prices;
  }

  it('is deterministic for a seed, on the tick grid and positive', () => {
    const a = walk(42);
    expect(walk(42)).toEqual(a);
    expect(walk(43)).not.toEqual(a);
    expect(a.slice(0, 2)).toEqual([60000, 1000]);
    expect(new Set(a).size).toBeGreaterThan(100);
    for (const p of a) {
      expect(p).toBeGreaterThan(0);
      expect(dec(p).mod('0.01').isZero()).toBe(true);
    }
  });

  it('steps on its timer and stops', async () => {
    const feed = randomWalkFeed({ symbols: ['BTCUSDT'], seed: 1, intervalMs: 1 });
    const engine = new MatchingEngine();
    await feed.start(engine);
    await vi.waitFor(() => expect(feed.progress.fed).toBeGreaterThan(3));
    await feed.stop();
    const fed = feed.progress.fed;
    await new Promise<void>((r) => setTimeout(r, 10));
    expect(feed.progress.fed).toBe(fed);
  });

  it('refuses a symbol the exchange does not list', () => {
    const feed = randomWalkFeed({ symbols: ['NOPE'], seed: 1 });
    expect(() => feed.start(new MatchingEngine())).toThrow(/does not list NOPE/);
  });
});

/** A wire ticker's optional figures, none given. */
const NO_FIGURES = { h: undefined, l: undefined, vb: undefined, vq: undefined, bi: undefined, qi: undefined };

describe('proxy feed', () => {
  it('lists a pair the upstream lists later once its rules read TRADING, asking again only after retryMs', async () => {
    const clock = { t: 0 };
    const warnings: string[] = [];
    const engine = new MatchingEngine({ pairs: new MatchingEngine().pairConfigs('BTCUSDT') });
    const eth = new MatchingEngine().pairConfigs('ETHUSDT')[0]!;
    const rules = { down: true, status: 'BREAK', reads: 0 };
    const feed = proxyFeed({
      upstream: {
        marketWatchEntries: () =>
          Promise.resolve(
            (['BTCUSDT', 'ETHUSDT', 'ETHBTC'] as const).map((s, i) => ({
              s,
              p: 100 / (i + 1),
              t: clock.t,
              ...NO_FIGURES,
            })),
          ),
      },
      clock: { now: () => clock.t },
      warn: (m) => warnings.push(m),
      newPairs: {
        wanted: (s) => s.endsWith('USDT'),
        rules: () => {
          rules.reads++;
          return rules.down
            ? Promise.reject(new Error('upstream down'))
            : Promise.resolve([{ ...eth, status: rules.status }]);
        },
      },
    });
    const fetchAfter = async (ms: number) => {
      clock.t += ms;
      await feed.beforeMarketWatch?.();
    };
    await feed.start(engine);
    expect([rules.reads, engine.lists('ETHUSDT')]).toEqual([1, false]);
    expect(warnings).toEqual([
      'proxy feed: ETHUSDT listed upstream since the start: its rules could not be read, asked again in 60 s (E_UNEXPECTED: upstream down)',
    ]);
    await fetchAfter(1_000);
    expect(rules.reads).toBe(1);
    rules.down = false;
    await fetchAfter(59_000);
    expect([rules.reads, engine.lists('ETHUSDT')]).toEqual([2, false]);
    rules.status = 'TRADING';
    await fetchAfter(60_000);
    expect([rules.reads, engine.lists('ETHUSDT')]).toEqual([3, true]);
    expect(engine.tickers('ETHUSDT')[0]).toMatchObject({ p: 50, t: clock.t });
    // ETHBTC no list wants: never asked about.
    await fetchAfter(60_000);
    expect([rules.reads, engine.lists('ETHBTC')]).toEqual([3, false]);
  });

  it('serves the upstream market watch, refetched at most every minIntervalMs, the last tickers when it fails', async () => {
    const upstream = await startSimServer();
    upstream.engine.onTicker({ s: 'BTCUSDT', p: 63000.5, t: T0, vq: 12 });
    upstream.engine.onPrice('ETHUSDT', 3000, T0);
    const upstreamClient = new ExchangeClient({ baseUrl: upstream.url, rateLimit: false, retry: { maxAttempts: 1 } });
    cleanups.push(
      () => upstream.close(),
      () => upstreamClient.close(),
    );
    const clock = { t: 0 };
    const warnings: string[] = [];
    const engine = new RecordingEngine({ pairs: new MatchingEngine().pairConfigs('BTCUSDT') });
    const feed = proxyFeed({
      upstream: upstreamClient,
      minIntervalMs: 1000,
      clock: { now: () => clock.t },
      warn: (m) => warnings.push(m),
    });
    const { client } = await serveWith(feed, engine);

    expect(await client.marketWatchEntries()).toEqual([
      { s: 'BTCUSDT', p: 63000.5, t: T0, vq: 12, b: 'BTC', q: 'USDT', bi: 1, qi: 2 },
    ]);
    upstream.engine.onPrice('BTCUSDT', 63100, T0 + 1000);
    expect((await client.marketWatchEntries())[0]?.p).toBe(63000.5);
    clock.t += 1000;
    expect((await client.marketWatchEntries())[0]).toMatchObject({ p: 63100, t: T0 + 1000 });
    expect(feed.progress.fed).toBe(2);

    await upstream.close();
    clock.t += 1000;
    expect((await client.marketWatchEntries())[0]?.p).toBe(63100);
    expect(warnings).toEqual([
      expect.stringMatching(/^proxy feed: upstream market watch failed, serving the last tickers \(E_NETWORK/),
    ]);
  });
});
