/**
 * The simulated exchange's market (assets and pairs) for the pairs a replay or an upstream names: the pairs of
 * any symbol, not only the built-in ones. Built-in pairs (default-market.ts) stand in only where a recording
 * carries no configuration of its own (the shipped samples).
 */
import { BotError } from '../errors.js';
import type { PairConfig } from '../ports/venue-records.js';
import { DEFAULT_ASSETS, DEFAULT_PAIRS, type SimAsset } from './default-market.js';

/**
 * The asset id an importer gives a code when none is given: the built-in id for the built-in assets, else the
 * code read as a base-36 number (USD -> 39,489). Distinct codes get distinct ids, none of them a built-in's,
 * so recordings imported separately never clash; nobody has to guess an id.
 */
export function assetIdFor(code: string): number {
  const builtIn = DEFAULT_ASSETS.find((a) => a.code === code);
  if (builtIn) return builtIn.id;
  const id = Number.parseInt(code, 36);
  if (!/^[A-Za-z0-9]{2,10}$/.test(code) || !Number.isSafeInteger(id))
    throw new BotError('E_USAGE', `asset code '${code}' must be 2 to 10 letters or digits`);
  return id;
}

/**
 * Assets and pairs for an engine: each pair's assets keep the ids its configuration gives unless another code
 * took that id first; those, assets without an id, and the built-in assets (the paper account's default
 * currencies) get free ids. The pairs are returned with the ids they ended up with.
 */
export function marketFrom(pairs: readonly PairConfig[]): { assets: SimAsset[]; pairs: PairConfig[] } {
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

/** How to give a recording the rules of its pair: the one line a replay without them stops with. */
export function missingRulesMessage(symbol: string, where: string): string {
  return (
    `no pair rules for ${symbol} in ${where}: re-import it with \`bot import-candles --symbol ${symbol} ` +
    '--base CODE --quote CODE --tick-size T --base-precision N` (or --pair-config FILE), or record it with `bot record`'
  );
}

/**
 * The pair configuration of each symbol: the recordings' (`recorded`), else the built-in one, else a
 * BotError E_NO_PAIR_RULES saying how to give them (`where` names the data).
 */
export function pairsFor(
  symbols: readonly string[],
  recorded: ReadonlyMap<string, PairConfig>,
  where: string,
): PairConfig[] {
  return symbols.map((symbol) => {
    const config = recorded.get(symbol) ?? DEFAULT_PAIRS.find((p) => p.symbol === symbol);
    if (!config) throw new BotError('E_NO_PAIR_RULES', missingRulesMessage(symbol, where), { context: { symbol } });
    return config;
  });
}

/**
 * The market of a replay: the configured `symbols`' pairs (pairsFor: a symbol without rules stops here), the
 * recordings' other pairs, and the built-in pairs the recordings do not redefine (a paper account may hold
 * orders on them), with ids made unique by marketFrom.
 */
export function replayMarket(
  symbols: readonly string[],
  recorded: ReadonlyMap<string, PairConfig>,
  where: string,
): { assets: SimAsset[]; pairs: PairConfig[] } {
  const pairs = new Map<string, PairConfig>();
  for (const p of pairsFor(symbols, recorded, where)) pairs.set(p.symbol, p);
  for (const [symbol, p] of recorded) if (!pairs.has(symbol)) pairs.set(symbol, p);
  for (const p of DEFAULT_PAIRS) if (!pairs.has(p.symbol)) pairs.set(p.symbol, p);
  return marketFrom([...pairs.values()]);
}
