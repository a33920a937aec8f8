/**
 * Notifications from a real daemon process on paper, to local stand-ins of a webhook receiver and of
 * Telegram's Bot API: the start, fills and the stop are told (mode first); a receiver that is down meanwhile
 * costs only its own messages (dropped and recorded) while trading goes on; a command from the configured
 * chat flips the kill switch (the file) and pauses and resumes an instance through the control API's
 * operator actions (journaled with the chat as source) and is answered, another chat's is ignored; no secret appears in any message or log line.
 */
import { createHmac } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER } from '../../src/notify/webhook.js';
import { BotApi, Receiver } from '../notify/stand-ins.js';
import { DaemonProcess, everyOrderFile, fillKeys, http, readDb, waitFor, lockstepPaperEnv } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-notify');

const TOKEN = '4242:e2e-telegram-token';
const WEBHOOK_SECRET = 'e2e-webhook-secret';

const events = (db: string, kind: string) =>
  readDb(db, (d) =>
    (d.prepare('SELECT data FROM events WHERE kind = ? ORDER BY id').pluck().all(kind) as string[]).map(
      (s) => JSON.parse(s) as Record<string, unknown>,
    ),
  );

describe('notifications from the daemon on paper', () => {
  it('tells the start, fills and the stop, survives a receiver that is down, and takes commands from its chat only', async () => {
    const [hook, bot] = await Promise.all([Receiver.start(), BotApi.start(TOKEN)]);
    hook.status = () => 503;
    const db = join(dir, 'bot.db');
    const kill = join(dir, 'KILL');
    const port = await freePort();
    const api = (path: string, method: string, body?: unknown) =>
      http(`http://127.0.0.1:${port}/api/v1${path}`, { method, body });
    const daemon = new DaemonProcess(
      await lockstepPaperEnv(
        dir,
        { 'churn.json': everyOrderFile('churn', { churn: 100_000 }) },
        { period: 7 },
        {
          NOTIFY_WEBHOOK_URL: `${hook.url}/hook`,
          NOTIFY_WEBHOOK_SECRET: WEBHOOK_SECRET,
          NOTIFY_RETRY_FOR_MS: '0',
          NOTIFY_GROUP_MS: '500',
          TELEGRAM_BOT_TOKEN: TOKEN,
          TELEGRAM_CHAT_ID: '111',
          TELEGRAM_API_URL: bot.url,
          API_PORT: String(port),
        },
      ),
    );
    try {
      await waitFor('the start told on Telegram', () => bot.sent.some((m) => m.text.includes('daemon started')), {
        daemon,
      });
      await waitFor('fills told on Telegram', () => bot.sent.some((m) => / fills?\n|BUY LIMIT/.test(m.text)), {
        daemon,
      });
      await waitFor('a webhook message dropped', () => events(db, 'notification-dropped').length > 0, { daemon });
      const fillsWhileDown = fillKeys(db).length;
      await waitFor('trading to go on while the receiver is down', () => fillKeys(db).length > fillsWhileDown + 2, {
        daemon,
      });
      hook.status = () => 204;
      await waitFor('the webhook to deliver again', () => hook.received.length > 0, { daemon });

      bot.say(999, '/stopbuy');
      bot.say(111, '/killswitch on');
      await waitFor('the answer', () => bot.sent.some((m) => m.text === 'PAPER · kill switch on'), {
        daemon,
      });
      bot.say(111, '/stopbuy');
      await waitFor('stop-buy on', () => bot.sent.some((m) => m.text === 'PAPER · stop-buy on'), { daemon });
      expect(existsSync(kill)).toBe(true);
      await waitFor('the kill switch recorded', () => events(db, 'kill-switch').some((e) => e.on === true), { daemon });
      bot.say(111, '/pause churn');
      bot.say(111, '/pause churn');
      bot.say(111, '/resume churn');
      bot.say(111, '/balance');
      // Replies share the chat's rate limit (one a second) with its notifications.
      const balances = await waitFor(
        'the balances',
        () => bot.sent.find((m) => m.text.startsWith('PAPER · balances\n')),
        { daemon },
      );
      // Every asset the paper account holds (10000 USDT, 10000 USDC, 0.5 BTC), not only the traded pair's.
      expect(
        balances.text
          .split('\n')
          .slice(1)
          .map((line) => line.split(' ')[0])
          .sort(),
      ).toEqual(['BTC', 'USDC', 'USDT']);
      expect(balances.text).toMatch(/\nUSDC 10,?000(\n|$)/);
      bot.say(111, '/status');
      await waitFor(
        'the status',
        () =>
          bot.sent.some(
            (m) => m.text.startsWith('PAPER · status\nkill switch: ON') && m.text.includes('\nstop-buy: ON'),
          ),
        { daemon },
      );
      // The kill switch blocks everything, an exit too: the answer says why.
      bot.say(111, '/exit churn');
      bot.say(111, '/reload');
      bot.say(111, '/version');
      await waitFor('the version', () => bot.sent.some((m) => /^PAPER · version\n0\.1\.0/.test(m.text)), { daemon });
      // Closed trades and profit per period, from the running daemon's journal through the operator layer.
      for (const command of ['/trades 3', '/profit', '/daily', '/weekly', '/monthly']) bot.say(111, command);
      await waitFor('the monthly profit', () => bot.sent.some((m) => m.text.startsWith('PAPER · monthly profit')), {
        daemon,
      });
      for (const command of ['/performance', '/count', '/logs 5']) bot.say(111, command);
      await waitFor('the logs', () => bot.sent.some((m) => m.text.startsWith('PAPER · last 5 warnings')), { daemon });
      // The kill switch turned off through the API: told to the chat once, as the action (who, what, outcome);
      // the same again changes nothing and is not told.
      expect((await api('/kill-switch', 'PUT', { on: false })).status).toBe(200);
      expect((await api('/kill-switch', 'PUT', { on: false })).body).toMatchObject({ changed: false });
      await waitFor(
        'the action told',
        () => bot.sent.some((m) => /operator kill-switch off → off \(api 127\.0\.0\.1\)/.test(m.text)),
        { daemon },
      );
      // Later than the action's own kill-switch row would have been told: a grouped burst, then the answer.
      bot.say(111, '/version');
      await waitFor(
        'the second version',
        () => bot.sent.filter((m) => m.text.startsWith('PAPER · version')).length === 2,
        { daemon },
      );
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      await Promise.all([hook.close(), bot.close()]);
    }
    // The stop is told before the database closes (alone, or grouped with the instance's own stop).
    expect(bot.sent.at(-1)?.text).toMatch(/^PAPER · [^]*daemon stopped: SIGTERM$/);
    expect(bot.sent.every((m) => m.chatId === '111' && m.text.startsWith('PAPER · '))).toBe(true);
    for (const r of hook.received)
      expect(r.headers[SIGNATURE_HEADER]).toBe(
        `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(r.body).digest('hex')}`,
      );
    // The control API's actions, journaled as it journals them, with the chat as their source.
    expect(events(db, 'operator')).toMatchObject([
      { action: 'kill-switch', on: true, outcome: 'on', source: 'telegram:111' },
      { action: 'stop-buy', on: true, outcome: 'on', source: 'telegram:111' },
      { action: 'pause', instance: 'churn', outcome: 'paused', changed: true, source: 'telegram:111' },
      { action: 'pause', instance: 'churn', outcome: 'already paused', changed: false, source: 'telegram:111' },
      { action: 'resume', instance: 'churn', outcome: 'resumed', source: 'telegram:111' },
      { action: 'exit', instance: 'churn', outcome: 'failed', source: 'telegram:111' },
      { action: 'reload', outcome: 'nothing changed', source: 'telegram:111' },
      { action: 'kill-switch', on: false, outcome: 'off', changed: true, source: 'api 127.0.0.1' },
      { action: 'kill-switch', on: false, outcome: 'already off', changed: false, source: 'api 127.0.0.1' },
    ]);
    const replies = bot.sent.map((m) => m.text);
    expect(replies).toEqual(
      expect.arrayContaining([
        'PAPER · churn paused',
        'PAPER · churn already paused',
        'PAPER · churn resumed',
        'PAPER · reload: nothing changed',
        expect.stringMatching(
          /^PAPER · last 3 closed trades\n#\d+ churn BTCUSDT (long|short) [\d.]+ · [\d.]+ → [\d.]+ · [+-][\d.]+ USDT /,
        ) as string,
        expect.stringMatching(/^PAPER · profit of closed trades\nUSDT: [+-][\d.]+ · \d+ trades · /) as string,
        expect.stringMatching(/^PAPER · daily profit \(UTC\)\n\d{4}-\d\d-\d\d USDT [+-][\d.]+ · \d+ trades/) as string,
        expect.stringMatching(/^PAPER · weekly profit \(UTC\)\n\d{4}-\d\d-\d\d USDT /) as string,
        expect.stringMatching(/^PAPER · monthly profit \(UTC\)\n\d{4}-\d\d USDT /) as string,
        expect.stringMatching(
          /^PAPER · refused: exit of churn refused: kill switch file .* exists: no new orders \(nothing cancelled\); (the instance holds nothing|the position is protected by .+|no stop protects the position on the exchange now)$/,
        ) as string,
      ]),
    );
    // Each action is answered once: what it recorded is not told to the chat again as a notification.
    const told = replies.join('\n');
    expect(told).not.toContain('PAUSED: paused by the operator');
    expect(told).not.toContain('KILL SWITCH ON');
    expect(told).not.toContain('STOP-BUY ON');
    expect(told).not.toMatch(/operator (pause|resume|kill-switch|stop-buy|exit|reload).*\(telegram:111\)/);
    // An action from elsewhere reaches the chat as one line, its repeat not at all.
    expect(told.match(/operator kill-switch/g)).toHaveLength(1);
    expect(told).not.toContain('already off');
    expect(told).not.toContain('kill switch off: orders allowed again');
    // A refusal while the kill switch was on says when it happened (it is told after the switch is off).
    expect(told).toMatch(/churn order refused at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: kill switch file .* exists/);
    expect(told).not.toMatch(/order refused: kill switch/);
    expect(replies).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^PAPER · performance of closed trades\nby pair:\nBTCUSDT [+-][\d.]+ USDT · \d+ trades · /,
        ) as string,
        expect.stringMatching(/^PAPER · open trades: [01] \(no maxOpenTrades limit\)/) as string,
        // The warnings of the run: the kill switch's refusals among them, no secret (checked below with the rest).
        expect.stringMatching(/^PAPER · last 5 warnings and errors \(wall clock, UTC\)\n.*WARN/) as string,
      ]),
    );
    expect(replies.filter((t) => t === 'PAPER · churn resumed')).toHaveLength(1);
    // Another channel still gets them; an operator's pause is a warning there, not an error.
    const hookNotices = hook.received.flatMap(
      (r) =>
        (r.json as { notifications: { kind: string; level: string; data: Record<string, unknown> }[] }).notifications,
    );
    const operatorPause = hookNotices.find(
      (n) => n.kind === 'paused' && String(n.data.reason).includes('telegram:111'),
    );
    expect(operatorPause?.level).toBe('warn');
    expect(hookNotices.some((n) => n.kind === 'operator' && n.data.action === 'resume')).toBe(true);
    // Both brakes are told there: the kill switch and stop-buy, each as it turned on.
    expect(hookNotices.filter((n) => n.kind === 'kill-switch' && n.data.on === true)).toHaveLength(1);
    expect(hookNotices.filter((n) => n.kind === 'stop-buy' && n.data.on === true)).toHaveLength(1);
    expect(daemon.messages(/ignoring messages from chat 999/)).toHaveLength(1);
    expect(daemon.messages(/webhook: dropping notifications/)).toHaveLength(1);
    const sent = events(db, 'notification-sent');
    expect(sent.some((e) => e.channel === 'telegram:111' && Number(e.count) > 0)).toBe(true);
    expect(sent.some((e) => e.channel === 'webhook' && Number(e.count) > 0)).toBe(true);
    const everything = [
      ...daemon.lines,
      ...bot.sent.map((m) => m.text),
      ...hook.received.map((r) => r.body),
      ...readDb(db, (d) => d.prepare('SELECT data FROM events').pluck().all() as string[]),
    ].join('\n');
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(WEBHOOK_SECRET);
  }, 120_000);
});
