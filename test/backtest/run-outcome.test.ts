/**
 * A backtest says what happened: refused intents by reason in the printed table, summary.json, report.html and
 * log.jsonl (stamped with the data's time); a hook that throws makes the command fail after writing its
 * outputs, naming the strategy file and line; closed trades in summary.json and trades.csv as computed by
 * hand from the fills.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BacktestSummary } from '../../src/backtest/summary.js';
import { D } from '../../src/market/decimal.js';
import { type TempProject, tempProject } from '../config/temp-project.js';
import { bot, FROM, SAMPLE, sliceFlags } from './fixtures.js';

const TO = '2023-03-09T02:00:00Z';

/** Sells a whole BTC it never has, on every tick: every intent is refused, for the same reason. */
const REFUSED = `
import { z } from 'zod';
export default {
  name: 'refused',
  params: z.object({}),
  onTick(ctx) {
    ctx.limit('SELL', ctx.price, '1', { tag: 'never' });
  },
};
`;

/** Throws on its 5th tick, from line 9 column 13 of this file (the throw statement). */
const THROWS = `
import { z } from 'zod';
export default {
  name: 'throws',
  params: z.object({}),
  onTick(ctx) {
    ctx.state.n = (ctx.state.n ?? 0) + 1;
    if (ctx.state.n === 5)
      throw new Error('bad tick');
  },
};
`;

/** One MARKET buy of 0.0015 BTC on the first tick, then a MARKET sell of what can be sold 30 minutes later. */
const ROUND_TRIP = `
import { z } from 'zod';
import { tradableQuantity } from '${process.cwd()}/src/strategy/api.ts';
export default {
  name: 'round-trip',
  params: z.object({}),
  onTick(ctx) {
    const s = ctx.state;
    if (s.start === undefined) {
      s.start = ctx.now();
      ctx.market('BUY', { quantity: '0.0015' }, { tag: 'in' });
    } else if (!s.sold && ctx.now() - s.start >= 1_800_000 && ctx.openOrders.length === 0) {
      s.sold = true;
      ctx.market('SELL', { quantity: tradableQuantity(ctx.rules, ctx.position.quantity, ctx.price) }, { tag: 'out' });
    }
  },
};
`;

let project: TempProject;
beforeAll(() => {
  project = tempProject();
});
afterAll(() => project.remove());

function setUp(name: string, source: string): { flags: string[]; out: string } {
  project.strategy(`${name}.js`, source);
  const config = project.config(`${name}.json`, {
    name: `${name}-test`,
    strategy: name,
    symbol: 'BTCUSDT',
    schedule: '*/5 * * * * *',
    params: {},
  });
  const out = join(project.root, `out-${name}`);
  return { out, flags: sliceFlags(config, out, ['--strategies', project.strategiesDir], TO) };
}

const read = (dir: string, file: string) => readFileSync(join(dir, file), 'utf8');
const jsonLines = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a strategy whose every intent is refused', () => {
  it('has its refusals counted by reason in the table, summary.json, report.html and log.jsonl', async () => {
    const { flags, out } = setUp('refused', REFUSED);
    const r = await bot(flags);
    expect(r.code).toBe(0);
    const summary = JSON.parse(read(out, 'summary.json')) as BacktestSummary;
    // onTick runs at each match of the schedule (every 5 recorded seconds), as on paper: one refusal each.
    const ticks = summary.instances[0]!.counters.ticks;
    expect(ticks).toBeGreaterThan(summary.period.ticks);
    const reason = 'insufficient BTC: order needs 1, free 0';
    expect(summary.refusals).toEqual([{ instance: 'refused-test', side: 'SELL', reason, count: ticks }]);
    expect(summary.instances[0]!.counters.refused).toBe(ticks);
    const line = `refused ${ticks.toLocaleString('en-US')} SELL intents of refused-test: ${reason}`;
    expect(r.out.join('\n')).toContain(line);
    expect(read(out, 'report.html')).toContain(line);
    // Every refusal is a line of log.jsonl, at the data's time (the recording's, within the period).
    const refusals = jsonLines(read(out, 'log.jsonl')).filter((l) => l.msg === `intent refused: ${reason}`);
    expect(refusals).toHaveLength(ticks);
    expect(refusals[0]).toMatchObject({ instance: 'refused-test', reason, intent: { side: 'SELL', tag: 'never' } });
    const times = refusals.map((l) => Date.parse(l.time as string));
    expect(times[0]).toBe(Date.parse(FROM) + 5_000);
    expect(Math.max(...times)).toBeLessThan(Date.parse(TO));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });
});

