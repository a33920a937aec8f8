/**
 * Declared exits and protections in a backtest (the real command, engine and matching engine over the sample's
 * fall of March 9-10): a strategy that is always long, its stop-loss declared in its strategy file, is stopped
 * out by the stop the engine holds on the simulated exchange (placed 0.5 % under the average entry), each exit a
 * STOP_LIMIT filled between its own limit and stop (or at market where the price gapped under its limit, the
 * held one cancelled first), one per entry; on a pair whose order types cannot hold it, the stop-loss acts on
 * ticks, at the first price at or under it since the entry, one MARKET sell per entry; and with protections.losingTrades the entries stop after the losses, refused
 * with the protection's reason, as on paper and live. The exits on ticks (a trailing stop, a roi table) trigger at
 * the level their rule gives from the data (the high the data held since the entry, the target for the time
 * held), once per entry; a cooldown follows each stop-out; maxDrawdown stops the entries at the first trade that
 * takes the compounded closed trades pct under their best.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempProject } from '../config/temp-project.js';
import { readRecording } from '../../src/record/recording-reader.js';
import { RECORDING_VERSION } from '../../src/record/recording-format.js';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import { csvRecords } from '../support/csv-records.js';
import { writeSlice } from '../support/recording-slice.js';
import { bot, FROM, SAMPLE, sliceFlags, TO } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const project = tempProject();
const out = tempDir('backtest-test');
afterAll(() => {
  project.remove();
});

/** Buys 0.001 at MARKET whenever it holds nothing and has no order open; never sells by itself. */
const ALWAYS_LONG = `
import { z } from 'zod';
export default {
  name: 'always-long',
  params: z.object({}),
  onTick(ctx) {
    if (ctx.openOrders.length > 0 || ctx.position.quantity.gte('0.0001')) return;
    ctx.market('BUY', { quantity: '0.001' }, { tag: 'entry' });
  },
};
`;
project.strategy('always-long.js', ALWAYS_LONG);

function config(name: string, extra: Record<string, unknown>): string {
  return project.config(`${name}.json`, {
    name,
    strategy: 'always-long',
    symbol: 'BTCUSDT',
    schedule: '*/5 * * * * *',
    exits: { stopLossPct: 0.5 },
    ...extra,
  });
}

/** orders.csv (or another of the run's CSV files) as records. */
const orders = (dir: string, file = 'orders.csv') => csvRecords(join(dir, file));

interface Trigger {
  time: string;
  reason: string;
  price: number;
  /** The line's severity (pino's). */
  level: string;
  exitLevel: number;
  entry: string;
}

/** BTCUSDT's price tick on the sample. */
const TICK = 0.01;

