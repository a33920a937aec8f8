/**
 * Builds the venue a plan asks for. Live: the signed client on the exchange. Paper: the simulated exchange's
 * HTTP server in this process (on 127.0.0.1, a free port, the demo account), fed by a recording or by the live
 * public market watch, and the SAME signed client talking to it, so paper exercises everything live does.
 * In paper on live data the upstream client has no keys at all: a private call cannot reach the exchange.
 *
 * The paper exchange keeps its state in the bot's database (paper-ledger.ts): a restart restores the same
 * account, orders and fills, resumes a recorded replay where it stopped, and on live prices first matches the
 * open orders against the prices the daemon recorded after the exchange's own last price (catchUp below);
 * the first live price then fills or triggers whatever it crosses. Prices of the time the daemon was down
 * were seen by nobody: an order only they would have filled stays open.
 */
import { clientOptionsFromEnv } from '../exchange/client-options.js';
import type { Env } from './env.js';
import { ExchangeClient, type RequestObserver } from '../exchange/client.js';
import type { Logger } from '../ops/logger.js';
import { wallClock } from '../clocks/wall-clock.js';
import { marketFrom, replayMarket } from '../sim/pair-market.js';
import { recordedStepMs } from '../sim/data-step.js';
import {
  lockstepFeed,
  type PriceFeed,
  proxyFeed,
  replayFeed,
  type ReplayPosition,
  type ReplayTime,
  type WarmUpTick,
} from '../sim/feeds.js';
import { MatchingEngine } from '../sim/matching-engine.js';
import { DEMO_CREDENTIALS, DEFAULT_PAPER_BALANCES, type SimServer, startSimServer } from '../sim/sim-server.js';
import type { Store } from '../store/store.js';
import { checkPaperData, paperDataFiles, replayDescription } from './paper-data.js';
import { CHECKPOINT_INTERVAL_MS, openPaperExchange, type PaperExchangeOpened } from './paper-ledger.js';
import type { VenuePlan } from './venue-plan.js';

export interface VenueSetup {
  client: ExchangeClient;
  /** The embedded simulated exchange (paper only). */
  sim: SimServer | undefined;
  /** Recordings replayed (paper on recorded data only). */
  files: string[] | undefined;
  /** What they hold, for the start line: their time range and pairs (paper-data.ts replayDescription). */
  replaying: string | undefined;
  /**
   * Paper on recordings: the recorded tickers before the replay's start position (PAPER_FROM, or where a resumed
   * run stopped), within the warm-up asked for: the strategies' candles warm up on them. Empty otherwise.
   */
  warmUpTickers(): readonly WarmUpTick[];
  /** Closes the client (requests in flight finish) and the embedded exchange. */
  close(): Promise<void>;
}

/**
 * Feeds the engine the prices the daemon recorded (store/last-prices.ts) that are newer than the exchange's own
 * last price of the pair: the few seconds between the exchange's last checkpoint and a crash. Returns how many.
 */
function catchUp(engine: MatchingEngine, store: Store): number {
  const known = new Map(engine.marketState().map((m) => [m.symbol, m.time]));
  let fed = 0;
  for (const p of store.prices.all()) {
    const since = known.get(p.symbol);
    if (engine.pairConfigs(p.symbol).length === 0 || (since !== undefined && p.time <= since)) continue;
    engine.onPrice(p.symbol, Number(p.price), p.time);
    fed++;
  }
  return fed;
}

/** Where a replay started and how much of the data before it the strategies' candles warm up on, in one line. */
function logReplayStart(feed: PriceFeed, logger: Logger): void {
  const from = feed.progress.from;
  if (from === undefined) return;
  const warmUp = feed.warmUpTickers?.() ?? [];
  const since = warmUp[0]?.t;
  const iso = (ms: number) => new Date(ms).toISOString();
  logger.info(
    { component: 'sim', replayFrom: iso(from), warmUpFrom: since === undefined ? undefined : iso(since) },
    since === undefined
      ? `the replay starts at ${iso(from)} (the recording's time)`
      : `the replay starts at ${iso(from)} (the recording's time); the strategies' candles warmed up on the data from ${iso(since)}`,
  );
}

/** The later of two times, either of which may be missing. */
const latestOf = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.max(a, b);

