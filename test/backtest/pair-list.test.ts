/**
 * Issue 41: a strategy file whose pairs come from a pair list, backtested on data/samples/2023-04 (five USDT pairs).
 * The list is worked out at each refresh on the data's own market watch as it stood then: every list the run chose
 * is the one the recorded tickers up to that moment give (resolvePairList on them), never one that knows what
 * came later. A pair on the list may enter; a pair off it is refused its entries, naming the list, and what it
 * holds is still managed (its strategy sells it).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runBacktest } from '../../src/backtest/runner.js';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { valueAt } from '../../src/backtest/number-column.js';
import { type PairFigures, PairListSchema, resolvePairList } from '../../src/config/pair-list.js';
import { expandPairLists, fileInstances, StrategyFileSchema } from '../../src/config/strategy-file.js';
import type { InstanceSpec } from '../../src/engine/instance-runner.js';
import {
  type Candle,
  defineStrategy,
  ema,
  informative,
  type StrategyContext,
  type Ticker,
  tradableQuantity,
  z,
} from '../../src/strategy/api.js';
import { onePairInstance } from '../../src/config/strategy-file.js';
import { recordingFiles, recordedSymbols } from '../../src/record/recording-reader.js';

const DATA = 'data/samples/2023-04';
const FROM = Date.parse('2023-04-13T00:00:00Z');
const TO = Date.parse('2023-04-13T12:00:00Z');
const HOLD_MS = 40 * 60_000;

/**
 * Buys 20 USDT at MARKET when flat, 10 more at 10, 20 and 30 minutes, and sells what it holds 40 minutes after the
 * first: on the list or off it.
 */
const rotate = defineStrategy({
  name: 'rotate',
  params: z.object({}),
  onTick(ctx: StrategyContext) {
    const state = ctx.state as { since?: number };
    if (ctx.openOrders.length > 0) return;
    const held = tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price);
    if (held.gt(0)) {
      const age = ctx.now() - (state.since ?? 0);
      if (age >= HOLD_MS) ctx.market('SELL', { quantity: held });
      // 10 more at 10, 20 and 30 minutes: entries, refused while the pair is off the list.
      else if (held.mul(ctx.price ?? 0).lt(15 + 10 * Math.floor((age / HOLD_MS) * 4)))
        ctx.market('BUY', { quoteAmount: 10 });
    } else if (state.since === undefined || ctx.now() - state.since >= HOLD_MS) {
      state.since = ctx.now();
      ctx.market('BUY', { quoteAmount: 20 });
    }
  },
});

const LIST = PairListSchema.parse({
  quote: 'USDT',
  top: 2,
  sortBy: 'volatility',
  exclude: ['BTCUSDT'],
  refresh: '0 */20 * * * *',
});

describe('a pair list in a backtest', () => {
  let data: TickData;
  let instances: InstanceSpec[];
  beforeAll(async () => {
    const symbols = await recordedSymbols([DATA]);
    data = await loadTicks(await recordingFiles([DATA], symbols), { from: FROM, to: TO });
    const file = StrategyFileSchema.parse({ name: 'rot', strategy: 'rotate', pairlist: LIST, params: {} });
    const [template] = fileInstances(file);
    instances = expandPairLists([{ config: template!, definition: rotate, params: {} }], symbols);
  });

  it('makes an instance on each pair it may choose: the quote asset, not excluded', () => {
    expect(instances.map((i) => i.config.name)).toEqual(['rot/ADAUSDT', 'rot/ETHUSDT', 'rot/SOLUSDT', 'rot/XRPUSDT']);
  });

  it('chooses each list on the market as it stood at the refresh, and refuses entries off the list', async () => {
    const run = await runBacktest(instances, data, { balances: { USDT: '1000' } });
    const chosen = run.log.lines
      .map((l) => JSON.parse(l) as { time: string; group?: string; listed?: string[] })
      .filter((l) => l.group === 'rot' && l.listed !== undefined)
      .map((l) => ({ time: Date.parse(l.time), listed: l.listed! }));
    // The list changed over the day (else this proves little), the first at the first market job.
    expect(chosen.length).toBeGreaterThan(2);
    expect(chosen[0]!.time).toBe(FROM + 5_000);

    // Each list is the one the data's last ticker of each pair at or before that moment gives.
    const { sym, time, price, high, low } = data.columns;
    const last = new Map<string, PairFigures>();
    let i = 0;
    for (const { time: at, listed } of chosen) {
      for (; i < data.length && valueAt(time, i) <= at; i++) {
        const symbol = data.symbols[sym[i] as number]!.symbol;
        last.set(symbol, { symbol, last: valueAt(price, i), high: valueAt(high, i), low: valueAt(low, i) });
      }
      expect(listed, new Date(at).toISOString()).toEqual(
        resolvePairList(LIST, [...last.values()]).listed.map((p) => p.symbol),
      );
    }

    // Entries only while listed: each BUY's instance was on the last list chosen before it.
    const listedAt = (t: number) => [...chosen].reverse().find((c) => c.time <= t)?.listed ?? [];
    const buys = run.orders.filter((o) => o.side === 'BUY');
    expect(buys.length).toBeGreaterThan(4);
    for (const o of buys) expect(listedAt(o.createdAt)).toContain(o.symbol);
    const refused = run.log.refusals().filter((r) => r.reason.includes('is not on it'));
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.side).toBe('BUY');
      expect(r.reason).toMatch(
        /^pairlist of rot: [A-Z]+USDT is not on it \((ranked \d by 24-hour range, outside top 2)\)/,
      );
    }
    // What a pair held when it left the list was still sold by its strategy.
    const sells = run.orders.filter((o) => o.side === 'SELL' && !listedAt(o.createdAt).includes(o.symbol));
    expect(sells.length).toBeGreaterThan(0);
  });
});

