/**
 * The notifier end to end in process: a temp-file store, every event kind and a fill recorded as the engine
 * records them, and local stand-ins of a webhook receiver, Discord and Telegram's Bot API. Each kind reaches
 * exactly the channels configured for it, signatures verify, no secret leaves in any message, every message
 * sent or dropped is recorded, a receiver that is down costs nothing but its own messages, a restart
 * resumes after what was already sent, and a webhook POST whose answer was never seen is sent again at the
 * next start with the same id (body and Idempotency-Key): at least once, and deduplicable.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/app/env.js';
import { NOTICE_KINDS, type NoticeKind } from '../../src/notify/event-kinds.js';
import { journalEnd } from '../../src/notify/notifier.js';
import { notificationsFromEnv } from '../../src/notify/setup.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { IDEMPOTENCY_HEADER, SIGNATURE_HEADER } from '../../src/notify/webhook.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { openStore, type Store } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { until } from '../support/until.js';
import { BotApi, Receiver } from './stand-ins.js';
import { captureLogger } from '../support/capture-logger.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('notify');

const TOKEN = '123456:telegram-token-not-for-messages';
const WEBHOOK_SECRET = 'webhook-secret-not-for-messages';
const API_SECRET = 'exchange-api-secret-not-for-messages';
const DISCORD_PATH = '/api/webhooks/1/discord-token-not-for-messages';

/** Data as the engine records it, for each kind (the auth failure quotes the API secret, as a bug might). */
const SAMPLES: Record<Exclude<NoticeKind, 'fill' | 'daemon-started'>, Record<string, unknown>> = {
  'order-rejected': { localId: 'g-1', code: '-2010', message: 'insufficient balance' },
  'order-not-sent': { localId: 'g-2', code: 'E_TIMEOUT', message: 'connect timeout' },
  'order-unknown': { localId: 'g-3', reason: 'timeout' },
  'order-missing': { localId: 'g-4', exchangeId: '99' },
  'not-placed': { localId: 'g-5', reason: 'not on the venue' },
  reconciled: { localId: 'g-6', status: 'FILLED' },
  'cancel-failed': { localId: 'g-7', message: 'unknown order' },
  adopted: { symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', quantity: '0.1' },
  'external-orders': { total: 3, symbols: { BTCUSDT: 3 }, journaled: 3, notJournaled: 0, maybeOurs: 0 },
  refused: { reason: 'kill switch on' },
  paused: { reason: 'onTick threw: boom' },
  'start-refused': { reason: 'no pair config' },
  'engine-error': { error: 'disk full' },
  'daily-loss-halt': { reason: 'loss 101 > 100' },
  started: { symbol: 'BTCUSDT', strategy: 'grid' },
  stopped: {},
  resumed: {},
  'auth-cleared': {},
  'journal-lost': { reason: 'database file data/bot.db was deleted while the bot was running' },
  'journal-recovered': { since: Date.UTC(2024, 0, 1, 12), reason: 'journal write failed' },
  operator: { action: 'pause', instance: 'grid', outcome: 'paused', source: 'api 127.0.0.1' },
  'kill-switch': { on: true },
  'stop-buy': { on: true, source: 'api 127.0.0.1' },
  'exit-requested': { type: 'MARKET', source: 'telegram:1' },
  'exit-triggered': { reason: 'stop-loss', price: 19800, level: 19800.5, entry: '20000', quantity: '0.01' },
  'exit-held': { localId: 'b-2', type: 'STOP_LIMIT', quantity: '0.01', stopPrice: '19600', limitPrice: '19502' },
  'held-exit-filled': { reason: 'stop-loss', price: '19600', entry: '20000', localId: 'b-2' },
  'protection-tripped': { protection: 'losingTrades', reason: '3 losing trades', until: Date.UTC(2024, 0, 1, 12) },
  'protection-lifted': { protection: 'losingTrades' },
  'exits-changed': { exits: { stopLossPct: 3 }, protections: {} },
  'pairlist-changed': { group: 'trend-usdt', listed: ['BTCUSDT', 'SOLUSDT'], added: ['SOLUSDT'], removed: ['ETHUSDT'] },
  'circuit-breaker': { state: 'open', until: Date.UTC(2024, 0, 1, 12), lastError: { message: 'HTTP 502' } },
  'auth-failed': { call: 'balance', code: 'E_AUTH', message: `signature for ${API_SECRET} rejected` },
  'daemon-stopped': { reason: 'SIGTERM' },
  'replay-behind': { lagMs: 600_000, speed: 60, wallSeconds: 10 },
  'replay-caught-up': { lagMs: 0, speed: 60 },
  'daily-summary': { at: 1, day: '2024-01-01', instances: [{ instance: 'grid', realisedToday: '1.5', fills: 2 }] },
};
const ERROR_KINDS = [
  'paused',
  'start-refused',
  'engine-error',
  'daily-loss-halt',
  'circuit-breaker',
  'auth-failed',
  'journal-lost',
];

let store: Store;
let hook: Receiver;
let discord: Receiver;
let bot: BotApi;
let n = 0;

beforeEach(async () => {
  store = openStore({ path: join(dir, `bot-${++n}.db`), clock: { now: () => Date.now() } });
  store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 1 });
  [hook, discord, bot] = await Promise.all([Receiver.start(), Receiver.start(), BotApi.start(TOKEN)]);
});
afterEach(async () => {
  store.close();
  await Promise.all([hook.close(), discord.close(), bot.close()]);
});

