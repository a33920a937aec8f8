/**
 * Getting out, end to end: a paper daemon (a real process, the embedded simulated exchange) holding a position
 * from the exit-target strategy. Stop-buy through the API refuses the strategy's entries while the exit's SELL
 * goes out; the exit (asked with /exit on a stand-in of Telegram's Bot API, then again through the API) pauses the instance, cancels its open orders, sells the position less dust and answers
 * what it sent; asking again sends nothing. Then kill -9 in the middle of an exit (after the cancels, after
 * the sell is journaled, after it is sent) and a restart on the same database: the exit finishes by itself,
 * and the paper exchange holds exactly one exit SELL.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { D, type Dec } from '../../src/market/decimal.js';
import { BotApi } from '../notify/stand-ins.js';
import { DaemonProcess, http, journal, lockstepPaperEnv, paperOrders, readDb, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const TOKEN = 'e2e-exit-token-0c4d1e';
const BOT_TOKEN = '4343:e2e-exit-telegram-token';
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ActionBody = z.object({
  ok: z.literal(true),
  action: z.string(),
  changed: z.boolean(),
  outcome: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});

const strategyFile = (dips: boolean) =>
  JSON.stringify({ name: 'x', strategy: 'exit-target', symbol: 'BTCUSDT', schedule: '* * * * * *', params: { dips } });

async function paperDaemon(dips: boolean, extra: Record<string, string> = {}) {
  const dir = tempDir('e2e-exit');
  dirs.push(dir);
  const port = await freePort();
  const env = await lockstepPaperEnv(
    dir,
    { 'x.json': strategyFile(dips) },
    { period: 17, count: 3_000, amplitudePct: 0.5 },
    { API_PORT: String(port), API_TOKEN: TOKEN, RECONCILE_WINDOW_MS: '2000' },
  );
  const db = join(dir, 'bot.db');
  const base = `http://127.0.0.1:${port}`;
  const api = (path: string, options: Parameters<typeof http>[1] = {}) =>
    http(`${base}${path}`, { token: TOKEN, ...options });
  return { dir, db, env, base, api, start: () => new DaemonProcess({ ...env, ...extra }) };
}

/** The journal's rows of instance x with a tag, and the instance's net position from its fills. */
const rows = (db: string, tag: string) => journal(db).filter((r) => r.tag === tag);
/** The instance's position as the daemon reports it (fees in the base asset taken off). */
async function position(api: (path: string) => ReturnType<typeof http>): Promise<Dec> {
  const status = (await api('/api/v1/status')).body as { instances: { position: { quantity: string } }[] };
  return new D(status.instances[0]?.position.quantity ?? 'NaN');
}
/** Waits for the entry to fill, the strategy's two orders to rest (no dips) and the control API: the position. */
async function holding(run: Awaited<ReturnType<typeof paperDaemon>>, daemon: DaemonProcess): Promise<Dec> {
  await waitFor(
    'the entry filled and the orders resting',
    () => rows(run.db, 'entry')[0]?.status === 'FILLED' && rows(run.db, 'dip').length === 1,
    { daemon },
  );
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  const held = await position(run.api);
  expect(held.gt(0)).toBe(true);
  return held;
}

/** Orders on the paper exchange's own ledger that are exit SELLs (MARKET SELLs: the strategy places none). */
function paperMarketSells(db: string): number {
  return paperOrders(db, 'SELL').filter((o) => o.type === 'MARKET').length;
}

const STEP = new D('0.000001');

