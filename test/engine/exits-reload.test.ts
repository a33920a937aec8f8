/**
 * A reload of the strategy files applies changed `exits` and `protections` to the running instance: the
 * operator's reload (operator/actions.ts, what POST /api/v1/reload and /reload call) on the real engine over the
 * real matching engine, with the strategy files on disk. A stop held on the exchange is cancelled and placed at
 * the new level once (and cancelled when no longer declared); a trailing stop keeps its high and applies its new
 * distance from the next tick; a protection keeps its window across a reload that does not change it, and a
 * changed one counts the journal's trades as a start would. Each change is journaled (`exits-changed`, and the
 * operator's `reload` event names the instances).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { reenterFile as file, TEST_STRATEGIES } from '../e2e/daemon-process.js';
import { Harness, operatorActions } from './harness.js';

let h: Harness | undefined;
/** A harness running the strategy file `content` from its config folder, and the operator's reload of it. */
async function running(content: string) {
  h = new Harness({ balances: { USDT: '10000' } });
  const harness = h;
  const configDir = join(h.dir, 'config');
  mkdirSync(configDir);
  writeFileSync(join(configDir, 'x.json'), content);
  const instances = await loadStrategyFiles(configDir, { strategiesDir: TEST_STRATEGIES });
  h.price(20_000);
  const engine = await h.start(instances);
  const actions = operatorActions(h, engine, { configDir, strategiesDir: TEST_STRATEGIES, instances });
  return {
    h: harness,
    reload: (next: string) => {
      writeFileSync(join(configDir, 'x.json'), next);
      return actions.reloadStrategyFiles({ source: 'test' });
    },
  };
}

interface HeldRow {
  type: string;
  status: string;
  stop_price: string;
  quantity: string;
}

const held = (h: Harness) =>
  h.store.db
    .prepare("SELECT type, status, stop_price, quantity FROM orders WHERE tag = 'exit:stop-loss' ORDER BY seq")
    .all() as HeldRow[];
const live = (rows: HeldRow[]) => rows.filter((r) => ['OPEN', 'NEW', 'PENDING'].includes(r.status));
const entry = (h: Harness) => Number(h.store.fills.forInstance('x')[0]!.price) / 0.999; // fee taken in BTC
const watch = (h: Harness) => JSON.parse(h.store.state.get('x/exits') ?? '{}') as { peak?: number };