function env(over: Record<string, string> = {}) {
  return parseEnv({
    EXCHANGE_API_KEY: 'key-abc',
    EXCHANGE_API_SECRET: API_SECRET,
    NOTIFY_WEBHOOK_URL: `${hook.url}/hook`,
    NOTIFY_WEBHOOK_SECRET: WEBHOOK_SECRET,
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_CHAT_ID: '111,222',
    TELEGRAM_API_URL: bot.url,
    TELEGRAM_EVENTS: 'fill,paused,kill-switch',
    TELEGRAM_COMMANDS: 'false',
    DISCORD_WEBHOOK_URL: `${discord.url}${DISCORD_PATH}`,
    DISCORD_LEVEL: 'error',
    NOTIFY_GROUP_MS: '100',
    NOTIFY_DAILY_SUMMARY: 'off',
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    ...over,
  });
}

let seq = 0;
function recordFill(qty: string, side: 'BUY' | 'SELL' = 'BUY', price = '100', at = Date.now()) {
  const localId = `g-f${++seq}`;
  store.orders.insert(orderRow({ localId, instance: 'grid', seq, side, status: 'FILLED' }));
  store.fills.insert({
    fillKey: `t-${seq}`,
    orderLocalId: localId,
    instance: 'grid',
    symbol: 'BTCUSDT',
    side,
    price,
    qty,
    fee: '0.01',
    feeAsset: 'USDT',
    feeIn: 'quote',
    time: at,
    source: 'trade',
    delivered: false,
    recordedAt: at,
  });
}

type HookBody = {
  id: string;
  mode: string;
  text: string;
  notifications: { id: string; kind: string; level: string; text: string; instance: string | null }[];
};
const hookKinds = () => hook.received.flatMap((r) => (r.json as HookBody).notifications.map((x) => x.kind));
/** Everything the webhook received, as text. */
const hookText = () => hook.received.map((r) => (r.json as HookBody).text).join('\n');
/** A live daemon's notifier telling each notice at once (no grouping). */
const liveUngrouped = () =>
  notificationsFromEnv(env({ NOTIFY_GROUP_MS: '0' }), {
    store,
    logger: captureLogger().logger,
    mode: 'live',
    timers: wallClock,
  });