describe('an informative pair', () => {
  const HOUR = 3_600_000;
  const START = FROM + 16 * HOUR;
  interface Seen {
    time: number;
    hours: readonly Candle[];
    ticker: Ticker | undefined;
    trend: number | undefined;
    other?: Ticker | undefined;
  }
  /** On ADAUSDT, reading BTCUSDT's hours, ticker and EMA as an informative pair. */
  const reader = (seen: Seen[]) =>
    defineStrategy({
      name: 'reader',
      params: z.object({}),
      informative: [{ symbol: 'BTCUSDT', timeframe: '1h', count: 5 }],
      indicators: () => ({ trend: informative('BTCUSDT', ema('1h', 3)) }),
      onTick(ctx: StrategyContext) {
        seen.push({
          time: ctx.now(),
          hours: ctx.candles('1h', 5, { symbol: 'BTCUSDT' }),
          ticker: ctx.tickerOf('BTCUSDT'),
          trend: ctx.indicators.trend!.value as number | undefined,
          other: ctx.tickerOf('ETHUSDT'),
        });
      },
    });
  /** On BTCUSDT itself, the same figures as its own. */
  const own = (seen: Seen[]) =>
    defineStrategy({
      name: 'own',
      params: z.object({}),
      candles: { '1h': 5 },
      indicators: () => ({ trend: ema('1h', 3) }),
      onTick(ctx: StrategyContext) {
        seen.push({
          time: ctx.now(),
          hours: ctx.candles('1h', 5),
          ticker: ctx.ticker,
          trend: ctx.indicators.trend!.value as number | undefined,
        });
      },
    });

  it("keeps and warms the pair's candles, its indicators and its last ticker as it does a traded pair's own", async () => {
    const files = await recordingFiles([DATA], ['ADAUSDT', 'BTCUSDT']);
    const run = async (symbol: string, definition: ReturnType<typeof own>) => {
      const data = await loadTicks(
        files.filter((f) => f.includes(symbol) || f.includes('BTCUSDT')),
        {
          from: FROM,
          to: START + 3 * HOUR,
        },
      );
      const config = onePairInstance({ name: 'p', strategy: definition.name, symbol, schedule: '0 */5 * * * *' });
      await runBacktest([{ config, definition, params: {} }], data, { balances: { USDT: '100' }, start: START });
    };
    const read: Seen[] = [];
    const owned: Seen[] = [];
    await run('ADAUSDT', reader(read));
    await run('BTCUSDT', own(owned));
    expect(read.length).toBeGreaterThan(30);
    // Warmed up on the sixteen hours before the start: five closed hours, and the EMA ready (it takes 14), at once.
    expect(read[0]!.hours).toHaveLength(5);
    expect(read[0]!.trend).toBeDefined();
    expect(read.map(({ other: _, ...s }) => s)).toEqual(owned);
    // A pair it did not declare is not read.
    expect(read.every((s) => s.other === undefined)).toBe(true);
  });
});
