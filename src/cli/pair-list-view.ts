/**
 * What `bot check-config` shows of a pair list: the pairs it resolves to, ranked, and why each other pair of its
 * quote asset was left out, on recordings at a moment (each pair's last ticker at or before it, its rules as
 * recorded, its change from the first ticker of the hour a day before, as the engine samples it) or on an
 * exchange's market watch right now (one market-watch and one pair-config request, public, no keys).
 */
import { type PairFigures, type PairList, type PairListResult, resolvePairList } from '../config/pair-list.js';
import { ExchangeClient } from '../exchange/client.js';
import type { PairConfig } from '../ports/venue-records.js';
import { TIMEFRAME_MS } from '../market/candles.js';
import { pairRulesFrom } from '../market/pair-rules.js';
import { readRecordingBatches, recordedSymbols, recordingFiles } from '../record/recording-reader.js';

const HOUR_MS = TIMEFRAME_MS['1h'];

function tickOf(config: PairConfig | undefined): number | undefined {
  if (config === undefined) return undefined;
  try {
    return pairRulesFrom(config).tickSize.toNumber();
  } catch {
    return undefined;
  }
}

/** Each pair of `list`'s quote asset in `data`, as the engine would see it at `at` (default: the data's end). */
export async function figuresOnData(
  list: PairList,
  data: readonly string[],
  at: number | undefined,
): Promise<{ figures: PairFigures[]; at: number }> {
  const symbols = (await recordedSymbols(data)).filter((s) => s.endsWith(list.quote));
  const read = await Promise.all(
    symbols.map(async (symbol) => {
      let config: PairConfig | undefined;
      let last: PairFigures | undefined;
      let lastTime = -Infinity;
      /** The first price of each hour, by hour. */
      const hourly = new Map<number, number>();
      for (const file of await recordingFiles(data, [symbol])) {
        const options = {
          to: at === undefined ? Infinity : at + 1,
          warn: () => undefined,
          onHeader: (h: { symbol: string; pair?: PairConfig | undefined }) => {
            if (h.symbol === symbol && h.pair !== undefined) config ??= h.pair;
          },
          onPairConfig: (c: PairConfig) => {
            if (c.symbol === symbol) config ??= c;
          },
        };
        for await (const batch of readRecordingBatches(file, options)) {
          for (const t of batch) {
            if (t.s !== symbol || t.t < lastTime) continue;
            lastTime = t.t;
            const hour = Math.floor(t.t / HOUR_MS);
            if (!hourly.has(hour)) hourly.set(hour, t.p);
            last = { symbol, quoteAsset: t.q ?? undefined, last: t.p, high: t.h, low: t.l, quoteVolume: t.vq };
          }
        }
      }
      return { symbol, config, last, lastTime, hourly };
    }),
  );
  const when = at ?? Math.max(...read.map((r) => r.lastTime));
  const figures = read.map(({ symbol, config, last, hourly }): PairFigures => {
    const then = hourly.get(Math.floor(when / HOUR_MS) - 24);
    const changePct =
      then === undefined || last?.last === undefined || !(then > 0) ? undefined : ((last.last - then) / then) * 100;
    return {
      ...(last ?? { symbol }),
      quoteAsset: last?.quoteAsset ?? config?.quoteAsset,
      tickSize: tickOf(config),
      changePct,
    };
  });
  return { figures, at: when };
}

/** Every pair of an exchange's market watch now, with its rules (the 24-hour change is not known: no history). */
export async function figuresOnMarket(baseUrl: string): Promise<PairFigures[]> {
  const client = new ExchangeClient({ baseUrl });
  try {
    return await marketFigures(client);
  } finally {
    await client.close();
  }
}

/** figuresOnMarket through a client the caller holds: one market-watch and one pair-config request. */
export async function marketFigures(
  client: Pick<ExchangeClient, 'marketWatch' | 'pairConfig'>,
): Promise<PairFigures[]> {
  const [tickers, configs] = await Promise.all([client.marketWatch(), client.pairConfig()]);
  const bySymbol = new Map(configs.map((c) => [c.symbol, c]));
  return tickers.map((t) => ({
    symbol: t.symbol,
    quoteAsset: t.quoteAsset ?? bySymbol.get(t.symbol)?.quoteAsset,
    last: t.last,
    high: t.high,
    low: t.low,
    quoteVolume: t.quoteVolume,
    tickSize: tickOf(bySymbol.get(t.symbol)),
  }));
}

const RANKED_BY = { quoteVolume: '24-hour quote volume', change: '24-hour change %', volatility: '24-hour range %' };

/** The lines that show a resolved list: its pairs ranked with the figure they were ranked by, then the others. */
export function pairListLines(list: PairList, result: PairListResult, where: string): string[] {
  const lines = [
    `  pairlist on ${where}: ${result.listed.length} ${result.listed.length === 1 ? 'pair' : 'pairs'} by ${RANKED_BY[list.sortBy]}` +
      (list.top === undefined ? '' : ` (top ${list.top})`),
  ];
  const width = Math.max(0, ...[...result.listed, ...result.left].map((p) => p.symbol.length));
  for (const p of result.listed)
    lines.push(`    ${String(p.rank).padStart(3)}. ${p.symbol.padEnd(width)}  ${Number(p.value.toPrecision(6))}`);
  if (result.left.length > 0) lines.push('  left out:');
  for (const p of result.left) lines.push(`    ${p.symbol.padEnd(width)}  ${p.reason}`);
  if (result.otherQuote > 0) lines.push(`  and ${result.otherQuote} pairs of another quote asset than ${list.quote}`);
  return lines;
}

export { resolvePairList };
