/**
 * Declared exits and protections in a backtest (the real command, engine and matching engine over the sample's
 * fall of March 9-10): a strategy that is always long, its stop-loss declared in its strategy file, is stopped
 * out by the stop the engine holds on the simulated exchange, each exit a STOP_LIMIT filled between its own
 * limit and stop (or at market where the price gapped under its limit, the held one cancelled first), one per
 * entry; and with protections.losingTrades the entries stop after the losses, refused
 * with the protection's reason, as on paper and live.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempProject } from '../config/temp-project.js';
import { bot, sliceFlags, tempDir } from './fixtures.js';

const project = tempProject();
const out = tempDir();
afterAll(() => {
  project.remove();
  rmSync(out, { recursive: true, force: true });
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

/** orders.csv as records (no field of these runs holds a comma). */
function orders(dir: string): Record<string, string>[] {
  const [head, ...lines] = readFileSync(join(dir, 'orders.csv'), 'utf8').trim().split('\n');
  const keys = head!.split(',');
  return lines.map((l): Record<string, string> => {
    const values = l.split(',');
    return Object.fromEntries(keys.map((k, i): [string, string] => [k, values[i] ?? '']));
  });
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
    // price gapped under that limit, a MARKET sell right after the held one was cancelled.
    expect(exits.length).toBeGreaterThan(3);
    const sellRows = rows.filter((o) => o.side === 'SELL');
    for (const o of exits) {
      if (o.type === 'MARKET') {
        expect(sellRows[sellRows.indexOf(o) - 1]).toMatchObject({ type: 'STOP_LIMIT', status: 'CANCELED' });
        continue;
      }
      expect(o.type).toBe('STOP_LIMIT');
      expect(Number(o.avg_price)).toBeLessThanOrEqual(Number(o.stop_price));
      expect(Number(o.avg_price)).toBeGreaterThanOrEqual(Number(o.price));
    }
    expect(exits.filter((o) => o.type === 'STOP_LIMIT').length).toBeGreaterThan(exits.length / 2);
    // One exit per entry: never two sells of one position.
    const sells = rows.filter((o) => o.side === 'SELL' && Number(o.filled_qty) > 0);
    expect(sells.length).toBeLessThanOrEqual(entries.length);
    expect(sells.length).toBeGreaterThanOrEqual(entries.length - 1);
    const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
      trades: { exitTag: string | null }[];
    };
    expect(summary.trades.filter((t) => t.exitTag === 'exit:stop-loss').length).toBe(exits.length);
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
});
