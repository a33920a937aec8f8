/** The transport contract (transport-contract.ts) against each transport, each with a local stand-in receiver. */
import { DiscordTransport } from '../../src/notify/discord.js';
import { TelegramApi, TelegramTransport } from '../../src/notify/telegram.js';
import { WebhookTransport } from '../../src/notify/webhook.js';
import { type Answer, CONTRACT_TIMEOUT_MS, runTransportContract } from './transport-contract.js';
import { BotApi, Receiver } from './stand-ins.js';

/** An address where nothing listens: the port of a receiver that was closed. */
async function deadUrl(): Promise<string> {
  const r = await Receiver.start();
  const url = r.url;
  await r.close();
  return url;
}

/** Answers a Receiver gives, one kind per transport's wire (webhook: Retry-After header; Discord: body). */
function receiverAnswers(r: Receiver, slowDown: { status: number; body: string; headers?: Record<string, string> }) {
  const queue: Answer[] = [];
  r.status = () => {
    const next = queue.shift() ?? 'ok';
    if (next === 'hold') return 'hold';
    return { ok: 204, busy: 503, 'slow-down': slowDown, refused: 404 }[next];
  };
  return (next: Answer) => queue.push(next);
}

runTransportContract('webhook', async () => {
  const r = await Receiver.start();
  const secret = 'contract-webhook-secret';
  const path = '/hooks/contract-path-token';
  const make = (url: string) => new WebhookTransport({ url, secret, timeoutMs: CONTRACT_TIMEOUT_MS, redact: (t) => t });
  const dead = await deadUrl();
  return {
    transport: make(`${r.url}${path}`),
    answer: receiverAnswers(r, { status: 429, body: '', headers: { 'retry-after': '1' } }),
    delivered: () => r.received.map((x) => (x.json as { text: string }).text),
    secrets: [secret, path],
    unreachable: () => make(`${dead}${path}`),
    close: () => r.close(),
  };
});

runTransportContract('discord', async () => {
  const r = await Receiver.start();
  const path = '/api/webhooks/42/contract-discord-token';
  const make = (url: string) => new DiscordTransport({ url, timeoutMs: CONTRACT_TIMEOUT_MS });
  const dead = await deadUrl();
  return {
    transport: make(`${r.url}${path}`),
    answer: receiverAnswers(r, { status: 429, body: JSON.stringify({ retry_after: 1, global: false }) }),
    delivered: () => r.received.map((x) => (x.json as { content: string }).content),
    secrets: ['contract-discord-token'],
    unreachable: () => make(`${dead}${path}`),
    close: () => r.close(),
  };
});

runTransportContract('telegram', async () => {
  const token = '777:contract-telegram-token';
  const bot = await BotApi.start(token);
  const queue: Answer[] = [];
  bot.sendStatus = () => {
    const next = queue.shift() ?? 'ok';
    return next === 'hold' ? 'hold' : { ok: 200, busy: 502, 'slow-down': 429, refused: 400 }[next];
  };
  const make = (baseUrl: string) =>
    new TelegramTransport(
      new TelegramApi({
        baseUrl,
        token,
        timeoutMs: CONTRACT_TIMEOUT_MS,
        redact: (t) => t.split(token).join('[redacted]'),
      }),
      '-100123',
    );
  const dead = await deadUrl();
  return {
    transport: make(bot.url),
    answer: (next) => queue.push(next),
    delivered: () => bot.sent.map((m) => m.text),
    secrets: [token],
    unreachable: () => make(dead),
    close: () => bot.close(),
  };
});