/** Opens (restores or funds) the paper account and says so. */
function openPaper(
  engine: MatchingEngine,
  store: Store,
  env: Env,
  data: 'recording' | 'live',
  logger: Logger,
): PaperExchangeOpened {
  const opened = openPaperExchange(store, engine, {
    data,
    apiKey: DEMO_CREDENTIALS.apiKey,
    funding: env.PAPER_BALANCES ?? DEFAULT_PAPER_BALANCES,
    clock: wallClock,
    dbPath: env.DB_PATH,
  });
  const funding = Object.entries(opened.funding)
    .map(([asset, amount]) => `${amount} ${asset}`)
    .join(', ');
  if (!opened.resumed) logger.info({ component: 'sim' }, `new paper account in ${env.DB_PATH}, funded with ${funding}`);
  else {
    const apiKey = DEMO_CREDENTIALS.apiKey;
    logger.info(
      { component: 'sim', openOrders: engine.openOrders(apiKey).length, fills: engine.lastFillId },
      `paper account resumed from ${env.DB_PATH} (funded with ${funding}; PAPER_FRESH=true starts a new one)`,
    );
    if (env.PAPER_BALANCES !== undefined && JSON.stringify(env.PAPER_BALANCES) !== JSON.stringify(opened.funding))
      logger.warn(
        { component: 'sim' },
        'PAPER_BALANCES funds a new paper account only; the resumed one keeps its balances (PAPER_FRESH=true to start over)',
      );
  }
  return opened;
}

/**
 * Starts what `plan` needs. `symbols` are the configured instances' symbols (the recordings replayed, the
 * upstream pairs copied); `store` holds the paper exchange's ledger. Fails when the upstream cannot be read;
 * the caller retries.
 */