describe('the notifier', () => {
  it('takes every kind to the channels configured for it, signed, with no secret in any message', async () => {
    const log = captureLogger();
    const notifications = notificationsFromEnv(env(), { store, logger: log.logger, mode: 'paper', timers: wallClock });
    expect(notifications?.notifier.channels.map((c) => c.name)).toEqual([
      'webhook',
      'discord',
      'telegram:111',
      'telegram:222',
    ]);
    for (const [kind, data] of Object.entries(SAMPLES) as [keyof typeof SAMPLES, Record<string, unknown>][])
      store.events.record(Date.now(), 'grid', kind, data);
    recordFill('1');
    // Every kind the notifier knows has a sample here: none is untested.
    expect([...Object.keys(SAMPLES), 'fill', 'daemon-started'].sort()).toEqual([...NOTICE_KINDS].sort());

    await until('the webhook to get every kind', () => hookKinds().length >= NOTICE_KINDS.length);
    await until('both chats to get theirs', () => bot.sent.length >= 2);
    await until('discord to get its own', () => discord.received.length >= 1);
    await notifications?.stop(5000);

    expect(new Set(hookKinds())).toEqual(new Set(NOTICE_KINDS));
    // One notification per webhook message, each with its own stable id, also as the Idempotency-Key.
    const ids = hook.received.map((r) => (r.json as HookBody).id);
    expect(new Set(ids).size).toBe(hook.received.length);
    for (const r of hook.received) {
      const body = r.json as HookBody;
      expect(body.id).toMatch(/^[0-9a-z]+-[ef]\d+$/);
      expect(body.notifications.map((x) => x.id)).toEqual([body.id]);
      expect(r.headers[IDEMPOTENCY_HEADER]).toBe(body.id);
    }
    for (const r of hook.received) {
      const expected = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(r.body).digest('hex')}`;
      const got = String(r.headers[SIGNATURE_HEADER]);
      expect(timingSafeEqual(Buffer.from(got), Buffer.from(expected))).toBe(true);
      expect((r.json as HookBody).mode).toBe('paper');
    }
    const telegramText = bot.sent.map((m) => m.text).join('\n');
    expect(bot.sent.map((m) => m.chatId).sort()).toEqual(['111', '222']);
    for (const m of bot.sent) {
      expect(m.text).toMatch(/^PAPER · /);
      expect(m.text).toContain('grid PAUSED: onTick threw: boom');
      expect(m.text).toContain('grid KILL SWITCH ON: no new orders');
      expect(m.text).toContain('grid BTCUSDT BUY LIMIT 1 @ 100 fee 0.01 USDT');
    }
    expect(telegramText).not.toContain('order rejected');
    const discordText = discord.received.map((r) => (r.json as { content: string }).content).join('\n');
    expect(discordText).toContain('AUTHENTICATION FAILED on balance: signature for [redacted] rejected');
    expect(discordText).toContain('CIRCUIT BREAKER OPEN until 12:00:00 UTC: HTTP 502');
    expect(discordText).not.toContain('order rejected');
    expect(discordText).not.toContain('BUY LIMIT');

    const everything = [
      ...hook.received.map((r) => r.body),
      ...discord.received.map((r) => r.body),
      ...bot.requests.map((r) => r.body),
      ...log.lines,
    ].join('\n');
    for (const secret of [TOKEN, WEBHOOK_SECRET, API_SECRET, 'discord-token-not-for-messages'])
      expect(everything).not.toContain(secret);

    const records = store.events.list({ kinds: ['notification-sent', 'notification-dropped'] });
    expect(records.every((r) => r.kind === 'notification-sent')).toBe(true);
    const told = (channel: string) => {
      const mine = records.filter((r) => r.data.channel === channel);
      return {
        count: mine.reduce((sum, r) => sum + Number(r.data.count), 0),
        kinds: new Set(mine.flatMap((r) => r.data.kinds as string[])),
      };
    };
    expect(told('webhook')).toEqual({ count: NOTICE_KINDS.length, kinds: new Set(NOTICE_KINDS) });
    expect(told('discord')).toEqual({ count: ERROR_KINDS.length, kinds: new Set(ERROR_KINDS) });
    for (const chat of ['telegram:111', 'telegram:222'])
      expect(told(chat)).toEqual({ count: 3, kinds: new Set(['fill', 'paused', 'kill-switch']) });
  });

  it('groups a burst of fills into one message per chat; the webhook gets one message per fill', async () => {
    const notifications = notificationsFromEnv(env({ NOTIFY_GROUP_MS: '300' }), {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wallClock,
    });
    await until('the start to be told', () => hook.received.length === 1);
    for (let i = 1; i <= 12; i++) recordFill(String(i));
    await until('the fills to be told', () => hook.received.length === 13 && bot.sent.length === 2);
    await notifications?.stop(5000);
    expect(hook.received).toHaveLength(13);
    expect(hook.received.slice(1).map((r) => (r.json as HookBody).text)).toEqual(
      Array.from({ length: 12 }, (_, i) => `PAPER · grid BTCUSDT BUY LIMIT ${i + 1} @ 100 fee 0.01 USDT`),
    );
    expect(bot.sent.map((m) => m.text.split('\n')[0])).toEqual(['PAPER · 12 fills', 'PAPER · 12 fills']);
  });

  it('tells the PnL a fill realised when it reduced the position', async () => {
    recordFill('2', 'BUY', '100');
    await new Promise((r) => setTimeout(r, 5));
    store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'live', venue: 'x', pid: 2 });
    const notifications = liveUngrouped();
    recordFill('1', 'SELL', '110');
    await until('the sell told', () => hookKinds().includes('fill'));
    await notifications?.stop(5000);
    const text = hookText();
    // Realised: 1 × (110 − 100) less the sell's quote fee 0.01; the buy (in the run before) is not told again.
    expect(text).toContain('LIVE · grid BTCUSDT SELL LIMIT 1 @ 110 fee 0.01 USDT PnL +9.99');
    expect(text).not.toContain('BUY LIMIT 2');
  });

  it('rounds a fill’s figures to the pair’s tick and step as the daemon stored its rules, else to 8 places', async () => {
    const notifications = liveUngrouped();
    // No rules stored (a daemon that never read the venue): 8 places.
    recordFill('0.123456789123', 'BUY', '20000.123456789');
    await until('the first fill told', () => hookText().includes('BUY'));
    expect(hookText()).toContain('BTCUSDT BUY LIMIT 0.12345679 @ 20000.12345679 fee 0.01 USDT');
    // BTCUSDT's rules as the daemon's engine stores them: tick 0.01, step 0.000001, quote precision 2.
    store.pairRules.put([DEFAULT_PAIRS[0]!], Date.now());
    recordFill('0.100000449', 'SELL', '20100.4750001');
    await until('the second fill told', () => hookText().includes('SELL'));
    await notifications?.stop(5000);
    // Realised 0.1 × (20100.4750001 − 20000.123456789) − 0.01 = 10.0251…: to the quote's 2 places.
    expect(hookText()).toContain('BTCUSDT SELL LIMIT 0.1 @ 20100.48 fee 0.01 USDT PnL +10.03');
  });

  it('rounds a declared exit’s figures like a fill’s: to the pair’s tick and step once stored, else to 8 places', async () => {
    const notifications = liveUngrouped();
    // As the engine records them: a trailing level is a float, an entry an exact average of every digit.
    const exit = { symbol: 'BTCUSDT', reason: 'trailing-stop', price: 19650.5, quantity: '0.0104895104895' };
    const level = 20_000 * 0.99 * (1 / 1.0001);
    store.events.record(Date.now(), 'grid', 'exit-triggered', { ...exit, level, entry: '20020.02002002002002' });
    await until('the first exit told', () => hookText().includes('EXIT'));
    expect(hookText()).toContain('EXIT trailing-stop at 19650.5 (level 19798.02019798, entry 20020.02002002)');
    store.pairRules.put([DEFAULT_PAIRS[0]!], Date.now());
    store.events.record(Date.now(), 'grid', 'exit-triggered', { ...exit, level, entry: '20020.02002002002002' });
    store.events.record(Date.now(), 'grid', 'exit-held', {
      symbol: 'BTCUSDT',
      localId: 'b-2',
      type: 'STOP_LIMIT',
      quantity: '0.0104895104895',
      stopPrice: '19600.004',
      limitPrice: '19502.0049',
      takeProfit: null,
    });
    await until('the held stop told', () => hookText().includes('stop held'));
    await notifications?.stop(5000);
    expect(hookText()).toContain('EXIT trailing-stop at 19650.5 (level 19798.02, entry 20020.02)');
    expect(hookText()).toContain('stop held on the exchange: STOP_LIMIT 0.01049 stop 19600 limit 19502');
    // The journal keeps every digit: only what is told is rounded.
    expect(store.events.list({ kinds: ['exit-triggered'] })[0]?.data).toMatchObject({
      level,
      entry: '20020.02002002002002',
    });
  });

  it('loses only the down channel’s messages while a receiver is down, records them, and delivers after', async () => {
    const log = captureLogger();
    hook.status = () => 503;
    // A window shorter than the first backoff: one try, then dropped.
    const notifications = notificationsFromEnv(env({ NOTIFY_RETRY_FOR_MS: '500', DISCORD_LEVEL: 'info' }), {
      store,
      logger: log.logger,
      mode: 'paper',
      timers: wallClock,
    });
    recordFill('1');
    await until('the drop', () => store.events.list({ kinds: ['notification-dropped'] }).length > 0);
    await until('the others to deliver', () => discord.received.length > 0 && bot.sent.length === 2);
    hook.status = () => 204;
    store.events.record(Date.now(), 'grid', 'paused', { reason: 'later' });
    await until('the webhook to deliver again', () => hook.received.length > 0);
    await notifications?.stop(5000);
    const [dropped] = store.events.list({ kinds: ['notification-dropped'] });
    expect(dropped?.data).toMatchObject({ channel: 'webhook', attempts: 1, reason: 'webhook: HTTP 503' });
    expect(hookKinds()).toContain('paused');
    expect(log.messages(/^webhook: dropping notifications/)).toHaveLength(1);
    expect(log.messages(/^webhook: delivering notifications again/)).toHaveLength(1);
  });

  it('resumes after what each channel already sent when the daemon starts again', async () => {
    const first = notificationsFromEnv(env(), {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wallClock,
    });
    store.events.record(Date.now(), 'grid', 'paused', { reason: 'first run' });
    await until('the first run told', () => hookKinds().includes('paused'));
    await first?.stop(5000);
    const told = hook.received.length;

    store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 2 });
    store.events.record(Date.now(), 'grid', 'paused', { reason: 'second run' });
    const second = notificationsFromEnv(env(), {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wallClock,
    });
    await until('the second run told', () => hook.received.length > told);
    await second?.stop(5000);
    const texts = hook.received
      .slice(told)
      .map((r) => (r.json as HookBody).text)
      .join('\n');
    expect(texts).toContain('second run');
    expect(texts).not.toContain('first run');
  });

  it("resumes by sequence on a recording's clock: the previous run's fills not yet sent are sent", async () => {
    // Paper on a recording: a start is stamped with the wall's time, fills with the recording's (2023).
    const recorded = Date.UTC(2023, 2, 10, 12);
    const start = (pid: number) => {
      const runBegan = journalEnd(store);
      store.events.record(Date.now(), undefined, 'daemon-started', {
        mode: 'paper',
        venue: 'embedded',
        clock: 'data',
        pid,
        began: runBegan,
      });
      return notificationsFromEnv(env({ NOTIFY_WEBHOOK_EVENTS: 'fill', NOTIFY_GROUP_MS: '0' }), {
        store,
        logger: captureLogger().logger,
        mode: 'paper',
        timers: wallClock,
        runBegan,
      });
    };
    const fills = () => hook.received.filter((r) => (r.json as HookBody).notifications[0]?.kind === 'fill').length;
    const first = start(2);
    recordFill('1', 'BUY', '100', recorded);
    recordFill('2', 'BUY', '100', recorded + 1_000);
    await until('the first fills told', () => fills() === 2);
    await first?.stop(5000);
    // Recorded by that run after its notifications stopped (its last poll): not sent yet.
    recordFill('3', 'BUY', '100', recorded + 2_000);
    recordFill('4', 'BUY', '100', recorded + 3_000);
    const second = start(3);
    await until('the unsent fills told', () => fills() === 4);
    await second?.stop(5000);
    expect(hookText()).toMatch(/BUY LIMIT 3 @/);
    expect(hookText()).toMatch(/BUY LIMIT 4 @/);
  });

  it('tells a new channel what the start-up recorded before the start was (the daemon records it once running)', async () => {
    // A previous run, then this run's start-up: the engine's records come before this run's 'daemon-started'.
    store.events.record(Date.now(), 'grid', 'paused', { reason: 'previous run' });
    const runBegan = journalEnd(store);
    store.events.record(Date.now(), undefined, 'external-orders', SAMPLES['external-orders']);
    store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 2 });
    const notifications = notificationsFromEnv(env(), {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wallClock,
      runBegan,
    });
    await until('the start and the orders found told', () =>
      ['daemon-started', 'external-orders'].every((k) => hookKinds().includes(k)),
    );
    await notifications?.stop(5000);
    expect(hook.received.map((r) => (r.json as HookBody).text).join('\n')).not.toContain('previous run');
  });

  it('sends a webhook POST whose answer it never saw again at the next start, with the same id', async () => {
    const start = (retryForMs: string) =>
      notificationsFromEnv(env({ NOTIFY_RETRY_FOR_MS: retryForMs }), {
        store,
        logger: captureLogger().logger,
        mode: 'paper',
        timers: wallClock,
      });
    const first = start('3600000');
    await until('the start told', () => hookKinds().includes('daemon-started'));
    // The receiver takes the next POST and never answers: it is in flight when the daemon dies.
    hook.status = () => 'hold';
    store.events.record(Date.now(), 'grid', 'paused', { reason: 'in flight' });
    recordFill('3');
    await until('the POST in flight', () => hookKinds().includes('paused'));
    const inFlight = hook.received.at(-1);
    // Its stop is cut short as a kill -9 would cut it: nothing about that message reaches the database.
    await first?.stop(0);
    expect(store.events.list({ kinds: ['notification-dropped'] })).toEqual([]);

    hook.status = () => 204;
    store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'paper', venue: 'embedded', pid: 2 });
    const second = start('3600000');
    await until('the paused and the fill told again', () => hookKinds().filter((k) => k === 'paused').length === 2);
    await until('the fill told', () => hookKinds().includes('fill'));
    await second?.stop(5000);
    const again = hook.received.filter((r) => (r.json as HookBody).notifications[0]?.kind === 'paused');
    expect(again).toHaveLength(2);
    expect(again[1]?.headers[IDEMPOTENCY_HEADER]).toBe(inFlight?.headers[IDEMPOTENCY_HEADER]);
    expect((again[1]?.json as HookBody).id).toBe((inFlight?.json as HookBody).id);
    // What a receiver keeps after dropping repeats by id: each notification once.
    const kept = new Map(
      hook.received.map((r) => [(r.json as HookBody).id, (r.json as HookBody).notifications[0]?.kind]),
    );
    expect([...kept.values()].filter((k) => k === 'paused' || k === 'fill').sort()).toEqual(['fill', 'paused']);
  });

  it('tells a person each operator action once, as its row: not what it recorded on the way, not a repeat, not to the chat that asked', async () => {
    const notifications = notificationsFromEnv(env({ TELEGRAM_EVENTS: 'all', NOTIFY_GROUP_MS: '300' }), {
      store,
      logger: captureLogger().logger,
      mode: 'paper',
      timers: wallClock,
    });
    const notifier = notifications!.notifier;
    await until('the start told', () => bot.sent.length === 2);
    const action = (
      start: { action: string; instance: string | undefined; source: string },
      rows: [string | undefined, string, Record<string, unknown>][],
    ) => {
      const end = notifier.acting(start);
      for (const [instance, kind, data] of rows) store.events.record(Date.now(), instance, kind as never, data);
      end();
    };
    const op = (data: Record<string, unknown>) => [undefined, 'operator', data] as [undefined, string, typeof data];
    // An exit from the API: its request, its pause and its row; another instance's failure and a fill meanwhile.
    action({ action: 'exit', instance: 'grid', source: 'api 1.2.3.4' }, [
      ['grid', 'exit-requested', { type: 'MARKET', source: 'api 1.2.3.4' }],
      ['grid', 'paused', { reason: 'exit by the operator (api 1.2.3.4)' }],
      ['dca', 'paused', { reason: 'onTick threw: boom' }],
      op({ action: 'exit', instance: 'grid', outcome: 'sent MARKET SELL 0.001', changed: true, source: 'api 1.2.3.4' }),
    ]);
    recordFill('1');
    // The kill switch from chat 111, then the same again (nothing changed): a repeat.
    action({ action: 'kill-switch', instance: undefined, source: 'telegram:111' }, [
      [undefined, 'kill-switch', { on: true }],
      op({ action: 'kill-switch', on: true, outcome: 'on', changed: true, source: 'telegram:111' }),
    ]);
    action({ action: 'kill-switch', instance: undefined, source: 'api 1.2.3.4' }, [
      op({ action: 'kill-switch', on: true, outcome: 'already on', changed: false, source: 'api 1.2.3.4' }),
    ]);
    // The file removed by hand: no action, so its own row tells it.
    store.events.record(Date.now(), undefined, 'kill-switch', { on: false });
    await until(
      'both chats told',
      () => bot.sent.length >= 4 && bot.sent.some((m) => m.text.includes('orders allowed')),
    );
    await until('the webhook told every row', () => hookKinds().filter((k) => k === 'operator').length === 3);
    await notifications?.stop(5000);
    const to = (chat: string) =>
      bot.sent
        .filter((m) => m.chatId === chat)
        .slice(1)
        .map((m) => m.text)
        .join('\n');
    for (const chat of ['111', '222']) {
      const text = to(chat);
      expect(text.match(/operator exit grid → sent MARKET SELL 0.001 \(api 1.2.3.4\)/g), chat).toHaveLength(1);
      expect(text, chat).not.toContain('EXIT requested');
      expect(text, chat).not.toContain('grid PAUSED');
      expect(text, chat).toContain('‼ dca PAUSED: onTick threw: boom');
      expect(text, chat).toContain('grid BTCUSDT BUY LIMIT 1 @ 100');
      expect(text, chat).not.toContain('KILL SWITCH ON');
      expect(text, chat).not.toContain('already on');
      expect(text, chat).toContain('kill switch off: orders allowed again');
    }
    // The chat that asked had the command's answer; the other chat is told the action.
    expect(to('111')).not.toContain('operator kill-switch');
    expect(to('222')).toContain('operator kill-switch on → on (telegram:111)');
    // A script's webhook gets every row, an exit's own pause as a warning (not an error).
    expect(hookKinds().filter((k) => k === 'paused')).toHaveLength(2);
    const exitPause = hook.received
      .map((r) => (r.json as HookBody).notifications[0]!)
      .find((n) => n.kind === 'paused' && n.text.includes('exit by the operator'));
    expect(exitPause?.level).toBe('warn');
  });

  it('is not set up without a channel', () => {
    const bare = parseEnv({});
    expect(notificationsFromEnv(bare, { store, logger: captureLogger().logger, mode: 'paper' })).toBeUndefined();
  });
});