/** The engine's `declared exit` lines of log.jsonl, whose figures are rounded to the pair's tick for people. */
function triggers(dir: string): Trigger[] {
  const lines = readFileSync(join(dir, 'log.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Trigger & { msg: string })
    .filter((l) => l.msg.startsWith('declared exit: '));
  for (const l of lines) {
    expect(l.entry, 'entry').toMatch(/^\d+(\.\d{1,2})?$/);
    expect(String(l.exitLevel), 'exitLevel').toMatch(/^\d+(\.\d{1,2})?$/);
  }
  return lines;
}

async function run(name: string, extra: Record<string, unknown>): Promise<string> {
  const dir = join(out, name);
  const result = await bot([...sliceFlags(config(name, extra), dir), '--strategies', project.strategiesDir]);
  expect(result.code, result.err.join('\n')).toBe(0);
  return dir;
}

const ms = (iso: string) => Date.parse(iso);

/** The average price of the last entry filled at or before `time` (its fee, paid in BTC, taken off what is held). */
function averageEntry(fills: ReturnType<typeof orders>, time: string): number {
  const f = fills.filter((e) => ms(e.time!) <= ms(time)).at(-1)!;
  return (Number(f.price) * Number(f.quantity)) / (Number(f.quantity) - Number(f.fee));
}

describe('declared exits in a backtest', () => {
  it('stops out through the stop held on the simulated exchange, once per entry, within its prices', async () => {
    const dir = join(out, 'held');
    const result = await bot([...sliceFlags(config('held', {}), dir), '--strategies', project.strategiesDir]);
    expect(result.code, result.err.join('\n')).toBe(0);
    const rows = orders(dir);
    const entries = rows.filter((o) => o.tag === 'entry' && o.status === 'FILLED');
    const exits = rows.filter((o) => o.tag === 'exit:stop-loss' && o.status === 'FILLED');
    expect(entries.length).toBeGreaterThan(3);
    // Every exit is the held STOP_LIMIT, filled at or under its stop and at or above its limit; or, where the
    // price gapped under that limit, a MARKET sell right after the held one was cancelled; or, where the entry
    // filled inside a candle that closed under its stop (a fill is known at the candle's close), a MARKET sell
    // right after the entry, no stop being placeable under the price.
    expect(exits.length).toBeGreaterThan(3);
    for (const o of exits) {
      if (o.type === 'MARKET') {
        const before = rows[rows.indexOf(o) - 1]!;
        if (before.side === 'BUY') expect(before).toMatchObject({ tag: 'entry', status: 'FILLED' });
        else expect(before).toMatchObject({ type: 'STOP_LIMIT', status: 'CANCELED' });
        continue;
      }
      expect(o.type).toBe('STOP_LIMIT');
      expect(Number(o.avg_price)).toBeLessThanOrEqual(Number(o.stop_price));
      expect(Number(o.avg_price)).toBeGreaterThanOrEqual(Number(o.price));
    }
    expect(exits.filter((o) => o.type === 'STOP_LIMIT').length).toBeGreaterThan(exits.length / 2);
    // Each held stop at 0.5 % under the average entry it protects (the fee taken in BTC included), on the tick.
    const entryFills = orders(dir, 'fills.csv').filter((f) => f.tag === 'entry');
    for (const o of rows.filter((r) => r.type === 'STOP_LIMIT')) {
      const average = averageEntry(entryFills, o.time!);
      expect(Number(o.stop_price) - average * 0.995).toBeGreaterThanOrEqual(0);
      expect(Number(o.stop_price) - average * 0.995).toBeLessThan(0.01);
    }
    // One exit per entry: never two sells of one position.
    const sells = rows.filter((o) => o.side === 'SELL' && Number(o.filled_qty) > 0);
    expect(sells.length).toBeLessThanOrEqual(entries.length);
    expect(sells.length).toBeGreaterThanOrEqual(entries.length - 1);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
      trades: { exitTag: string | null }[];
    };
    expect(summary.trades.filter((t) => t.exitTag === 'exit:stop-loss').length).toBe(exits.length);
  });

  it('a stopLossPct the pair cannot hold (no STOP_LIMIT, no OCO) sells on ticks, at the first price at or under the stop after each entry, once', async () => {
    // The same days, the pair's rules in the recording's header allowing LIMIT and MARKET orders only; its
    // lines replayed as they are (a market watch's, not candles the replay walks a path inside).
    const data = join(out, 'no-stops.jsonl.gz');
    await writeSlice(SAMPLE, data, ms(FROM), ms(TO), (h) => ({
      ...h,
      version: RECORDING_VERSION,
      source: 'market-watch',
      pair: simPairConfig(DEFAULT_ASSETS[0]!, DEFAULT_ASSETS[1]!, { orderTypes: ['LIMIT', 'MARKET'] }),
    }));
    const dir = join(out, 'tick-stop');
    const flags = ['--config', config('tick-stop', {}), '--data', data, '--from', FROM, '--to', TO, '--out', dir];
    const result = await bot([...flags, '--strategies', project.strategiesDir]);
    expect(result.code, result.err.join('\n')).toBe(0);
    const rows = orders(dir);
    expect(rows.filter((o) => o.type !== 'MARKET')).toEqual([]);
    const fired = triggers(dir);
    expect(fired.length).toBeGreaterThan(3);
    expect(fired.every((t) => t.reason === 'stop-loss')).toBe(true);
    // One exit per trigger, each a MARKET sell filled: never a second sell of one position.
    expect(rows.filter((o) => o.tag === 'exit:stop-loss' && o.status === 'FILLED')).toHaveLength(fired.length);
    expect(rows.filter((o) => o.side === 'SELL')).toHaveLength(fired.length);
    const entries = orders(dir, 'fills.csv').filter((f) => f.tag === 'entry');
    const prices: { t: number; p: number }[] = [];
    for await (const w of readRecording(data)) prices.push({ t: w.t, p: Number(w.p) });
    for (const t of fired) {
      // The stop is 0.5 % under the average entry (its fee included; the log line gives both to the tick)...
      const level = averageEntry(entries, t.time) * 0.995;
      expect(Math.abs(t.exitLevel - level)).toBeLessThanOrEqual(TICK / 2 + 1e-9);
      expect(Math.abs(Number(t.entry) * 0.995 - level)).toBeLessThan(TICK);
      // ...and the trigger is the first price of the data at or under it since the entry filled.
      const entered = ms(entries.filter((e) => ms(e.time!) <= ms(t.time)).at(-1)!.time!);
      const since = prices.filter((x) => x.t > entered && x.t <= ms(t.time));
      expect(since.at(-1)!.p).toBe(t.price);
      expect(t.price).toBeLessThanOrEqual(level);
      expect(since.slice(0, -1).filter((x) => x.p <= level)).toEqual([]);
    }
  });

  it('protections.losingTrades stops the entries after the losses, with its reason', async () => {
    const dir = join(out, 'protected');
    const file = config('protected', {
      protections: { losingTrades: { count: 2, windowMinutes: 1440, pauseMinutes: 2880 } },
    });
    const result = await bot([...sliceFlags(file, dir), '--strategies', project.strategiesDir]);
    expect(result.code, result.err.join('\n')).toBe(0);
    const rows = orders(dir);
    // Two losing trades, then no entry for the rest of the two days.
    expect(rows.filter((o) => o.tag === 'entry' && o.status === 'FILLED')).toHaveLength(2);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
      refusals: { side: string; reason: string; count: number }[];
    };
    expect(summary.refusals).toEqual([
      expect.objectContaining({
        side: 'BUY',
        reason: expect.stringMatching(
          /^2 losing trades within 1440 min \(protections\.losingTrades\): no new entries until /,
        ) as string,
      }),
    ]);
  });

  it('trailingStopPct sells pct under the high the data held since the entry, once armed; a cooldown follows', async () => {
    const dir = await run('trailing', {
      exits: { trailingStopPct: 0.5, trailingActivationPct: 0.2 },
      protections: { cooldownMinutes: 60 },
    });
    const rows = orders(dir);
    const entries = rows.filter((o) => o.tag === 'entry' && o.status === 'FILLED');
    const fired = triggers(dir);
    expect(fired.length).toBeGreaterThanOrEqual(2);
    expect(fired.every((t) => t.reason === 'trailing-stop')).toBe(true);
    expect(rows.filter((o) => o.tag === 'exit:trailing-stop' && o.status === 'FILLED')).toHaveLength(fired.length);
    const prices: { t: number; p: number }[] = [];
    for await (const w of readRecording(SAMPLE, { from: ms(FROM), to: ms(TO) }))
      prices.push({ t: w.t, p: Number(w.p) });
    for (const t of fired) {
      // At or under the level, which is 0.5 % under a high at least 0.2 % over the entry (fees included)...
      expect(t.level).toBe('warn');
      // (The line's entry and level are rounded to the tick: each is known to half a tick, two of them to a tick.)
      expect(t.price).toBeLessThanOrEqual(t.exitLevel);
      const high = t.exitLevel / 0.995;
      expect(high).toBeGreaterThanOrEqual(Number(t.entry) * 1.002 - 2 * TICK);
      // ...and that high is the highest price the data held between the entry and the trigger.
      const entered = ms(entries.filter((e) => ms(e.time!) < ms(t.time)).at(-1)!.time!);
      const held = prices.filter((x) => x.t >= entered && x.t <= ms(t.time)).map((x) => x.p);
      expect(held.some((p) => Math.abs(p - high) < TICK)).toBe(true);
      expect(Math.max(...held)).toBeGreaterThanOrEqual(high - TICK);
      // The cooldown: the next entry an hour after the stop-out at the earliest.
      const next = entries.find((e) => ms(e.time!) > ms(t.time));
      if (next !== undefined) expect(ms(next.time!) - ms(t.time)).toBeGreaterThanOrEqual(60 * 60_000);
    }
  });

  it('roi sells at the target for the time held, once per entry', async () => {
    const dir = await run('roi', { exits: { roi: { '0': 0.4, '30': 0.1 } } });
    const rows = orders(dir);
    const entries = rows.filter((o) => o.tag === 'entry' && o.status === 'FILLED');
    const fired = triggers(dir);
    expect(fired.length).toBeGreaterThanOrEqual(2);
    expect(rows.filter((o) => o.tag === 'exit:roi' && o.status === 'FILLED')).toHaveLength(fired.length);
    for (const t of fired) {
      const entered = ms(entries.filter((e) => ms(e.time!) < ms(t.time)).at(-1)!.time!);
      const target = ms(t.time) - entered >= 30 * 60_000 ? 0.1 : 0.4;
      expect(t.level).toBe('warn');
      expect(Math.abs(t.exitLevel - Number(t.entry) * (1 + target / 100))).toBeLessThan(2 * TICK);
      expect(t.price).toBeGreaterThanOrEqual(t.exitLevel);
    }
    expect(rows.filter((o) => o.side === 'SELL' && Number(o.filled_qty) > 0).length).toBeLessThanOrEqual(
      entries.length,
    );
  });

  it('protections.maxDrawdown stops the entries at the first trade that takes the closed trades pct under their best', async () => {
    const dir = await run('drawdown', {
      exits: { stopLossPct: 0.5 },
      protections: { maxDrawdown: { pct: 1.5, pauseMinutes: 4000 } },
    });
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
      trades: { pnlPct: string }[];
      refusals: { reason: string }[];
    };
    // Computed from the trades themselves: the first at which the compounded equity is 1.5 % under its best.
    let equity = 1;
    let best = 1;
    let tripAt = -1;
    for (const [i, t] of summary.trades.entries()) {
      equity *= 1 + Number(t.pnlPct) / 100;
      best = Math.max(best, equity);
      if ((1 - equity / best) * 100 >= 1.5) {
        tripAt = i;
        break;
      }
    }
    expect(tripAt).toBeGreaterThanOrEqual(1);
    expect(summary.trades).toHaveLength(tripAt + 1);
    expect(orders(dir).filter((o) => o.tag === 'entry' && o.status === 'FILLED')).toHaveLength(tripAt + 1);
    const reason = summary.refusals.map((r) => r.reason);
    expect(reason).toEqual([
      expect.stringMatching(
        /^closed trades \d+\.\d\d % under their best \(protections\.maxDrawdown, 1\.5 %\): no new entries until /,
      ),
    ]);
    const said = Number(/^closed trades (\d+\.\d\d) %/.exec(reason[0]!)![1]);
    expect(said).toBeCloseTo((1 - equity / best) * 100, 1);
  });
});
