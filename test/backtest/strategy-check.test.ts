/**
 * `bot check-strategy` (issue 38): the shipped strategies pass (exit 0); a strategy with too short a warm-up is
 * flagged by the runs from later starts, one that reads a candle from after its decision by the runs on cut data.
 * In process, on the sample's first 42 hours.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { run as checkCli } from '../../src/cli/check-strategy.js';
import { checkStrategy } from '../../src/backtest/strategy-check.js';
import { readConfigs } from '../../src/backtest/strategy-configs.js';
import { DEFAULT_JOB_SETTINGS } from '../../src/backtest/job-settings.js';
import { loadTicks, sliceTicks, type TickData } from '../../src/backtest/tick-data.js';
import { defineStrategy, rsi, type StrategyContext, z } from '../../src/strategy/api.js';
import { instance } from '../engine/harness.js';
import { capture } from '../support/command-output.js';
import { tempDir } from '../support/temp-dir.js';
import { SAMPLE, userStrategy } from './fixtures.js';
import { tempProject } from '../config/temp-project.js';

/** The data's first 42 hours: a warm-up of a day and some hours, then some hours checked. */
const TO = '2023-03-02T18:00:00Z';
const SETTINGS = { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '10000' } };
const OPTIONS = { starts: 2, cuts: 2, tolerance: 1e-3 };

/**
 * A strategy that keeps its own clock: from ten minutes after its start, every fifth minute of it, it buys; a
 * minute later it sells. A run from a later start buys on other minutes.
 */
const OWN_CLOCK = `
import { z } from 'zod';
export default {
  name: 'own-clock',
  params: z.object({}),
  orderTypes: ['MARKET'],
  onTick(ctx) {
    const s = ctx.state;
    s.since ??= ctx.now();
    const minute = Math.floor((ctx.now() - s.since) / 60000);
    if (ctx.openOrders.length > 0 || minute === s.bought) return;
    if (ctx.position.quantity.gte('0.001')) ctx.market('SELL', { quantity: ctx.position.quantity.toFixed() });
    else if (minute >= 10 && minute % 5 === 0) {
      s.bought = minute;
      ctx.market('BUY', { quantity: '0.001' });
    }
  },
};
`;

/** Buys 0.001 BTC when RSI(14) of five-minute candles is above 55 and sells it below 45. */
function rsiTrader(name: string, strength: ReturnType<typeof rsi>) {
  return defineStrategy({
    name,
    params: z.object({}),
    indicators: () => ({ strength }),
    onTick(ctx: StrategyContext) {
      const value = ctx.indicators.strength!.value as number | undefined;
      if (value === undefined || ctx.openOrders.length > 0) return;
      const holding = ctx.position.quantity.gte('0.001');
      if (!holding && value > 55) ctx.market('BUY', { quantity: '0.001' }, { tag: 'entry' });
      if (holding && value < 45) ctx.market('SELL', { quantity: '0.001' }, { tag: 'exit' });
    },
  });
}

