/**
 * Telegram chat commands against a local stand-in of the Bot API: the configured chat's commands reach the
 * operator (with their source) and are answered in that chat; another chat's are ignored and logged once;
 * a command sent before the daemon started (30 s or 10 min before) is not acted on and is answered with why;
 * the token appears in no log line.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChatOperator, ChatCommands } from '../../src/notify/chat-commands.js';
import { type ActionResult, type OperatorActions, OperatorError } from '../../src/operator/actions.js';
import { TelegramApi } from '../../src/notify/telegram.js';
import { wallClock } from '../../src/clocks/wall-clock.js';
import { D } from '../../src/market/decimal.js';
import { pairRulesFrom } from '../../src/market/pair-rules.js';
import { DEFAULT_PAIRS, simPairConfig } from '../../src/sim/default-market.js';
import { openStore, type Store } from '../../src/store/store.js';
import { orderRow } from '../store/fixtures.js';
import { LogTail } from '../../src/ops/log-tail.js';
import { storeQueries } from '../support/store-queries.js';
import { until } from '../support/until.js';
import { BotApi } from './stand-ins.js';
import { captureLogger } from '../support/capture-logger.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('chat');
const TOKEN = '987:chat-token-secret';
const BTCUSDT = pairRulesFrom(DEFAULT_PAIRS[0]!);
const ETHUSDT = pairRulesFrom(simPairConfig({ id: 4, code: 'ETH' }, { id: 2, code: 'USDT' }));

let bot: BotApi;
let store: Store;
beforeEach(async () => {
  bot = await BotApi.start(TOKEN);
  store = openStore({ path: ':memory:', clock: { now: () => Date.now() } });
  store.events.record(Date.now(), undefined, 'daemon-started', { mode: 'live', venue: 'x', pid: process.pid });
  store.events.record(Date.now(), 'grid', 'started', { symbol: 'BTCUSDT', strategy: 'grid' });
  store.orders.insert(orderRow({ localId: 'g-1', instance: 'grid', status: 'OPEN' }));
  // One closed trade, days ago (today's PnL stays 0): bought 0.001 at 20000, sold at 20100, fees in USDT.
  const day = Date.UTC(2024, 0, 2, 10);
  for (const [id, seq, side, price, fee, time, tag] of [
    ['g-0', 2, 'BUY', '20000', '0.02', day, 'dip'],
    ['g-00', 3, 'SELL', '20100', '0.0201', day + 125_000, 'take-profit'],
  ] as const) {
    store.orders.insert(
      orderRow({ localId: id, instance: 'grid', seq, side, price, quantity: '0.001', status: 'FILLED', tag }),
    );
    store.fills.insert({
      fillKey: `t-${id}`,
      orderLocalId: id,
      instance: 'grid',
      symbol: 'BTCUSDT',
      side,
      price,
      qty: '0.001',
      fee,
      feeAsset: 'USDT',
      feeIn: 'quote',
      time,
      recordedAt: time,
      source: 'trade',
      delivered: true,
    });
  }
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

/** The operator layer's shape, recording each action asked for (the real actions are driven end to end in test/e2e). */
function operator(logs?: LogTail) {
  const calls: string[] = [];
  const ok = (action: string, outcome: string): Promise<ActionResult> =>
    Promise.resolve({ action, changed: true, outcome });
  const act: OperatorActions = {
    observe: () => undefined,
    pauseInstance: (name, by) => {
      calls.push(`pause ${name} ${by.source}`);
      return name === 'grid'
        ? ok('pause', 'paused')
        : Promise.reject(new OperatorError('E_UNKNOWN_INSTANCE', `no instance ${name}`));
    },
    resumeInstance: (name, by) => {
      calls.push(`resume ${name} ${by.source}`);
      return ok('resume', 'resumed');
    },
    exitPosition: (name, order, by) => {
      calls.push(`exit ${name} ${order.type === 'LIMIT' ? order.price.toFixed() : 'market'} ${by.source}`);
      return ok('exit', 'sent MARKET SELL 0.001 BTCUSDT as grid-9 (FILLED)');
    },
    forceEntry: (name, order, quoteAmount, by) => {
      calls.push(
        `force-entry ${name} ${order.type === 'LIMIT' ? order.price.toFixed() : 'market'} ${quoteAmount?.toFixed() ?? '-'} ${by.source}`,
      );
      return ok('force-entry', 'sent MARKET BUY for 50 BTCUSDT as grid-10 (FILLED)');
    },
    setStopBuy: (on, by) => {
      calls.push(`stop-buy ${on} ${by.source}`);
      return ok('stop-buy', on ? 'on' : 'off');
    },
    setKillSwitch: (on, by) => {
      calls.push(`kill ${on} ${by.source}`);
      return ok('kill-switch', on ? 'on' : 'off');
    },
    reloadStrategyFiles: (by) => {
      calls.push(`reload ${by.source}`);
      return Promise.reject(
        new OperatorError('E_RELOAD_INVALID', 'strategy files invalid', { problems: ['a.json: x'] }),
      );
    },
    cancelOrder: () => Promise.reject(new Error('not a chat command')),
    clearAuthHalt: () => Promise.reject(new Error('not a chat command')),
    finishInterruptedExits: () => Promise.resolve(),
  };
  const read = storeQueries(store, dir, {
    balances: [{ asset: 'USDT', free: new D('900'), locked: new D('100') }],
    rules: { BTCUSDT, ETHUSDT },
    logs,
  });
  const op: ChatOperator = {
    read,
    act,
    build: { version: '1.2.3', revision: '0123456789abcdef' },
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
    bot.say(111, '/exit grid');
    bot.say(111, '/exit grid 20150.5');
    bot.say(111, '/exit grid cheap');
    bot.say(111, '/killswitch on');
    bot.say(111, '/killswitch');
    bot.say(111, '/reload');
    bot.say(111, '/version');
    bot.say(111, '/trades');
    bot.say(111, '/trades many');
    bot.say(111, '/profit');
    bot.say(111, '/daily');
    bot.say(111, '/weekly 2');
    bot.say(111, '/monthly');
    bot.say(111, '/forcebuy grid');
    bot.say(111, '/forcebuy grid 20100.5 50');
    bot.say(111, '/forcebuy grid market lots');
    await until('the last answers', () => bot.sent.length === 29);
    await commands.stop();

    expect(calls).toEqual([
      'pause grid telegram:111',
      'pause nosuch telegram:111',
      'resume grid telegram:111',
      'stop-buy true telegram:111',
      'stop-buy false telegram:111',
      'exit grid market telegram:111',
      'exit grid 20150.5 telegram:111',
      'kill true telegram:111',
      'reload telegram:111',
      'force-entry grid market - telegram:111',
      'force-entry grid 20100.5 50 telegram:111',
    ]);
    expect(bot.sent.every((m) => m.chatId === '111')).toBe(true);
    const [status, balance, pnl, pause, badPause, resume, stop, start, stale, stale30, help, unknown, bare, ...rest] =
      bot.sent.map((m) => m.text);
    expect(status).toMatch(
      /^LIVE · status\nkill switch: off\nstop-buy: off\ncircuit breaker: closed\nauthentication: ok\ngrid running · flat · 1 open · today \+0$/,
    );
    expect(balance).toBe('LIVE · balances\nUSDT 900 (locked 100)');
    expect(pnl).toBe('LIVE · PnL (today · total · open)\ngrid: +0 · +0.06 · -');
    expect(pause).toBe('LIVE · grid paused');
    expect(badPause).toBe('LIVE · refused: no instance nosuch');
    expect(resume).toBe('LIVE · grid resumed');
    expect([stop, start]).toEqual(['LIVE · stop-buy on', 'LIVE · stop-buy off']);
    for (const s of [stale, stale30])
      expect(s).toMatch(
        /^LIVE · \/stopbuy not acted on\nit was sent at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, before this daemon started \(.+ UTC\)\. Send it again if you still mean it\.$/,
      );
    expect(help).toContain('/stopbuy: stop-buy on (no new BUY orders; exits still go out)');
    expect(help).toContain('/killswitch on|off');
    expect(unknown).toMatch(/^LIVE · unknown command \/frobnicate\n\/status/);
    expect(bare).toBe('LIVE · /pause NAME\ninstances: grid');
    expect(rest).toEqual([
      'LIVE · exit grid: sent MARKET SELL 0.001 BTCUSDT as grid-9 (FILLED)',
      'LIVE · exit grid: sent MARKET SELL 0.001 BTCUSDT as grid-9 (FILLED)',
      'LIVE · /exit grid cheap\nPRICE: expected a positive decimal, like 20150.5',
      'LIVE · kill switch on',
      'LIVE · /killswitch on|off',
      'LIVE · refused: strategy files invalid\na.json: x',
      'LIVE · version\n1.2.3 (commit 0123456789ab)',
      'LIVE · last 10 closed trades\n#1 grid BTCUSDT long 0.001 · 20000 → 20100 · +0.06 USDT (+0.3%) · 2m · [dip → take-profit]',
      'LIVE · /trades [N]\nN: expected a whole number from 1 to 50',
      'LIVE · profit of closed trades\nUSDT: +0.06 · 1 trades · 100% won',
      'LIVE · daily profit (UTC)\n2024-01-02 USDT +0.06 · 1 trades · 100% won · fees 0.04',
      'LIVE · weekly profit (UTC)\n2024-01-01 USDT +0.06 · 1 trades · 100% won · fees 0.04',
      'LIVE · monthly profit (UTC)\n2024-01 USDT +0.06 · 1 trades · 100% won · fees 0.04',
      'LIVE · force entry grid: sent MARKET BUY for 50 BTCUSDT as grid-10 (FILLED)',
      'LIVE · force entry grid: sent MARKET BUY for 50 BTCUSDT as grid-10 (FILLED)',
      'LIVE · /forcebuy NAME [PRICE|market] [AMOUNT]\nAMOUNT: expected a positive decimal of the quote asset, like 50; got lots',
    ]);

    expect(log.messages(/ignoring messages from chat 999/)).toHaveLength(1);
    expect(log.messages(/\/stopbuy was sent before the daemon started: not acted on/)).toHaveLength(2);
    expect(log.lines.join('\n')).not.toContain(TOKEN);
  });

  it('answers /performance by pair and exit reason, /count of the trades open, /logs with the last warnings and errors', async () => {
    // A second closed trade, at a loss, closed by a declared stop-loss; then an entry still open.
    const day = Date.UTC(2024, 0, 3, 10);
    let seq = 10;
    for (const [id, side, price, time, tag] of [
      ['g-10', 'BUY', '20000', day, 'dip'],
      ['g-11', 'SELL', '19800', day + 60_000, 'exit:stop-loss'],
      ['g-12', 'BUY', '19700', day + 120_000, 'dip'],
    ] as const) {
      store.orders.insert(
        orderRow({ localId: id, instance: 'grid', seq: ++seq, side, price, quantity: '0.001', status: 'FILLED', tag }),
      );
      store.fills.insert({
        fillKey: `t-${id}`,
        orderLocalId: id,
        instance: 'grid',
        symbol: 'BTCUSDT',
        side,
        price,
        qty: '0.001',
        fee: '0',
        feeAsset: 'USDT',
        feeIn: 'quote',
        time,
        recordedAt: time,
        source: 'trade',
        delivered: true,
      });
    }
    const logs = new LogTail(5);
    const at = Date.UTC(2024, 0, 3, 10, 5);
    for (let i = 1; i <= 7; i++)
      logs.push(
        JSON.stringify({ level: i % 2 === 0 ? 50 : 40, time: at + i * 1000, instance: 'grid', msg: `problem ${i}` }),
      );
    logs.push(JSON.stringify({ level: 30, time: at + 9000, msg: 'info is not kept' }));
    logs.push(
      JSON.stringify({ level: 50, time: at + 10_000, component: 'operator', msg: 'failed', err: { message: 'boom' } }),
    );
    const { commands } = chatCommands(TOKEN, operator(logs).op, 'paper');
    bot.say(111, '/performance');
    bot.say(111, '/count');
    bot.say(111, '/logs 3');
    bot.say(111, '/logs 99');
    await until('the answers', () => bot.sent.length === 4);
    await commands.stop();
    expect(bot.sent.map((m) => m.text)).toEqual([
      'PAPER · performance of closed trades\nby pair:\nBTCUSDT -0.14 USDT · 2 trades · 50% won\nby exit reason:\n' +
        'take-profit +0.06 USDT · 1 trades · 100% won\nexit:stop-loss -0.2 USDT · 1 trades · 0% won',
      'PAPER · open trades: 1 (no maxOpenTrades limit)\ngrid BTCUSDT 0.001 @ 19700',
      'PAPER · last 3 warnings and errors (wall clock, UTC)\n2024-01-03 10:05:06 ERROR grid: problem 6\n' +
        '2024-01-03 10:05:07 WARN grid: problem 7\n2024-01-03 10:05:10 ERROR operator: failed (boom)',
      'PAPER · /logs [N]\nN: expected a whole number from 1 to 50',
    ]);
  });

  it('groups a multi-pair file’s pairs under its total in /status', async () => {
    const now = Date.now();
    const pair = (symbol: string) => `trend/${symbol}`;
    for (const symbol of ['BTCUSDT', 'ETHUSDT']) store.events.record(now, pair(symbol), 'started', { symbol });
    store.events.record(now, pair('ETHUSDT'), 'paused', { reason: 'by the operator' });
    store.orders.insert(
      orderRow({
        localId: 't-1',
        instance: pair('BTCUSDT'),
        seq: 50,
        status: 'OPEN',
        price: '20000',
        quantity: '0.001',
      }),
    );
    store.prices.put({ symbol: 'BTCUSDT', price: '20150', time: now }, now);
    const { commands } = chatCommands(TOKEN, operator().op, 'paper');
    bot.say(111, '/status');
    await until('the answer', () => bot.sent.length === 1);
    await commands.stop();
    const lines = bot.sent[0]!.text.split('\n');
    // The total before its pairs; the pairs by symbol under it; a file of one pair as before.
    expect(lines.slice(lines.indexOf('grid running · flat · 1 open · today +0') + 1)).toEqual([
      'trend: 1/2 running · 1 held · exposure 20.15 USDT · 1 open · today +0 USDT · open PnL +0 USDT',
      '  BTCUSDT running · flat · 1 open · today +0',
      '  ETHUSDT paused (by the operator) · flat · 0 open · today +0',
    ]);
  });

  it('counts a multi-pair file’s open trades against its maxOpenTrades in /count', async () => {
    const now = Date.now();
    const pair = (symbol: string) => `rot/${symbol}`;
    for (const symbol of ['BTCUSDT', 'ETHUSDT']) store.events.record(now, pair(symbol), 'started', { symbol });
    // A working buy holds a trade as maxOpenTrades counts it.
    store.orders.insert(
      orderRow({
        localId: 'r-1',
        instance: pair('ETHUSDT'),
        symbol: 'ETHUSDT',
        seq: 60,
        status: 'OPEN',
        price: '1500',
        quantity: '0.01',
      }),
    );
    store.prices.put({ symbol: 'ETHUSDT', price: '1510', time: now }, now);
    const read = storeQueries(store, dir, { rules: { BTCUSDT, ETHUSDT }, maxOpenTrades: { rot: 2 } });
    const { commands } = chatCommands(TOKEN, { ...operator().op, read }, 'paper');
    bot.say(111, '/count');
    await until('the answer', () => bot.sent.length === 1);
    await commands.stop();
    const lines = bot.sent[0]!.text.split('\n');
    expect(lines[0]).toBe('PAPER · open trades: 2');
    expect(lines).toContain('rot: 1 of 2 (maxOpenTrades) · ETHUSDT');
    expect(read.openTrades()).toMatchObject({ max: 2, groups: [{ group: 'rot', open: ['ETHUSDT'], max: 2 }] });
  });

  it('keeps polling through a Bot API that fails, logging it once', async () => {
    const { commands, log } = chatCommands('wrong-token', operator().op, 'paper');
    await until('two failed polls', () => bot.requests.length >= 2);
    await commands.stop();
    expect(log.messages(/getUpdates failed/)).toHaveLength(1);
    expect(log.lines.join('\n')).not.toContain('wrong-token');
  });
});
