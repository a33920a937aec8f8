/**
 * The daemon's HTTP face end to end: a real daemon process on paper (the embedded simulated exchange),
 * driven over HTTP as an operator would. Auth, every endpoint's shape, pause and resume checked against the
 * simulated exchange's own order list, the kill switch file, a reload with a broken file, and metrics that
 * match the database. /readyz against a venue that goes away is in readiness.test.ts.
 */
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ExchangeClient } from '../../src/exchange/client.js';
import { DEMO_CREDENTIALS } from '../../src/sim/sim-server.js';
import { familyOf, parseExposition, sampleSum } from '../support/prometheus-text.js';
import { DaemonProcess, everyOrderFile, http, readDb, fillCount, waitFor, lockstepPaperEnv } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const TOKEN = 'e2e-token-5f1c2a9b7d3e';
const dir = tempDir('e2e-api');
const db = join(dir, 'bot.db');
const config = join(dir, 'config');
const killFile = join(dir, 'KILL');
let daemon: DaemonProcess;
let base: string;
let sim: ExchangeClient;

const api = (path: string, options: Parameters<typeof http>[1] = {}) =>
  http(`${base}${path}`, { token: TOKEN, ...options });

/** Every order the simulated exchange holds, open or closed, by its id. */
async function simOrderIds(): Promise<Set<string>> {
  const ids = new Set((await sim.openOrders('BTCUSDT')).map((o) => o.displayingId));
  for (let page = 1; ; page++) {
    const records = await sim.orderHistory({ symbol: 'BTCUSDT', page, pageSize: 100 });
    for (const r of records) ids.add(r.displayingId);
    if (records.length < 100) break;
  }
  return ids;
}

const metric = sampleSum;

const marketRuns = async () =>
  metric((await http(`${base}/metrics`)).body as string, 'spot_bot_job_runs_total', {
    bot_job: 'market',
    schedule: '* * * * * *',
  });

const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });
const ActionBody = z.object({ ok: z.literal(true), action: z.string(), changed: z.boolean(), outcome: z.string() });
const Order = z.object({
  localId: z.string(),
  instance: z.string().nullable(),
  exchangeId: z.string().nullable(),
  symbol: z.string(),
  side: z.enum(['BUY', 'SELL']),
  type: z.string(),
  status: z.string(),
  price: z.string().nullable(),
  quantity: z.string().nullable(),
  createdAt: z.string(),
});
const Fill = z.object({
  fillKey: z.string(),
  orderLocalId: z.string(),
  instance: z.string().nullable(),
  symbol: z.string(),
  side: z.enum(['BUY', 'SELL']),
  price: z.string().regex(/^\d+(\.\d+)?$/),
  quantity: z.string(),
  fee: z.string(),
  time: z.string(),
});
const Instance = z.object({
  instance: z.string(),
  state: z.enum(['running', 'paused', 'stopped', 'refused', 'unknown']),
  reason: z.string().nullable(),
  openOrders: z.array(Order),
  todaysFills: z.array(Fill),
  position: z.object({ quantity: z.string(), averagePrice: z.string() }),
  realisedPnl: z.string(),
  unrealisedPnl: z.string().nullable(),
});
const Status = z.object({
  time: z.string(),
  daemon: z.object({ state: z.literal('running'), mode: z.literal('paper'), pid: z.number() }),
  instances: z.array(Instance),
  lastPrices: z.array(z.object({ symbol: z.string(), price: z.string(), time: z.string() })),
  killSwitch: z.object({ on: z.boolean(), file: z.string(), filePresent: z.boolean() }),
  authHalted: z.boolean(),
  recentActions: z.array(z.object({ kind: z.literal('operator'), data: z.record(z.string(), z.unknown()) })),
});

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  daemon = new DaemonProcess(
    await lockstepPaperEnv(
      dir,
      { 'churn.json': everyOrderFile('churn', { churn: 100_000 }) },
      { period: 7, count: 2_000 },
      { API_PORT: String(port), API_TOKEN: TOKEN },
    ),
  );
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });
  const simUrl = await waitFor(
    'the simulated exchange URL',
    () => /simulated exchange at (http:\/\/127\.0\.0\.1:\d+)/.exec(daemon.lines.join('\n'))?.[1],
    { daemon },
  );
  sim = new ExchangeClient({ baseUrl: simUrl, apiKey: DEMO_CREDENTIALS.apiKey, apiSecret: DEMO_CREDENTIALS.apiSecret });
  await waitFor(
    'a few orders placed',
    () => readDb(db, (d) => d.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number) >= 6,
    {
      daemon,
    },
  );
});