describe('bot check-strategy', () => {
  let data: TickData;
  beforeAll(async () => {
    data = await loadTicks([SAMPLE], { to: Date.parse(TO) });
  });

  it('passes the shipped EMA trend (exit 0), its indicators and decisions compared', async () => {
    const dir = tempDir('check-strategy');
    const config = join(dir, 'ema-trend-5m.json');
    writeFileSync(
      config,
      JSON.stringify({
        name: 'ema-trend-5m',
        strategy: 'ema-trend',
        symbol: 'BTCUSDT',
        schedule: '*/5 * * * * *',
        params: { timeframe: '5m', fast: 6, slow: 13, rsiPeriod: 7, atrPeriod: 7, quoteAmount: '50' },
      }),
    );
    const flags = ['--config', config, '--data', SAMPLE, '--to', TO, '--starts', '2', '--cuts', '2'];
    const { code, out, err } = await capture(checkCli, flags);
    expect(code, [...out, ...err].join('\n')).toBe(0);
    const compared = /compared: (\d+) indicator values, (\d+) decisions/.exec(out.join('\n'));
    expect(Number(compared![1])).toBeGreaterThan(100);
    expect(Number(compared![2])).toBeGreaterThan(0);
    expect(out.at(-1)).toMatch(/^OK: no indicator value or decision depends/);
  });

  it("passes the shipped breakout and mean reversion: their lookback is the engine's candles, not state from their start", async () => {
    // Before (issue 38) each watched its own lookback from its start: a later start's first entry came an hour or
    // two after the first run's (the files in strategies/ at the commit before this test).
    const { instances } = await readConfigs(['config/breakout-btcusdt.json', 'config/mean-reversion-btcusdt.json']);
    // Their warm-up (two hours of minutes and a day), then eight hours checked.
    const hours = sliceTicks(data, Date.parse(TO) - 34 * 3_600_000, Date.parse(TO));
    for (const spec of instances) {
      const check = await checkStrategy([spec], hours, SETTINGS, { ...OPTIONS, starts: 1, cuts: 1 });
      const name = spec.config.name;
      expect([...check.indicators, ...check.decisions], name).toEqual([]);
      // The later start was a moment the first run was flat: its first decision was compared, and the cut's.
      expect(check.starts.map((s) => s.flat).join(), name).toBe('true');
      expect(check.compared.decisions, name).toBeGreaterThan(1);
    }
  });

  it('exits 1 and lists what differs when a decision depends on where the run starts', async () => {
    const project = tempProject();
    const config = userStrategy(project, 'own-clock', OWN_CLOCK, {});
    const flags = ['--config', config, '--strategies', project.strategiesDir, '--data', SAMPLE];
    const r = await capture(checkCli, [...flags, '--to', '2023-03-01T03:00:00Z', '--starts', '1', '--cuts', '1']);
    expect(r.code, [...r.out, ...r.err].join('\n')).toBe(1);
    const text = r.out.join('\n');
    expect(text).toMatch(
      /DIFFERS: decision after the start .* own-clock-test BUY MARKET .* in the first run, .* in the run from it/,
    );
    expect(r.out.at(-1)).toMatch(/^FAILED: 1 differences: the result depends on where the run starts/);
  });

  it("flags too short a warm-up: RSI(14) ready at the library's 15 candles reads otherwise from a later start", async () => {
    const library = rsi('5m', 14);
    const short = await checkStrategy(
      [instance('short', rsiTrader('short', { ...library, warmUp: library.seed }))],
      data,
      SETTINGS,
      OPTIONS,
    );
    expect(short.indicators.filter((d) => d.kind === 'start').length).toBeGreaterThan(0);
    expect(short.indicators.filter((d) => d.kind === 'cut')).toEqual([]);
    // The same strategy with the converged warm-up passes.
    const converged = await checkStrategy([instance('full', rsiTrader('full', library))], data, SETTINGS, OPTIONS);
    expect([...converged.indicators, ...converged.decisions]).toEqual([]);
    expect(converged.compared.decisions).toBeGreaterThan(0);
  });

  it('flags a strategy that reads a candle from after its decision', async () => {
    // Prices it has seen, kept in the module (as a cache shared by a sweep's runs would): from the second run on
    // it knows the price ten minutes ahead, and skips a buy that would lose.
    const seen = new Map<number, number>();
    const peeking = defineStrategy({
      name: 'peeking',
      params: z.object({}),
      onTick(ctx: StrategyContext) {
        const last = ctx.ticker?.last;
        if (last === undefined) return;
        const minute = Math.floor(ctx.now() / 60_000);
        seen.set(minute, last);
        const ahead = seen.get(minute + 10);
        if (minute % 30 !== 0 || ctx.openOrders.length > 0 || (ahead !== undefined && ahead < last)) return;
        ctx.market(ctx.position.quantity.gte('0.001') ? 'SELL' : 'BUY', { quantity: '0.001' }, { tag: 'half-hour' });
      },
    });
    const lastHours = sliceTicks(data, Date.parse(TO) - 8 * 3_600_000, Date.parse(TO));
    const check = await checkStrategy([instance('peeking', peeking)], lastHours, SETTINGS, OPTIONS);
    expect(check.decisions.filter((d) => d.kind === 'cut').length).toBeGreaterThan(0);
  });
});