describe('a strategy whose hook throws', () => {
  it('makes the backtest exit non-zero after writing its outputs, naming the file and line', async () => {
    const { flags, out } = setUp('throws', THROWS);
    const r = await bot(flags);
    expect(r.code).toBe(1);
    const file = join(project.strategiesDir, 'throws.js');
    const failure = r.err.find((l) => l.includes('FAILED'));
    expect(failure).toBe(
      `backtest: FAILED: instance throws-test ended paused: onTick threw: Error: bad tick (at ${file}:9:13)`,
    );
    for (const f of ['summary.json', 'orders.csv', 'fills.csv', 'equity.csv', 'log.jsonl', 'report.html'])
      expect(existsSync(join(out, f))).toBe(true);
    const summary = JSON.parse(read(out, 'summary.json')) as BacktestSummary;
    expect(summary.endedEarly).toEqual([failure!.replace('backtest: FAILED: ', '')]);
    // The 5th onTick: the schedule's 5th match (every 5 recorded seconds) after the first ticker.
    const when = new Date(Date.parse(FROM) + 5 * 5_000).toISOString();
    expect(summary.errors).toEqual([
      { instance: 'throws-test', time: when, message: 'onTick threw: Error: bad tick', at: `${file}:9:13` },
    ]);
    const paused = jsonLines(read(out, 'log.jsonl')).find((l) => l.level === 'error');
    expect(paused).toMatchObject({ time: when, instance: 'throws-test', at: `${file}:9:13` });
    expect(read(out, 'report.html')).toContain('This run failed: an instance ended early.');
  });
});

describe('closed trades', () => {
  it('are in summary.json and trades.csv as computed by hand from the fills', async () => {
    const { flags, out } = setUp('round-trip', ROUND_TRIP);
    const r = await bot([...flags, '--export', 'trades']);
    expect(r.code).toBe(0);
    const [, ...fills] = read(out, 'fills.csv').trimEnd().split('\n');
    expect(fills).toHaveLength(2);
    // time,fill_id,order_id,instance,tag,symbol,side,type,price,quantity,quote_qty,fee,fee_asset,maker
    const [buy, sell] = fills.map((l) => l.split(','));
    expect([buy![6], buy![12], sell![6], sell![12]]).toEqual(['BUY', 'BTC', 'SELL', 'USDT']);
    const held = new D(buy![9]!).minus(buy![11]!); // the base fee comes off what was bought
    const sold = new D(sell![9]!);
    expect(sold.toFixed()).toBe(held.toDecimalPlaces(6, D.ROUND_DOWN).toFixed()); // what the step lets it sell
    // The entry's cost for the quantity sold (its share of what was held), the exit's net quote.
    const cost = new D(buy![10]!).mul(sold).div(held);
    const pnl = new D(sell![10]!).minus(sell![11]!).minus(cost);
    const summary = JSON.parse(read(out, 'summary.json')) as BacktestSummary;
    expect(summary.trades).toEqual([
      {
        instance: 'round-trip-test',
        symbol: 'BTCUSDT',
        direction: 'long',
        entryTime: buy![0],
        exitTime: sell![0],
        durationMs: Date.parse(sell![0]!) - Date.parse(buy![0]!),
        entryPrice: new D(buy![8]!).toFixed(),
        exitPrice: new D(sell![8]!).toFixed(),
        quantity: sold.toFixed(),
        pnl: pnl.toDecimalPlaces(8).toFixed(),
        pnlPct: pnl.div(cost).mul(100).toFixed(4),
        entryTag: 'in',
        exitTag: 'out',
      },
    ]);
    expect(summary.metrics.roundTrips).toBe(1);
    expect(summary.metrics.expectancy).toBe(pnl.toDecimalPlaces(8).toFixed());
    // Machine outputs keep the digits people are spared, and say so: the printed table rounds the expectancy to
    // the quote's precision, summary.json and trades.csv keep the PnL's own places (more than the quote's).
    expect(summary.precision).toBe('full');
    expect(pnl.decimalPlaces()).toBeGreaterThan(summary.period.quotePrecision);
    expect(r.out.join('\n')).toMatch(
      new RegExp(
        `expectancy \\(quote\\) +${pnl.toDecimalPlaces(summary.period.quotePrecision).toFixed(summary.period.quotePrecision)}\\b`,
      ),
    );
    const t = summary.trades[0]!;
    expect(read(out, 'trades.csv')).toBe(
      'instance,symbol,direction,entry_time,exit_time,duration_ms,entry_price,exit_price,quantity,pnl,pnl_pct,entry_tag,exit_tag\n' +
        `round-trip-test,BTCUSDT,long,${t.entryTime},${t.exitTime},${t.durationMs},${t.entryPrice},${t.exitPrice},${t.quantity},${t.pnl},${t.pnlPct},in,out\n`,
    );
  });

  it('refuses an unknown --export, naming the flag', async () => {
    const r = await bot(['--config', 'config/grid-btcusdt.json', '--data', SAMPLE, '--export', 'orders']);
    expect(r.code).toBe(2);
    expect(r.err).toEqual(["backtest: --export: unknown export 'orders' (known: trades)"]);
  });
});
