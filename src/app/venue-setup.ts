/**
 * Builds the venue a plan asks for. Live: the signed client on the exchange. Paper: the simulated exchange's
 * HTTP server in this process (on 127.0.0.1, a free port, the demo account), fed by a recording or by the live
 * public market watch, and the SAME signed client talking to it, so paper exercises everything live does.
 * In paper on live data the upstream client has no keys at all: a private call cannot reach the exchange.
 */
import { clientOptionsFromEnv, type Env } from '../config/env.js';
import { ExchangeClient } from '../exchange/client.js';
import type { PairConfig } from '../ports/venue-records.js';
import type { Logger } from '../ops/logger.js';
import { systemClock } from '../ports/clock.js';
import { DEFAULT_ASSETS, DEFAULT_PAIRS, type SimAsset } from '../sim/default-market.js';
import { lockstepFeed, type PriceFeed, proxyFeed, replayFeed } from '../sim/feeds.js';
import { MatchingEngine } from '../sim/matching-engine.js';
import { DEMO_CREDENTIALS, DEFAULT_PAPER_BALANCES, type SimServer, startSimServer } from '../sim/server.js';
import { paperDataFiles } from './paper-data.js';
import type { VenuePlan } from './venue-plan.js';

export interface VenueSetup {
  client: ExchangeClient;
  /** The embedded simulated exchange (paper only). */
  sim: SimServer | undefined;
  /** Recordings replayed (paper on recorded data only). */
  files: string[] | undefined;
  /** Closes the client (requests in flight finish) and the embedded exchange. */
  close(): Promise<void>;
}

/** The upstream's pairs for `symbols`, with assets by the ids the upstream gives (the defaults fill any gap). */
function marketFrom(pairs: readonly PairConfig[]): { assets: SimAsset[]; pairs: PairConfig[] } {
  const byCode = new Map<string, SimAsset>();
  const usedIds = new Set<number>();
  const add = (code: string, id: number | null | undefined) => {
    if (byCode.has(code) || id === undefined || id === null || usedIds.has(id)) return;
    byCode.set(code, { id, code });
    usedIds.add(id);
  };
  for (const p of pairs) {
    add(p.baseAsset, p.baseAssetId);
    add(p.quoteAsset, p.quoteAssetId);
  }
  // Assets without an id from the upstream, and the paper account's default currencies, get free ids.
  let next = Math.max(0, ...usedIds) + 1;
  for (const code of [...pairs.flatMap((p) => [p.baseAsset, p.quoteAsset]), ...DEFAULT_ASSETS.map((a) => a.code)]) {
    if (!byCode.has(code)) add(code, next++);
  }
  const assets = [...byCode.values()];
  const ids = new Map(assets.map((a) => [a.code, a.id]));
  return {
    assets,
    pairs: pairs.map((p) => ({ ...p, baseAssetId: ids.get(p.baseAsset), quoteAssetId: ids.get(p.quoteAsset) })),
  };
}

/**
 * Starts what `plan` needs. `symbols` are the configured instances' symbols (the recordings replayed, the
 * upstream pairs copied). Fails when the upstream cannot be read; the caller retries.
 */
export async function setUpVenue(
  plan: VenuePlan,
  env: Env,
  symbols: readonly string[],
  logger: Logger,
): Promise<VenueSetup> {
  if (plan.mode === 'live') {
    const client = new ExchangeClient({ ...clientOptionsFromEnv(env), logger: logger.child({ venue: 'live' }) });
    return { client, sim: undefined, files: undefined, close: () => client.close() };
  }
  const warn = (message: string) => logger.warn({ component: 'sim' }, message);
  let feed: PriceFeed;
  let engine: MatchingEngine;
  let files: string[] | undefined;
  let upstream: ExchangeClient | undefined;
  if (plan.data === 'live') {
    const { EXCHANGE_API_KEY: _key, EXCHANGE_API_SECRET: _secret, ...publicEnv } = env;
    upstream = new ExchangeClient({ ...clientOptionsFromEnv(publicEnv), logger: logger.child({ venue: 'upstream' }) });
    try {
      const wanted = new Set(symbols);
      const pairs = (await upstream.pairConfig()).filter((p) => wanted.has(p.symbol));
      engine = new MatchingEngine({ ...marketFrom(pairs), clock: systemClock });
    } catch (err) {
      await upstream.close();
      throw err;
    }
    feed = proxyFeed({ upstream, warn });
  } else {
    files = await paperDataFiles(env.PAPER_DATA, symbols);
    // Records carry wall-clock times like the bot's own (today's fills, daily limits), not the recording's.
    engine = new MatchingEngine({ pairs: DEFAULT_PAIRS, clock: systemClock });
    feed = plan.lockstep ? lockstepFeed({ files, warn }) : replayFeed({ files, speed: plan.speed, loop: true, warn });
  }
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
    await upstream?.close();
    throw err;
  }
  const client = new ExchangeClient({
    ...clientOptionsFromEnv({
      ...env,
      EXCHANGE_BASE_URL: sim.url,
      EXCHANGE_API_KEY: sim.credentials.apiKey,
      EXCHANGE_API_SECRET: sim.credentials.apiSecret,
    }),
    logger: logger.child({ venue: 'paper' }),
  });
  return {
    client,
    sim,
    files,
    async close() {
      await client.close();
      await sim.close();
      await upstream?.close();
    },
  };
}