export async function setUpVenue(
  plan: VenuePlan,
  env: Env,
  symbols: readonly string[],
  logger: Logger,
  store: Store,
  /** Sees the trading client's requests (the daemon's metrics). */
  observer?: RequestObserver,
  /** The venue's time: on paper on recordings the replay clock the feed anchors and paces (default: wall; tests: virtual). */
  clock: ReplayTime = wallClock,
  /** How much recorded data before the replay's start the strategies' candles need (backtest/job.ts warmUpMs). */
  warmUpMs = 0,
  /**
   * Paper on live prices: whether a pair the exchange lists after the start is taken up by the simulated exchange
   * (a pair list may choose it); default none.
   */
  listedLater: (symbol: string) => boolean = () => false,
): Promise<VenueSetup> {
  if (plan.mode === 'live') {
    const client = new ExchangeClient({
      ...clientOptionsFromEnv(env),
      logger: logger.child({ venue: 'live' }),
      observer,
    });
    return {
      client,
      sim: undefined,
      files: undefined,
      replaying: undefined,
      warmUpTickers: () => [],
      close: () => client.close(),
    };
  }
  const warn = (message: string) => logger.warn({ component: 'sim' }, message);
  let feed: PriceFeed;
  let engine: MatchingEngine;
  let paper: PaperExchangeOpened;
  let files: string[] | undefined;
  let replaying: string | undefined;
  let upstream: ExchangeClient | undefined;
  if (plan.data === 'live') {
    const { EXCHANGE_API_KEY: _key, EXCHANGE_API_SECRET: _secret, ...publicEnv } = env;
    upstream = new ExchangeClient({ ...clientOptionsFromEnv(publicEnv), logger: logger.child({ venue: 'upstream' }) });
    try {
      // The pairs the paper account has orders on too, so its history still reads after a config change.
      const wanted = new Set([...symbols, ...store.paper.symbols()]);
      const pairs = (await upstream.pairConfig()).filter((p) => wanted.has(p.symbol));
      engine = new MatchingEngine({ ...marketFrom(pairs), clock });
      paper = openPaper(engine, store, env, 'live', logger);
    } catch (err) {
      await upstream.close();
      throw err;
    }
    if (paper.resumed) {
      const fills = engine.lastFillId;
      const fed = catchUp(engine, store);
      const filled = engine.lastFillId - fills;
      if (fed > 0)
        logger.info(
          { component: 'sim', prices: fed, fills: filled },
          'paper orders matched against the prices recorded since',
        );
    }
    // A pair a pair list may choose that the exchange lists later is traded here too, its rules read from it.
    const from = upstream;
    feed = proxyFeed({ upstream, clock, warn, newPairs: { wanted: listedLater, rules: () => from.pairConfig() } });
  } else {
    files = await paperDataFiles(env.PAPER_DATA, symbols);
    // Every file read once before anything starts: one that breaks off stops the start, naming where.
    // The recordings' pairs (their rules as recorded), the built-in ones where a recording carries none.
    const { spans, pairs: recorded } = await checkPaperData(files, env.PAPER_ALLOW_PARTIAL, warn);
    const market = replayMarket(symbols, recorded, `PAPER_DATA (${files.join(', ')})`);
    replaying = replayDescription(spans, market.pairs, new Set(recorded.keys()));
    // Records carry the venue's time like the bot's own (today's fills, daily limits): the recording's time on
    // the replay clock, the wall clock's in lockstep. Orders reach the book a data step after the price they
    // were decided on, as in a backtest (parity).
    const latencyMs = env.PAPER_LATENCY_MS ?? (await recordedStepMs(files[0] as string));
    // In lockstep the clock is the wall's while the data move a ticker per request: latency counts in the data.
    // Candle recordings carry the volume traded on each tick: resting fills take at most PAPER_PARTICIPATION of it.
    engine = new MatchingEngine({
      ...market,
      clock,
      latencyMs,
      clockIsDataTime: !plan.lockstep,
      participationRate: env.PAPER_PARTICIPATION ?? undefined,
      marketImpact: env.PAPER_PARTICIPATION !== null && env.PAPER_PARTICIPATION !== undefined,
    });
    paper = openPaper(engine, store, env, 'recording', logger);
    let resume: ReplayPosition | undefined;
    if (typeof paper.replay !== 'string') {
      if (paper.replay.files.join('\n') === files.join('\n')) resume = paper.replay;
      else
        warn(`PAPER_DATA is not what the paper account replayed before: the replay starts over (the account is kept)`);
    } else if (paper.resumed) warn(`${paper.replay}: the replay starts over (the account is kept)`);
    if (resume)
      logger.info({ component: 'sim', tickers: resume.taken }, 'the replay resumes where the previous run stopped');
    if (resume && env.PAPER_FROM !== undefined)
      warn('PAPER_FROM starts a new replay: this paper account resumes its own where it stopped');
    feed = plan.lockstep
      ? lockstepFeed({ files, warn, resume, candlePath: env.PAPER_CANDLE_PATH })
      : // A new replay starts where PAPER_FROM says, else once the data have filled every lookback.
        replayFeed({
          files,
          clock,
          loop: true,
          warn,
          resume,
          // A replay that starts over on a resumed account goes on after everything it recorded.
          after: paper.resumed ? () => latestOf(paper.latest, store.orders.latestTime()) : undefined,
          from: env.PAPER_FROM ?? 'warmed-up',
          warmUpMs,
          candlePath: env.PAPER_CANDLE_PATH,
        });
    const position = feed.position?.bind(feed);
    if (position) paper.ledger.trackReplay(position);
  }
  const checkpoints = setInterval(() => {
    try {
      paper.ledger.checkpoint();
    } catch (err) {
      logger.error({ component: 'sim', err }, 'could not write the paper exchange checkpoint');
    }
  }, CHECKPOINT_INTERVAL_MS);
  checkpoints.unref();
  let sim: SimServer;
  try {
    sim = await startSimServer({
      engine,
      feed,
      credentials: DEMO_CREDENTIALS,
      balances: env.PAPER_BALANCES ?? DEFAULT_PAPER_BALANCES,
      logger: logger.child({ component: 'sim' }),
    });
  } catch (err) {
    clearInterval(checkpoints);
    await upstream?.close();
    throw err;
  }
  logReplayStart(feed, logger);
  const client = new ExchangeClient({
    ...clientOptionsFromEnv({
      ...env,
      // The exchange's budget of requests a second is a second of its time: on a recording, the recording's
      // (PAPER_SPEED of them a wall second), so a replay that waits for its jobs is not held to the wall's budget.
      EXCHANGE_RATE_LIMIT: env.EXCHANGE_RATE_LIMIT * (clock.pace ?? 1),
      EXCHANGE_BASE_URL: sim.url,
      EXCHANGE_API_KEY: sim.credentials.apiKey,
      EXCHANGE_API_SECRET: sim.credentials.apiSecret,
    }),
    logger: logger.child({ venue: 'paper' }),
    observer,
  });
  return {
    client,
    sim,
    files,
    replaying,
    warmUpTickers: () => feed.warmUpTickers?.() ?? [],
    async close() {
      clearInterval(checkpoints);
      await client.close();
      await sim.close();
      // The feed has stopped: where the replay stands now is where the next run goes on.
      paper.ledger.checkpoint();
      await upstream?.close();
    },
  };
}