afterAll(async () => {
  await sim?.close();
  const exit = await daemon?.stop('SIGTERM');
  expect(exit).toEqual({ code: 0, signal: null });
});

describe('the control API of a daemon on paper', () => {
  it('is open for health and metrics, and needs the token everywhere else; failures are logged once per source and lock out guessing, not the token', async () => {
    expect(await http(`${base}/healthz`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    const metrics = await http(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(metrics.body).toContain('process_cpu_seconds_total');

    const none = await http(`${base}/api/v1/status`);
    expect(none.status).toBe(401);
    expect(ErrorBody.parse(none.body).error.code).toBe('E_UNAUTHORIZED');
    expect(none.headers.get('www-authenticate')).toContain('Bearer');
    const wrong = await http(`${base}/api/v1/status`, { token: 'not-the-token-at-all' });
    expect(wrong.status).toBe(401);
    const wrongAction = await http(`${base}/api/v1/kill-switch`, { token: 'x', method: 'PUT', body: { on: true } });
    expect(wrongAction.status).toBe(401);
    expect(existsSync(killFile)).toBe(false);
    expect((await api('/api/v1/status')).status).toBe(200);

    // Ten failures from an address lock out guessing from it (429), never the operator: the right token from the
    // same address, in the same minute, is served.
    // The failures so far count (each answered 401); guesses then go on until the lockout, at most 20.
    let failures = [none, wrong, wrongAction].filter((r) => r.status === 401).length;
    while (failures < 20 && (await http(`${base}/api/v1/status`, { token: 'guess' })).status === 401) failures++;
    expect(failures).toBe(10);
    const locked = await http(`${base}/api/v1/status`, { token: 'guess' });
    expect(locked.status).toBe(429);
    expect(ErrorBody.parse(locked.body).error.code).toBe('E_TOO_MANY_FAILURES');
    expect((await api('/api/v1/status')).status).toBe(200);
    expect((await api('/api/v1/stop-buy', { method: 'PUT', body: { on: false } })).status).toBe(200);
    expect((await http(`${base}/api/v1/status`)).status).toBe(429);

    expect(daemon.messages(/authentication failed from 127\.0\.0\.1/)).toHaveLength(1);
    expect(daemon.lines.join('\n')).not.toContain(TOKEN);
    expect(daemon.lines.join('\n')).not.toContain('not-the-token-at-all');
  });

  it('answers every read with the documented shape, newest first and paged; unknown names are 404, bad queries 400', async () => {
    const status = await api('/api/v1/status');
    const parsed = Status.parse(status.body);
    expect(parsed.instances.map((i) => i.instance)).toEqual(['churn']);
    const etag = status.headers.get('etag');
    expect(etag).toBeTruthy();
    const again = await api('/api/v1/status', { headers: { 'if-none-match': etag as string } });
    expect([200, 304]).toContain(again.status);

    const instances = z
      .object({ instances: z.array(Instance.extend({ schedule: z.string() })) })
      .parse((await api('/api/v1/instances')).body);
    expect(instances.instances[0]).toMatchObject({ instance: 'churn', schedule: '* * * * * *' });

    const daemonInfo = await api('/api/v1/daemon');
    expect(daemonInfo.body).toMatchObject({
      mode: 'paper',
      // The venue by name, not the embedded exchange's random port.
      venue: 'simulated exchange (paper)',
      version: '0.1.0',
    });

    const orders = z.object({ orders: z.array(Order) }).parse((await api('/api/v1/orders?instance=churn')).body);
    expect(orders.orders.every((o) => o.instance === 'churn')).toBe(true);

    await waitFor('three fills', () => fillCount(db) >= 3, { daemon });
    const FillPage = z.object({ fills: z.array(Fill), next: z.number().nullable() });
    const first = FillPage.parse((await api('/api/v1/fills?instance=churn&limit=2')).body);
    expect(first.fills).toHaveLength(2);
    expect(first.next).not.toBeNull();
    const second = FillPage.parse((await api(`/api/v1/fills?instance=churn&limit=2&before=${first.next}`)).body);
    const keys = [...first.fills, ...second.fills].map((f) => f.fillKey);
    expect(new Set(keys).size).toBe(keys.length);
    const times = [...first.fills, ...second.fills].map((f) => Date.parse(f.time));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Rounded for people by default, and says so; precision=full gives the journal's own digits (for scripts).
    expect((await api('/api/v1/fills?instance=churn&limit=2')).body).toMatchObject({ precision: 'pair' });
    const full = z
      .object({ precision: z.literal('full'), fills: z.array(Fill) })
      .parse((await api('/api/v1/fills?instance=churn&limit=2&precision=full')).body);
    const journal = readDb(db, (d) =>
      full.fills.map((f) => d.prepare('SELECT price, qty, fee FROM fills WHERE fill_key = ?').get(f.fillKey)),
    );
    expect(full.fills.map((f) => ({ price: f.price, qty: f.quantity, fee: f.fee }))).toEqual(journal);

    const events = z
      .object({
        events: z.array(
          z.object({ id: z.number(), time: z.string(), kind: z.string(), instance: z.string().nullable() }),
        ),
        next: z.number().nullable(),
      })
      .parse((await api('/api/v1/events?limit=5')).body);
    expect(events.events.map((e) => e.id)).toEqual([...events.events.map((e) => e.id)].sort((a, b) => b - a));
    const started = z
      .object({ events: z.array(z.object({ kind: z.string() })) })
      .parse((await api('/api/v1/events?instance=churn&kind=started')).body);
    expect(started.events.map((e) => e.kind)).toEqual(['started']);

    const pnl = z
      .object({
        instances: z.record(
          z.string(),
          z.array(z.object({ time: z.number(), realised: z.string(), unrealised: z.string(), total: z.string() })),
        ),
      })
      .parse((await api('/api/v1/pnl?instance=churn')).body);
    expect(pnl.instances.churn!.length).toBeGreaterThanOrEqual(3);

    const prices = z
      .object({
        last: z.array(z.object({ symbol: z.string(), price: z.string() })),
        recent: z.record(z.string(), z.array(z.tuple([z.number(), z.number()]))),
      })
      .parse((await api('/api/v1/prices')).body);
    expect(prices.recent.BTCUSDT!.length).toBeGreaterThan(0);

    // Every asset the paper account holds, each rounded to its precision; equity per quote asset.
    const balances = z
      .object({ balances: z.array(z.object({ asset: z.string(), free: z.string(), locked: z.string() })) })
      .parse((await api('/api/v1/balances')).body);
    expect(balances.balances.map((b) => b.asset).sort()).toEqual(['BTC', 'USDC', 'USDT']);
    expect(balances.balances.find((b) => b.asset === 'USDC')).toMatchObject({ free: '10000', locked: '0' });
    const equity = z
      .object({ quotes: z.array(z.object({ quoteAsset: z.string(), equity: z.string().nullable() })) })
      .parse((await api('/api/v1/equity')).body);
    expect(equity.quotes.map((q) => q.quoteAsset)).toEqual(['USDT']);
    expect(Number(equity.quotes[0]?.equity)).toBeGreaterThan(9_000);
    // Clearing an authentication halt when there is none: answered, changes nothing.
    const halt = ActionBody.parse((await api('/api/v1/halt/clear', { method: 'POST' })).body);
    expect(halt).toMatchObject({ action: 'halt-clear', changed: false, outcome: 'not halted' });

    const unknown = await api('/api/v1/orders?instance=nope');
    expect(unknown.status).toBe(404);
    expect(ErrorBody.parse(unknown.body).error.code).toBe('E_UNKNOWN_INSTANCE');
    const badLimit = await api('/api/v1/fills?limit=abc');
    expect(badLimit.status).toBe(400);
    expect(ErrorBody.parse(badLimit.body).error).toMatchObject({
      code: 'E_BAD_REQUEST',
      message: expect.stringContaining('query.limit') as string,
    });
    const badPause = await api('/api/v1/instances/nope/pause', { method: 'POST' });
    expect(badPause.status).toBe(404);
    expect(ErrorBody.parse(badPause.body).error.code).toBe('E_UNKNOWN_INSTANCE');
    const badOrder = await api('/api/v1/orders/nope-1', { method: 'DELETE' });
    expect(badOrder.status).toBe(404);
    expect(ErrorBody.parse(badOrder.body).error.code).toBe('E_UNKNOWN_ORDER');
    expect((await api('/api/v1/nothing-here')).status).toBe(404);
  });

  it('lists closed trades newest first, paged, and profit per period in the quote asset, rounded to the pair', async () => {
    const closed = async () => ((await api('/api/v1/trades')).body as { trades: unknown[] }).trades.length;
    for (let i = 0; i < 300 && (await closed()) < 3; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await closed()).toBeGreaterThanOrEqual(3);
    const Trade = z.object({
      id: z.number(),
      instance: z.literal('churn'),
      symbol: z.literal('BTCUSDT'),
      quoteAsset: z.literal('USDT'),
      direction: z.enum(['long', 'short']),
      // BTCUSDT: quantity step 0.000001, tick 0.01, quote precision 2 (no float tails).
      quantity: z.string().regex(/^\d+(\.\d{1,6})?$/),
      entryPrice: z.string().regex(/^\d+(\.\d{1,2})?$/),
      exitPrice: z.string().regex(/^\d+(\.\d{1,2})?$/),
      pnl: z.string().regex(/^-?\d+(\.\d{1,2})?$/),
      pnlPct: z.string().nullable(),
      entryTime: z.string(),
      exitTime: z.string(),
      durationMs: z.number(),
      entryTag: z.string().nullable(),
      exitTag: z.string().nullable(),
    });
    const Page = z.object({ trades: z.array(Trade), next: z.number().nullable() });
    const first = Page.parse((await api('/api/v1/trades?instance=churn&limit=2')).body);
    expect(first.trades).toHaveLength(2);
    expect(first.next).toBe(first.trades[1]?.id);
    const second = Page.parse((await api(`/api/v1/trades?limit=2&before=${first.next}`)).body);
    const ids = [...first.trades, ...second.trades].map((t) => t.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(new Set(ids).size).toBe(ids.length);
    expect(first.trades[0]?.entryTag).toMatch(/^churn:\d+$|^market$|^limit$|^stop$|^oco$/);

    const profit = z
      .object({
        period: z.literal('day'),
        periods: z.array(
          z.object({
            period: z.string().regex(/^\d{4}-\d\d-\d\d$/),
            quoteAsset: z.literal('USDT'),
            trades: z.number(),
            winRatePct: z.string().nullable(),
            pnl: z.string().regex(/^-?\d+(\.\d{1,2})?$/),
            fees: z.string().regex(/^\d+(\.\d{1,2})?$/),
          }),
        ),
        totals: z.array(z.object({ quoteAsset: z.literal('USDT'), trades: z.number(), pnl: z.string() })),
      })
      .parse((await api('/api/v1/profit?period=day')).body);
    expect(profit.periods.reduce((n, p) => n + p.trades, 0)).toBe(profit.totals[0]?.trades);
    for (const period of ['week', 'month']) expect((await api(`/api/v1/profit?period=${period}`)).status).toBe(200);
    const bad = await api('/api/v1/profit?period=year');
    expect(bad.status).toBe(400);
    expect(ErrorBody.parse(bad.body).error.message).toMatch(/^query\.period: expected day, week or month/);
    expect((await api('/api/v1/trades?instance=nobody')).status).toBe(404);
    expect((await api('/api/v1/trades?limit=0')).status).toBe(400);
  });

  it('pauses an instance (nothing reaches the simulated exchange while paused) and resumes it, idempotently', async () => {
    const paused = await api('/api/v1/instances/churn/pause', { method: 'POST' });
    expect(paused.status).toBe(200);
    expect(ActionBody.parse(paused.body)).toMatchObject({ action: 'pause', changed: true, outcome: 'paused' });
    const twice = ActionBody.parse((await api('/api/v1/instances/churn/pause', { method: 'POST' })).body);
    expect(twice).toMatchObject({ changed: false, outcome: 'already paused' });
    expect(Status.parse((await api('/api/v1/status')).body).instances[0]).toMatchObject({ state: 'paused' });

    // A create in flight when the pause came may still land: count from the first market run after it.
    const runs = await marketRuns();
    await waitForAsync('a market run after the pause', async () => (await marketRuns()) > runs);
    const before = await simOrderIds();
    const journalBefore = readDb(db, (d) => d.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number);
    const from = await marketRuns();
    await waitForAsync('five market runs while paused', async () => (await marketRuns()) >= from + 5);
    expect(await simOrderIds()).toEqual(before);
    expect(readDb(db, (d) => d.prepare('SELECT COUNT(*) FROM orders').pluck().get() as number)).toBe(journalBefore);

    const resumed = ActionBody.parse((await api('/api/v1/instances/churn/resume', { method: 'POST' })).body);
    expect(resumed).toMatchObject({ changed: true, outcome: 'resumed' });
    expect(ActionBody.parse((await api('/api/v1/instances/churn/resume', { method: 'POST' })).body).changed).toBe(
      false,
    );
    await waitForAsync('an order placed after the resume', async () => (await simOrderIds()).size > before.size);

    const actions = readDb(db, (d) =>
      d.prepare("SELECT data FROM events WHERE kind = 'operator' ORDER BY id").pluck().all(),
    ).map((t) => JSON.parse(t as string) as Record<string, unknown>);
    expect(actions.filter((a) => a.instance === 'churn')).toEqual([
      expect.objectContaining({ action: 'pause', instance: 'churn', changed: true, source: 'api 127.0.0.1' }),
      expect.objectContaining({ action: 'pause', changed: false }),
      expect.objectContaining({ action: 'resume', changed: true }),
      expect.objectContaining({ action: 'resume', changed: false }),
    ]);
    const lifecycle = readDb(db, (d) =>
      d
        .prepare("SELECT kind FROM events WHERE instance = 'churn' AND kind IN ('paused', 'resumed') ORDER BY id")
        .pluck()
        .all(),
    );
    expect(lifecycle).toEqual(['paused', 'resumed']);
  });

  it('flips the kill switch through its file, idempotently; a bad body is a 400 naming the field', async () => {
    const bad = await api('/api/v1/kill-switch', { method: 'PUT', body: { on: 'yes' } });
    expect(bad.status).toBe(400);
    expect(ErrorBody.parse(bad.body).error.message).toContain('body.on');
    const on = ActionBody.parse((await api('/api/v1/kill-switch', { method: 'PUT', body: { on: true } })).body);
    expect(on).toMatchObject({ changed: true, outcome: 'on' });
    expect(existsSync(killFile)).toBe(true);
    expect(
      ActionBody.parse((await api('/api/v1/kill-switch', { method: 'PUT', body: { on: true } })).body).changed,
    ).toBe(false);
    expect(Status.parse((await api('/api/v1/status')).body).killSwitch.on).toBe(true);
    expect(metric((await http(`${base}/metrics`)).body as string, 'spot_bot_kill_switch')).toBe(1);
    await waitFor('the kill-switch event', () =>
      readDb(
        db,
        (d) =>
          d.prepare("SELECT data FROM events WHERE kind = 'kill-switch' ORDER BY id DESC LIMIT 1").pluck().get() as
            string | undefined,
      )?.includes('true'),
    );
    const off = ActionBody.parse((await api('/api/v1/kill-switch', { method: 'PUT', body: { on: false } })).body);
    expect(off).toMatchObject({ changed: true, outcome: 'off' });
    expect(existsSync(killFile)).toBe(false);
    expect(Status.parse((await api('/api/v1/status')).body).killSwitch.on).toBe(false);
  });

  it('reloads strategy files only when all are valid: a broken file changes nothing and every problem is listed', async () => {
    const original = everyOrderFile('churn', { churn: 100_000 });
    // A change that, applied, would refuse every order; and a broken second file.
    writeFileSync(
      join(config, 'churn.json'),
      JSON.stringify({ ...JSON.parse(original), risk: { maxOrderNotional: '1' } }),
    );
    writeFileSync(join(config, 'broken.json'), '{ "name": "broken", "strategy": "every-order", ');
    const refused = await api('/api/v1/reload', { method: 'POST' });
    expect(refused.status).toBe(422);
    const body = z.object({ error: z.object({ code: z.string(), problems: z.array(z.string()) }) }).parse(refused.body);
    expect(body.error.code).toBe('E_RELOAD_INVALID');
    expect(body.error.problems.join('\n')).toContain('broken.json');
    // Nothing changed: orders still go out with the old limits.
    const placed = readDb(
      db,
      (d) => d.prepare('SELECT COUNT(*) FROM orders WHERE exchange_id IS NOT NULL').pluck().get() as number,
    );
    await waitFor(
      'an order placed after the failed reload',
      () =>
        readDb(
          db,
          (d) => d.prepare('SELECT COUNT(*) FROM orders WHERE exchange_id IS NOT NULL').pluck().get() as number,
        ) > placed,
    );

    rmSync(join(config, 'broken.json'));
    writeFileSync(join(config, 'churn.json'), original);
    const same = ActionBody.parse((await api('/api/v1/reload', { method: 'POST' })).body);
    expect(same).toMatchObject({ changed: false, outcome: 'nothing changed' });
    writeFileSync(join(config, 'other.json'), everyOrderFile('other'));
    const restart = await api('/api/v1/reload', { method: 'POST' });
    expect(restart.status).toBe(409);
    expect(ErrorBody.parse(restart.body).error.code).toBe('E_RELOAD_NEEDS_RESTART');
    rmSync(join(config, 'other.json'));
  });

  it('serves metrics whose order and fill counters match the database', async () => {
    await api('/api/v1/instances/churn/pause', { method: 'POST' });
    await waitForAsync('metrics equal to the database counts', async () => {
      const text = (await http(`${base}/metrics`)).body as string;
      const counts = readDb(db, (d) => ({
        placed: d.prepare('SELECT COUNT(*) FROM orders WHERE exchange_id IS NOT NULL').pluck().get() as number,
        filled: d.prepare("SELECT COUNT(*) FROM orders WHERE status = 'FILLED'").pluck().get() as number,
        fills: d.prepare('SELECT COUNT(*) FROM fills').pluck().get() as number,
        buys: d.prepare("SELECT COUNT(*) FROM fills WHERE side = 'BUY'").pluck().get() as number,
      }));
      const seen = {
        placed: metric(text, 'spot_bot_orders_placed_total', { bot_instance: 'churn' }),
        filled: metric(text, 'spot_bot_orders_filled_total', { bot_instance: 'churn' }),
        fills: metric(text, 'spot_bot_fills_total', { bot_instance: 'churn' }),
        buys: metric(text, 'spot_bot_fills_total', { bot_instance: 'churn', side: 'BUY' }),
      };
      return counts.placed > 0 && JSON.stringify(seen) === JSON.stringify(counts);
    });
    const text = (await http(`${base}/metrics`)).body as string;
    expect(metric(text, 'spot_bot_instance_state', { bot_instance: 'churn', state: 'paused' })).toBe(1);
    expect(metric(text, 'spot_bot_instance_state', { bot_instance: 'churn', state: 'running' })).toBe(0);
    expect(
      metric(text, 'spot_bot_exchange_requests_total', { endpoint: 'POST /api/v4/spot/order', outcome: 'ok' }),
    ).toBeGreaterThan(0);
    const lastPoll = metric(text, 'spot_bot_job_last_success_timestamp_seconds', { bot_job: 'orders poll' });
    expect(Date.now() / 1000 - lastPoll).toBeLessThan(60);
    expect(text).toMatch(
      /^spot_bot_traded_notional_total\{bot_instance="churn",symbol="BTCUSDT",side="BUY",quote="USDT"\} \d/m,
    );
    expect(text).toMatch(/^spot_bot_position\{bot_instance="churn",symbol="BTCUSDT"\} /m);
    expect(text).toMatch(/^spot_bot_realised_pnl\{bot_instance="churn",symbol="BTCUSDT",quote="USDT"\} /m);
    expect(text).toMatch(/^spot_bot_build_info\{version="\d+\.\d+\.\d+",revision="[^"]+"\} 1$/m);
    expect(metric(text, 'spot_bot_ready')).toBe(1);
    // Prometheus's own target labels are never the bot's (they would become exported_instance, exported_job).
    expect(text).not.toMatch(/[{,](instance|job)="/);
    expect(text).not.toMatch(/^spot_bot_balance\{/m);
    expect(text).not.toMatch(/churn-\d+/);
    expect((await http(`${base}/readyz`)).status).toBe(200);
  });

  it('serves every metric the Grafana dashboard in docs/ queries, with the labels it uses', async () => {
    const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as {
      panels: { title: string; targets?: { expr: string; legendFormat?: string }[] }[];
    };
    const exprs = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr, legend: t.legendFormat ?? '' })),
    );
    expect(exprs.length).toBeGreaterThan(20);
    const exposition = parseExposition((await http(`${base}/metrics`)).body as string);
    // Labels Prometheus adds to every series (the scrape target), and a histogram's buckets.
    const scrapeLabels = new Set(['job', 'instance', 'le']);
    const queried = new Set<string>();
    for (const { panel, expr, legend } of exprs) {
      const names = [...expr.matchAll(/\b((?:spot_bot|process|nodejs)_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
      expect(names, `${panel}: ${expr}`).not.toEqual([]);
      for (const name of names) {
        const family = familyOf(exposition, name);
        expect(family, `${panel}: ${name} is not on /metrics`).toBeDefined();
        queried.add(family!);
      }
      const samples = exposition.samples.filter((s) => names.includes(s.name));
      if (samples.length === 0) continue; // served without samples yet (balances, retries): the name is checked
      const used = [
        ...[...expr.matchAll(/\b[a-z0-9_]+\{([^}]*)\}/g)].flatMap((m) => [...m[1]!.matchAll(/([a-z_]+)\s*[=!]~?/g)]),
        ...[...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((m) => [...m[1]!.matchAll(/([a-z_]+)/g)]),
        ...[...legend.matchAll(/{{\s*([a-z_]+)\s*}}/g)],
      ].map((m) => m[1]!);
      for (const label of used.filter((l) => !scrapeLabels.has(l)))
        expect(
          samples.some((s) => label in s.labels),
          `${panel}: label ${label} on ${names.join(', ')}`,
        ).toBe(true);
    }
    // Every metric of the bot's own is on the dashboard.
    const own = [...exposition.types.keys()].filter((n) => n.startsWith('spot_bot_'));
    expect(own.filter((n) => !queried.has(n))).toEqual([]);
  });
});

/** waitFor with an asynchronous check (HTTP). */
async function waitForAsync(what: string, check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (daemon.exit) throw new Error(`the daemon exited (${JSON.stringify(daemon.exit)}) waiting for ${what}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