describe('reload of exits and protections', () => {
  it('re-places a held stop at the new level once, and cancels it when the stop is no longer declared', async () => {
    const run = await running(file({ entries: 1, exits: { stopLossPct: 2 } }));
    const { h } = run;
    await h.tick(20_000);
    await h.tick(20_000);
    expect(live(held(h))).toHaveLength(1);
    const avg = entry(h);
    expect(Number(held(h)[0]!.stop_price)).toBeCloseTo(avg * 0.98, 1);

    const result = await run.reload(file({ entries: 1, exits: { stopLossPct: 3 } }));
    expect(result).toMatchObject({
      changed: true,
      outcome: 'reconfigured x',
      details: { reconfigured: ['x'], exitsChanged: ['x'] },
    });
    // The old stop cancelled on the exchange, the new one placed at 3 %, through the order path.
    const rows = held(h);
    expect(rows.map((r) => r.status)).toEqual(['CANCELED', 'OPEN']);
    expect(Number(rows[1]!.stop_price)).toBeCloseTo(avg * 0.97, 1);
    expect(rows[1]!.quantity).toBe(rows[0]!.quantity);
    // Exactly once: the polls after it and a reload that changes nothing place nothing more.
    for (let i = 0; i < 3; i++) await h.tick(20_000);
    expect(await run.reload(file({ entries: 1, exits: { stopLossPct: 3 } }))).toMatchObject({
      changed: false,
      outcome: 'nothing changed',
    });
    await h.tick(20_000);
    expect(held(h).map((r) => r.status)).toEqual(['CANCELED', 'OPEN']);
    expect(h.events('exits-changed').map((e) => e.data)).toEqual([{ exits: { stopLossPct: 3 }, protections: {} }]);

    // The stop taken away: the held order goes, none comes back.
    await run.reload(file({ entries: 1, exits: { trailingStopPct: 5 } }));
    await h.tick(20_000);
    expect(held(h).map((r) => r.status)).toEqual(['CANCELED', 'CANCELED']);
    expect(h.events('exits-changed')).toHaveLength(2);
    const operator = h.events('operator').filter((e) => e.data.action === 'reload');
    expect(operator.map((e) => (e.data.details as { exitsChanged: string[] }).exitsChanged)).toEqual([
      ['x'],
      [],
      ['x'],
    ]);
  });

  it('a roi "0" row added or removed swaps the held STOP_LIMIT and the OCO bracket, once each way', async () => {
    const run = await running(file({ entries: 1, exits: { stopLossPct: 2 } }));
    const { h } = run;
    await h.tick(20_000);
    await h.tick(20_000);
    const sells = () =>
      h.store.db
        .prepare("SELECT type, tag, status, price, stop_price AS stop FROM orders WHERE side = 'SELL' ORDER BY seq")
        .all() as { type: string; tag: string; status: string; price: string; stop: string }[];
    expect(sells().map((r) => `${r.type} ${r.tag} ${r.status}`)).toEqual(['STOP_LIMIT exit:stop-loss OPEN']);
    const avg = entry(h);
    // A take-profit at 3 %: the stop becomes an OCO bracket at the same stop, its limit leg at the target.
    await run.reload(file({ entries: 1, exits: { stopLossPct: 2, roi: { '0': 3 } } }));
    for (let i = 0; i < 3; i++) await h.tick(20_000);
    expect(sells().map((r) => `${r.type} ${r.tag} ${r.status}`)).toEqual([
      'STOP_LIMIT exit:stop-loss CANCELED',
      'OCO exit:bracket OPEN',
    ]);
    const bracket = sells()[1]!;
    expect(Number(bracket.stop)).toBeCloseTo(avg * 0.98, 1);
    expect(Number(bracket.price)).toBeCloseTo(avg * 1.03, 1);
    // Taken away again: back to a STOP_LIMIT, once.
    await run.reload(file({ entries: 1, exits: { stopLossPct: 2 } }));
    for (let i = 0; i < 3; i++) await h.tick(20_000);
    expect(sells().map((r) => `${r.type} ${r.tag} ${r.status}`)).toEqual([
      'STOP_LIMIT exit:stop-loss CANCELED',
      'OCO exit:bracket CANCELED',
      'STOP_LIMIT exit:stop-loss OPEN',
    ]);
    expect(h.store.fills.forInstance('x').filter((f) => f.side === 'SELL')).toEqual([]);
  });

  it('a held stop tightened above the price: the next tick sells at market once, the held order cancelled first', async () => {
    const run = await running(file({ entries: 1, exits: { stopLossPct: 2 } }));
    const { h } = run;
    await h.tick(20_000);
    await h.tick(20_000);
    await h.tick(19_900);
    expect(live(held(h))).toHaveLength(1);
    // 0.2 % under the entry (fee included, about 19,980): the price, 19,900, is already through it.
    await run.reload(file({ entries: 1, exits: { stopLossPct: 0.2 } }));
    await h.tick(19_900);
    await h.tick(19_900);
    expect(h.events('exit-triggered').map((e) => e.data.reason)).toEqual(['stop-loss']);
    const sells = h.store.db.prepare("SELECT type, tag, status FROM orders WHERE side = 'SELL' ORDER BY seq").all() as {
      type: string;
      tag: string;
      status: string;
    }[];
    expect(sells).toEqual([
      { type: 'STOP_LIMIT', tag: 'exit:stop-loss', status: 'CANCELED' },
      { type: 'MARKET', tag: 'exit:stop-loss', status: 'FILLED' },
    ]);
    expect(h.store.fills.forInstance('x').filter((f) => f.side === 'SELL')).toHaveLength(1);
  });

  it("keeps a trailing stop's high across the reload and applies the new distance from the next tick", async () => {
    const run = await running(file({ entries: 1, exits: { trailingStopPct: 5, trailingActivationPct: 1 } }));
    const { h } = run;
    await h.tick(20_000);
    await h.tick(20_000);
    await h.tick(21_000);
    await run.reload(file({ entries: 1, exits: { trailingStopPct: 2, trailingActivationPct: 1 } }));
    expect(watch(h).peak).toBe(21_000);
    // 2 % under the high kept (21,000) is 20,580: 20,700 sells nothing, 20,500 sells (5 % would be 19,950).
    await h.tick(20_700);
    expect(h.events('exit-triggered')).toEqual([]);
    await h.tick(20_500);
    expect(h.events('exit-triggered').map((e) => e.data)).toEqual([
      expect.objectContaining({ reason: 'trailing-stop', price: 20_500, level: 20_580 }),
    ]);
  });

  const count = (h: Harness, side: 'BUY' | 'SELL') =>
    h.store.fills.forInstance('x').filter((f) => f.side === side).length;

  /** One losing trade: bought at `at` (unless held already), armed 1.5 % up, stopped out 1 % under that high; flat after. */
  async function losingTrade(h: Harness, at: number) {
    const sold = count(h, 'SELL');
    for (let i = 0; i < 3 && count(h, 'BUY') === sold; i++) await h.tick(at);
    expect(count(h, 'BUY')).toBe(sold + 1);
    await h.tick(at * 1.015);
    for (let i = 0; i < 3 && count(h, 'SELL') === sold; i++) await h.tick(at * 0.995);
    expect(count(h, 'SELL')).toBe(sold + 1);
  }

  const losing = { losingTrades: { count: 2, windowMinutes: 60, pauseMinutes: 30 } };

  it("keeps a protection's window across a reload that changes only the exits", async () => {
    const run = await running(file({ entries: 1_000, exits: { trailingStopPct: 1 }, protections: losing }));
    const { h } = run;
    await losingTrade(h, 20_000);
    expect(h.events('exit-triggered')).toHaveLength(1);
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1.2 }, protections: losing }));
    expect(h.events('protection-tripped')).toEqual([]);
    // The second loss, after the reload, is the second in the window: it trips.
    await losingTrade(h, 19_900);
    expect(h.events('protection-tripped').map((e) => e.data.protection)).toEqual(['losingTrades']);
  });

  it('a changed protection counts the trades in the journal at once; one no longer declared is lifted', async () => {
    const run = await running(file({ entries: 1_000, exits: { trailingStopPct: 1 }, protections: losing }));
    const { h } = run;
    await losingTrade(h, 20_000);
    const one = { losingTrades: { count: 1, windowMinutes: 60, pauseMinutes: 30 } };
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1 }, protections: one }));
    expect(h.events('protection-tripped').map((e) => e.data.reason)).toEqual([
      '1 losing trades within 60 min (protections.losingTrades)',
    ]);
    const buys = () => count(h, 'BUY');
    const bought = buys();
    await h.tick(19_900);
    await h.tick(19_900);
    expect(buys()).toBe(bought);
    // Taken away: lifted at once (recorded), and the next tick may enter again.
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1 } }));
    expect(h.events('protection-lifted').map((e) => e.data)).toEqual([
      { protection: 'losingTrades', reason: 'no longer declared' },
    ]);
    await h.tick(19_900);
    await h.tick(19_900);
    expect(buys()).toBe(bought + 1);
  });

  it('a running cooldown, recorded as a protection tripped, is lifted when no longer declared', async () => {
    const cooling = { cooldownMinutes: 60 };
    const run = await running(file({ entries: 1_000, exits: { trailingStopPct: 1 }, protections: cooling }));
    const { h } = run;
    await losingTrade(h, 20_000);
    const [tripped] = h.events('protection-tripped');
    expect(h.events('protection-tripped')).toHaveLength(1);
    expect(tripped!.data).toEqual({
      protection: 'cooldown',
      until: tripped!.time + 60 * 60_000,
      reason: 'cooldown of 60 min after a stop-out (trailing-stop) (protections.cooldownMinutes)',
    });
    const bought = count(h, 'BUY');
    await h.tick(19_900);
    expect(count(h, 'BUY')).toBe(bought);
    // A reload that keeps it changes nothing; one that takes it away lifts it (recorded) and entries go again.
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1.5 }, protections: cooling }));
    expect(h.events('protection-lifted')).toEqual([]);
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1.5 } }));
    expect(h.events('protection-lifted').map((e) => e.data)).toEqual([
      { protection: 'cooldown', reason: 'no longer declared' },
    ]);
    await h.tick(19_900);
    await h.tick(19_900);
    expect(count(h, 'BUY')).toBe(bought + 1);
    // Declared again and taken away with no cooldown running: nothing to lift.
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1.5 }, protections: cooling }));
    await run.reload(file({ entries: 1_000, exits: { trailingStopPct: 1.5 } }));
    expect(h.events('protection-lifted')).toHaveLength(1);
  });
});
