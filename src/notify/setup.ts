/**
 * The notifier as the environment configures it: one channel per webhook, Discord webhook and Telegram chat
 * set, each with its kinds and minimum level; Telegram chat commands when asked for. Undefined when no
 * channel is configured. The daemon starts it once it runs (a start that fails writes nothing, so nothing is
 * told of it but its log) and stops it just before the store closes, so its own start and stop are told too.
 */
import { type CoreEnv, secretValues } from '../config/env.js';
import type { NotifyEnv } from './env.js';
import type { Logger } from '../ops/logger.js';
import type { Store } from '../store/store.js';
import type { ChannelOptions } from './channel-queue.js';
import { type ChatOperator, ChatCommands } from './chat-commands.js';
import { DiscordTransport } from './discord.js';
import type { Level, NoticeKind } from './event-kinds.js';
import { type Mode, redactor } from './message.js';
import { type Cursor, Notifier } from './notifier.js';
import { TelegramApi, TelegramTransport } from './telegram.js';
import type { Timers } from '../ports/clock.js';
import { wallClock } from '../clocks/wall-clock.js';
import type { Transport } from './transport.js';
import { WebhookTransport } from './webhook.js';

const HTTP_TIMEOUT_MS = 10_000;

/**
 * Messages per second each kind of channel is allowed (Telegram: about one a second per chat). The webhook
 * sends one notification per message (its id is the message's Idempotency-Key), so it may send more often.
 */
const RATES = {
  webhook: { requestsPerSecond: 10, burst: 10 },
  discord: { requestsPerSecond: 1, burst: 3 },
  telegram: { requestsPerSecond: 1, burst: 1 },
} as const;

export interface Notifications {
  notifier: Notifier;
  /**
   * Once the daemon can act (after the engine started): follows the operator's actions (each told to a person once,
   * Notifier.acting) and attaches the chat commands.
   */
  attachCommands(operator: ChatOperator): void;
  stop(deadlineMs: number): Promise<void>;
}

export function notificationsFromEnv(
  env: NotifyEnv & CoreEnv,
  deps: {
    store: Store;
    logger: Logger;
    mode: Mode;
    timers?: Timers;
    venueClock?: Timers;
    /** When the daemon began its start (default now): a chat command sent before it was sent while it was not running. */
    startedAt?: number;
    /** Where this run's records begin (NotifierOptions.runBegan). */
    runBegan?: Cursor;
  },
): Notifications | undefined {
  const timers = deps.timers ?? wallClock;
  const startedAt = deps.startedAt ?? timers.now();
  const redact = redactor(secretValues(env));
  const options = (
    kinds: 'all' | readonly NoticeKind[],
    minLevel: Level,
    rate: keyof typeof RATES,
  ): ChannelOptions => ({
    kinds: kinds === 'all' ? 'all' : new Set(kinds),
    minLevel,
    groupMs: env.NOTIFY_GROUP_MS,
    capacity: env.NOTIFY_QUEUE_SIZE,
    maxPerMessage: 50,
    retryForMs: env.NOTIFY_RETRY_FOR_MS,
    backoff: { baseMs: 1000, maxMs: 30_000 },
    rate: RATES[rate],
  });
  const channels: { transport: Transport; options: ChannelOptions }[] = [];
  if (env.NOTIFY_WEBHOOK_URL !== undefined && env.NOTIFY_WEBHOOK_SECRET !== undefined)
    channels.push({
      transport: new WebhookTransport({
        url: env.NOTIFY_WEBHOOK_URL,
        secret: env.NOTIFY_WEBHOOK_SECRET,
        timeoutMs: HTTP_TIMEOUT_MS,
        redact,
      }),
      // One notification per message, at once: a receiver drops repeats by the message's Idempotency-Key.
      options: {
        ...options(env.NOTIFY_WEBHOOK_EVENTS, env.NOTIFY_WEBHOOK_LEVEL, 'webhook'),
        maxPerMessage: 1,
        groupMs: 0,
        everyRow: true,
      },
    });
  if (env.DISCORD_WEBHOOK_URL !== undefined)
    channels.push({
      transport: new DiscordTransport({ url: env.DISCORD_WEBHOOK_URL, timeoutMs: HTTP_TIMEOUT_MS }),
      options: options(env.DISCORD_EVENTS, env.DISCORD_LEVEL, 'discord'),
    });
  let api: TelegramApi | undefined;
  const chats = env.TELEGRAM_CHAT_ID ?? [];
  if (env.TELEGRAM_BOT_TOKEN !== undefined) {
    api = new TelegramApi({
      baseUrl: env.TELEGRAM_API_URL,
      token: env.TELEGRAM_BOT_TOKEN,
      timeoutMs: HTTP_TIMEOUT_MS,
      redact,
    });
    for (const chat of chats)
      channels.push({
        transport: new TelegramTransport(api, chat),
        options: options(env.TELEGRAM_EVENTS, env.TELEGRAM_LEVEL, 'telegram'),
      });
  }
  if (channels.length === 0) return undefined;
  const notifier = new Notifier({
    store: deps.store,
    logger: deps.logger,
    mode: deps.mode,
    timers,
    venueClock: deps.venueClock,
    channels,
    redact,
    pollMs: 1000,
    dailySummaryAt: env.NOTIFY_DAILY_SUMMARY,
    killSwitchFile: env.KILL_SWITCH_FILE,
    runBegan: deps.runBegan,
  });
  notifier.start();
  let commands: ChatCommands | undefined;
  return {
    notifier,
    attachCommands(operator) {
      operator.act.observe((start) => notifier.acting(start));
      if (api === undefined || !env.TELEGRAM_COMMANDS || commands !== undefined) return;
      const telegram = api;
      commands = new ChatCommands({
        api: telegram,
        chatIds: new Set(chats),
        operator,
        mode: deps.mode,
        logger: deps.logger,
        timers,
        startedAt,
        reply: async (chatId, text) => {
          await notifier.channels.find((c) => c.name === `telegram:${chatId}`)?.limiter.acquire();
          await telegram.sendMessage(chatId, redact(text));
        },
      });
      commands.start();
    },
    async stop(deadlineMs) {
      await commands?.stop();
      await notifier.stop(deadlineMs);
    },
  };
}