describe('manual exit and stop-buy on a paper daemon', () => {
  it('stop-buy refuses entries and lets the exit out; the exit (/exit on Telegram) sells the position once and says what it sent', async () => {
    const bot = await BotApi.start(BOT_TOKEN);
    const run = await paperDaemon(true, {
      TELEGRAM_BOT_TOKEN: BOT_TOKEN,
      TELEGRAM_CHAT_ID: '111',
      TELEGRAM_API_URL: bot.url,
    });
    const daemon = run.start();
    try {
      await waitFor(
        'the entry filled and a dip resting',
        () => rows(run.db, 'entry')[0]?.status === 'FILLED' && rows(run.db, 'dip-0').length > 0,
        { daemon },
      );
      await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });

      const on = ActionBody.parse((await run.api('/api/v1/stop-buy', { method: 'PUT', body: { on: true } })).body);
      expect(on).toMatchObject({ action: 'stop-buy', changed: true, outcome: 'on' });
      const again = ActionBody.parse((await run.api('/api/v1/stop-buy', { method: 'PUT', body: { on: true } })).body);
      expect(again).toMatchObject({ changed: false, outcome: 'already on' });
      const bad = await run.api('/api/v1/stop-buy', { method: 'PUT', body: { on: 'yes' } });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(bad.body)).toContain('body.on');

      const stopAt = readDb(
        run.db,
        (d) => d.prepare("SELECT MAX(time) FROM events WHERE kind = 'stop-buy'").pluck().get() as number,
      );
      await waitFor(
        'an entry refused by stop-buy',
        () =>
          readDb(
            run.db,
            (d) =>
              d
                .prepare("SELECT COUNT(*) FROM events WHERE kind = 'refused' AND data LIKE '%stop-buy is on%'")
                .pluck()
                .get() as number,
          ) >= 1,
        { daemon },
      );
      // Repeats of a refusal are counted rather than recorded: every tick's entry is refused.
      const refused = async () =>
        Number(
          /^spot_bot_orders_refused_total\{[^}]*\} (\d+)$/m.exec(
            (await http(`${run.base}/metrics`)).body as string,
          )?.[1],
        );
      const firstCount = await refused();
      for (let i = 0; i < 100 && (await refused()) < firstCount + 2; i++) await new Promise((r) => setTimeout(r, 100));
      expect(await refused()).toBeGreaterThanOrEqual(firstCount + 2);
      const status = (await run.api('/api/v1/status')).body as { stopBuy: { on: boolean } };
      expect(status.stopBuy.on).toBe(true);
      const metrics = (await http(`${run.base}/metrics`)).body as string;
      expect(metrics).toMatch(/^spot_bot_stop_buy 1$/m);

      const held = await position(run.api);
      expect(held.gt(0)).toBe(true);
      // The exit asked on Telegram: the chat's answer says what was sent and what was cancelled, once.
      bot.say(111, '/exit x');
      // Replies share the chat's rate limit (one a second) with its notifications.
      const answer = await waitFor(
        'the exit answered on Telegram',
        () => bot.sent.find((m) => m.text.startsWith('PAPER · exit x:')),
        { daemon },
      );
      expect(answer.text).toMatch(/^PAPER · exit x: sent MARKET SELL 0\.00\d+ BTCUSDT as x-\d+ \(\w+\)/);
      expect(answer.text).toMatch(/cancelled x-\d+/);
      // Entries stopped at once: no BUY journaled after stop-buy went on.
      expect(
        journal(run.db).filter(
          (r) => r.tag?.startsWith('dip-') && (r as unknown as { created_at: number }).created_at > stopAt,
        ),
      ).toEqual([]);

      await waitFor('the exit filled', () => rows(run.db, 'exit')[0]?.status === 'FILLED', { daemon });
      expect((await position(run.api)).abs().lt(STEP)).toBe(true);
      expect(journal(run.db).filter((r) => ['OPEN', 'PARTIALLY_FILLED', 'PENDING'].includes(r.status))).toEqual([]);
      const instance = (
        (await run.api('/api/v1/instances')).body as { instances: { instance: string; state: string }[] }
      ).instances[0];
      expect(instance).toMatchObject({ instance: 'x', state: 'paused' });

      const twice = ActionBody.parse(
        (await run.api('/api/v1/instances/x/exit', { method: 'POST', body: { type: 'market' } })).body,
      );
      expect(twice).toMatchObject({ changed: false });
      expect(twice.outcome).toMatch(/^nothing to sell: flat/);
      expect(rows(run.db, 'exit')).toHaveLength(1);
      expect(paperMarketSells(run.db)).toBe(1);
      expect(bot.sent.filter((m) => m.text.startsWith('PAPER · exit x:'))).toHaveLength(1);

      const limitless = await run.api('/api/v1/instances/x/exit', { method: 'POST', body: { type: 'limit' } });
      expect(limitless.status).toBe(400);
      expect(JSON.stringify(limitless.body)).toMatch(/body|price/);
      const nobody = await run.api('/api/v1/instances/nobody/exit', { method: 'POST', body: { type: 'market' } });
      expect(nobody.status).toBe(404);
      const journaled = readDb(
        run.db,
        (d) => d.prepare("SELECT data FROM events WHERE kind = 'operator'").pluck().all() as string[],
      );
      const exits = journaled.filter((j) => j.includes('"action":"exit"'));
      expect(exits.filter((j) => j.includes('"source":"telegram:111"') && j.includes('sent MARKET SELL'))).toHaveLength(
        1,
      );
      expect(exits.filter((j) => j.includes('"source":"api 127.0.0.1"')).length).toBeGreaterThanOrEqual(1);
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      await bot.close();
    }
  }, 150_000);

  it('a limit exit rests a SELL of the position at the price asked, up onto the tick, and says so; asking again sends nothing while it works', async () => {
    const run = await paperDaemon(false);
    const daemon = run.start();
    try {
      const held = await holding(run, daemon);
      const last = (await run.api('/api/v1/status')).body as { lastPrices: { price: string }[] };
      // 3 % over the last price (the data swing 0.5 %: it rests), a thousandth of a cent past the tick.
      const asked = new D(last.lastPrices[0]!.price).mul('1.03').toDecimalPlaces(2).plus('0.004');
      const exit = await run.api('/api/v1/instances/x/exit', {
        method: 'POST',
        body: { type: 'limit', price: asked.toFixed() },
      });
      expect(exit.status).toBe(200);
      const answer = ActionBody.parse(exit.body);
      const onTick = asked.toDecimalPlaces(2, D.ROUND_UP).toFixed();
      expect(answer.outcome).toMatch(
        new RegExp(
          `^sent LIMIT at ${onTick.replace('.', '\\.')} SELL 0\\.00\\d+ BTCUSDT as x-\\d+ \\(OPEN\\); cancelled x-\\d+, x-\\d+$`,
        ),
      );
      const [sell] = rows(run.db, 'exit');
      expect(sell).toMatchObject({ side: 'SELL', type: 'LIMIT', price: onTick, status: 'OPEN' });
      expect(new D(sell!.quantity!).lte(held)).toBe(true);
      const again = ActionBody.parse(
        (await run.api('/api/v1/instances/x/exit', { method: 'POST', body: { type: 'market' } })).body,
      );
      expect(again).toMatchObject({ changed: false, outcome: `already exiting: ${sell!.local_id} working` });
      expect(rows(run.db, 'exit')).toHaveLength(1);
      expect(paperMarketSells(run.db)).toBe(0);
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    }
  }, 60_000);

  it.each(['exit-after-cancel', 'after-journal:4', 'after-send:4'])(
    'finishes an exit killed -9 at %s after the restart, with exactly one exit SELL on the exchange',
    async (point) => {
      const run = await paperDaemon(false, { BOT_TEST_HOOKS: '1', BOT_CRASH_AT: point });
      const daemon = run.start();
      await holding(run, daemon);
      await run.api('/api/v1/instances/x/exit', { method: 'POST', body: { type: 'market' } }).catch(() => undefined);
      expect(await daemon.exited).toEqual({ code: null, signal: 'SIGKILL' });

      const restarted = new DaemonProcess(run.env);
      try {
        await waitFor(
          'the interrupted exit finished',
          () =>
            readDb(
              run.db,
              (d) => d.prepare("SELECT data FROM events WHERE kind = 'operator'").pluck().all() as string[],
            ).find((j) => j.includes('"action":"exit"')),
          { daemon: restarted },
        );
        await waitFor('the control API', () => restarted.messages(/control API and dashboard on/).length > 0, {
          daemon: restarted,
        });
        await waitFor('the exit filled', () => rows(run.db, 'exit').some((r) => r.status === 'FILLED'), {
          daemon: restarted,
        });
        expect((await position(run.api)).abs().lt(STEP)).toBe(true);
        expect(paperMarketSells(run.db)).toBe(1);
        const exits = rows(run.db, 'exit');
        expect(exits.filter((r) => r.status === 'FILLED')).toHaveLength(1);
        expect(exits.every((r) => ['FILLED', 'NOT_PLACED'].includes(r.status))).toBe(true);
        const op = readDb(
          run.db,
          (d) => d.prepare("SELECT data FROM events WHERE kind = 'operator' ORDER BY id DESC").pluck().get() as string,
        );
        expect(op).toContain('restart (interrupted exit asked by api 127.0.0.1)');
        const instance = ((await run.api('/api/v1/instances')).body as { instances: { state: string }[] }).instances[0];
        expect(instance?.state).toBe('paused');
      } finally {
        expect(await restarted.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      }
    },
    120_000,
  );
});
