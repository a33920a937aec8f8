/**
 * Telegram chat commands against a local stand-in of the Bot API: the configured chat's commands reach the
 * operator (with their source) and are answered in that chat; another chat's are ignored and logged once;
 * a command sent before the daemon started (30 s or 10 min before) is not acted on and is answered with why;
 * the token appears in no log line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChatCommands } from '../../src/notify/chat-commands.js';
import type { ActionResult, ChatOperator } from '../../src/notify/chat-operator.js';
import { TelegramApi } from '../../src/notify/telegram.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { buildStatusView } from '../../src/status/status-view.js';
import { openStore, type Store } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { BotApi, captureLogger, until } from './stand-ins.js';

const dir = mkdtempSync(join(tmpdir(), 'chat-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const TOKEN = '987:chat-token-secret';

let bot: BotApi;
let store: Store;
beforeEach(async () => {
  bot = await BotApi.start(TOKEN);
  store = openStore({ path: ':memory:', clock: { now: () => Date.now() } });
  store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'live', venue: 'x', pid: process.pid });
  store.events.record(Date.now(), 'grid', 'started', { symbol: 'BTCUSDT', strategy: 'grid' });
  store.orders.insert(orderRow({ localId: 'g-1', instance: 'grid', status: 'OPEN' }));
});
afterEach(async () => {
  store.close();
  await bot.close();
});

/** Commands for chat 111 on the stand-in, through `token`. */
function chatCommands(token: string, op: ChatOperator, mode: 'live' | 'paper') {
  const log = captureLogger();
  const api = new TelegramApi({ baseUrl: bot.url, token, timeoutMs: 5000, redact: (t) => t });
  const commands = new ChatCommands({
    api,
    chatIds: new Set(['111']),
    operator: op,
    mode,
    logger: log.logger,
    timers: wallClock,
    reply: (chatId, text) => api.sendMessage(chatId, text),
    waitSeconds: 1,
  });
  commands.start();
  return { commands, log };
}

function operator() {
  const calls: string[] = [];
  const ok = (message: string): Promise<ActionResult> => Promise.resolve({ ok: true, changed: true, message });
  const op: ChatOperator = {
    status: () => buildStatusView(store, { now: Date.now(), killSwitchFile: join(dir, 'KILL') }),
    balances: () => Promise.resolve([{ asset: 'USDT', free: '900', locked: '100' }]),
    pause: (name, source) => {
      calls.push(`pause ${name} ${source}`);
      return name === 'grid' ? ok(`${name} paused`) : Promise.resolve({ ok: false, message: `no instance ${name}` });
    },
    resume: (name, source) => {
      calls.push(`resume ${name} ${source}`);
      return ok(`${name} resumed`);
    },
    setKillSwitch: (on, source) => {
      calls.push(`kill ${on} ${source}`);
      return ok(`kill switch ${on ? 'on' : 'off'}`);
    },
  };
  return { op, calls };
}

describe('telegram chat commands', () => {
  it('acts on the configured chat’s commands and answers there; other chats are ignored and logged once', async () => {
    const { op, calls } = operator();
    const { commands, log } = chatCommands(TOKEN, op, 'live');
    bot.say(999, '/stopbuy');
    bot.say(111, '/status');
    bot.say(111, '/balance');
    bot.say(111, '/pnl');
    bot.say(111, '/pause@my_bot grid');
    bot.say(111, '/pause nosuch');
    bot.say(111, '/resume grid');
    bot.say(111, '/stopbuy');
    bot.say(111, '/startbuy');
    bot.say(111, '/stopbuy', 10 * 60_000);
    bot.say(111, '/stopbuy', 30_000);
    bot.say(999, '/startbuy');
    bot.say(111, 'hello');
    bot.say(111, '/help');
    bot.say(111, '/frobnicate');
    await until('every answer', () => bot.sent.length === 12);
    bot.say(111, '/pause');
    await until('the last answer', () => bot.sent.length === 13);
    await commands.stop();

    expect(calls).toEqual([
      'pause grid telegram:111',
      'pause nosuch telegram:111',
      'resume grid telegram:111',
      'kill true telegram:111',
      'kill false telegram:111',
    ]);
    expect(bot.sent.every((m) => m.chatId === '111')).toBe(true);
    const [status, balance, pnl, pause, badPause, resume, stop, start, stale, stale30, help, unknown, bare] =
      bot.sent.map((m) => m.text);
    expect(status).toMatch(
      /^LIVE · status\nkill switch: off\ncircuit breaker: closed\nauthentication: ok\ngrid running · flat · 1 open · today \+0$/,
    );
    expect(balance).toBe('LIVE · balances\nUSDT 900 (locked 100)');
    expect(pnl).toBe('LIVE · PnL (today · total · open)\ngrid: +0 · +0 · -');
    expect(pause).toBe('LIVE · grid paused');
    expect(badPause).toBe('LIVE · refused: no instance nosuch');
    expect(resume).toBe('LIVE · grid resumed');
    expect([stop, start]).toEqual(['LIVE · kill switch on', 'LIVE · kill switch off']);
    for (const s of [stale, stale30])
      expect(s).toMatch(
        /^LIVE · \/stopbuy not acted on\nit was sent at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, before this daemon started \(.+ UTC\)\. Send it again if you still mean it\.$/,
      );
    expect(help).toContain('/stopbuy: kill switch on (no new orders)');
    expect(unknown).toMatch(/^LIVE · unknown command \/frobnicate\n\/status/);
    expect(bare).toBe('LIVE · /pause NAME\ninstances: grid');

    expect(log.messages(/ignoring messages from chat 999/)).toHaveLength(1);
    expect(log.messages(/\/stopbuy was sent before the daemon started: not acted on/)).toHaveLength(2);
    expect(log.lines.join('\n')).not.toContain(TOKEN);
  });

  it('keeps polling through a Bot API that fails, logging it once', async () => {
    const { commands, log } = chatCommands('wrong-token', operator().op, 'paper');
    await until('two failed polls', () => bot.requests.length >= 2);
    await commands.stop();
    expect(log.messages(/getUpdates failed/)).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain('wrong-token');
  });
});
