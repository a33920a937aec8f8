/**
 * The pairs a strategy file's pair list may choose from (config/pair-list.ts): on paper on recordings, the pairs
 * PAPER_DATA holds recordings of (default the samples); on the live market watch (live, or paper on live prices),
 * the pairs the exchange lists as trading, read once at start with the public pair-config request. Each such file
 * gets an instance on every one of them of its quote asset; its list says at each refresh which may enter.
 */
import { expandPairLists, hasPairListTemplate } from '../config/strategy-file.js';
import type { StrategyInstance } from '../config/loader.js';
import { ConfigError } from '../errors.js';
import { ExchangeClient } from '../exchange/client.js';
import { clientOptionsFromEnv } from '../exchange/client-options.js';
import type { Logger } from '../ops/logger.js';
import { recordedSymbols } from '../record/recording-reader.js';
import type { Env } from './env.js';
import { SAMPLES_DIR } from './paper-data.js';
import type { VenuePlan } from './venue-plan.js';

/** The market's pairs: the recordings', or the exchange's trading ones (one public request). */
export async function marketPairs(plan: VenuePlan, env: Env, logger: Logger): Promise<string[]> {
  if (plan.mode === 'paper' && plan.data === 'recording') return recordedSymbols(env.PAPER_DATA ?? [SAMPLES_DIR]);
  const { EXCHANGE_API_KEY: _key, EXCHANGE_API_SECRET: _secret, ...publicEnv } = env;
  const client = new ExchangeClient({ ...clientOptionsFromEnv(publicEnv), logger: logger.child({ venue: 'pairs' }) });
  try {
    return (await client.pairConfig()).filter((p) => p.status === 'TRADING').map((p) => p.symbol);
  } finally {
    await client.close();
  }
}

/** `instances` with each pair list's file on every pair of the market it may choose; a list with none is an error. */
export async function withPairListPairs(
  instances: StrategyInstance[],
  plan: VenuePlan,
  env: Env,
  logger: Logger,
): Promise<StrategyInstance[]> {
  if (!hasPairListTemplate(instances)) return instances;
  const pairs = await marketPairs(plan, env, logger);
  const out = expandPairLists(instances, pairs);
  const empty = instances.filter(
    (i) => i.config.pairlist !== undefined && !out.some((o) => o.config.group === i.config.group),
  );
  if (empty.length > 0)
    throw new ConfigError(
      empty.map(
        (i) =>
          `${i.file}: pairlist: expected pairs of ${i.config.pairlist?.quote} on the market, found none among ${pairs.length} (${plan.mode === 'paper' && plan.data === 'recording' ? 'PAPER_DATA' : 'the exchange'})`,
      ),
    );
  return out;
}
