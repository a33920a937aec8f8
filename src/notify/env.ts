/**
 * The notifier's variables (NOTIFY_*, TELEGRAM_*, DISCORD_*): notify/ owns them, since only it knows the kinds
 * of notice a channel can be given. app/env.ts puts them in the one environment schema.
 */
import { z } from 'zod';
import { flag, httpUrl, optional, positiveInt, withDefault } from '../config/env.js';
import { isNoticeKind, LEVELS, NOTICE_KINDS, type NoticeKind } from './event-kinds.js';

/** `all` (default) or a comma-separated list of the kinds the notifier knows. */
const kindList = (channel: string) =>
  withDefault(
    z.string().transform((text, ctx): 'all' | NoticeKind[] => {
      const items = text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (items.length === 1 && items[0] === 'all') return 'all';
      const kinds = items.filter(isNoticeKind);
      const unknown = items.filter((k) => !isNoticeKind(k));
      if (kinds.length === 0 || unknown.length > 0) {
        ctx.addIssue({
          code: 'custom',
          message: `expected 'all' or kinds from: ${NOTICE_KINDS.join(', ')}${unknown.length > 0 ? ` (unknown: ${unknown.join(', ')})` : ''}`,
        });
        return z.NEVER;
      }
      return kinds;
    }),
    'all',
    `the notification kinds ${channel} gets: all, or a comma-separated list of kinds (docs/notifications.md)`,
  );
const level = (channel: string) =>
  withDefault(
    z.enum(LEVELS, { error: `expected one of ${LEVELS.join(', ')}` }),
    'info',
    `the least level ${channel} gets: ${LEVELS.join(', ')}`,
  );
/** `HH:MM` in UTC, or `off`. */
const utcTime = z.string().transform((text, ctx): number | undefined => {
  if (text === 'off') return undefined;
  const m = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(text);
  if (!m) {
    ctx.addIssue({ code: 'custom', message: "expected HH:MM (UTC, e.g. 00:00) or 'off'" });
    return z.NEVER;
  }
  return Number(m[1]) * 60 + Number(m[2]);
});
const chatIds = z.string().transform((text, ctx): string[] => {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (ids.length === 0 || ids.some((id) => !/^-?\d+$/.test(id))) {
    ctx.addIssue({ code: 'custom', message: 'expected chat ids (integers), comma-separated' });
    return z.NEVER;
  }
  return ids;
});

export const notifyEnv = {
  NOTIFY_WEBHOOK_URL: optional(
    httpUrl,
    'generic webhook: each notification POSTed here as JSON, signed with NOTIFY_WEBHOOK_SECRET (docs/notifications.md)',
  ),
  NOTIFY_WEBHOOK_SECRET: optional(
    z.string(),
    "the webhook's signing key (X-Signature-256: HMAC-SHA256 of the body); required with NOTIFY_WEBHOOK_URL",
  ),
  NOTIFY_WEBHOOK_EVENTS: kindList('the webhook'),
  NOTIFY_WEBHOOK_LEVEL: level('the webhook'),
  TELEGRAM_BOT_TOKEN: optional(z.string(), "the Telegram bot's token (from @BotFather)"),
  TELEGRAM_CHAT_ID: optional(
    chatIds,
    'the chats (integer ids, comma-separated) that get notifications and whose commands are answered',
  ),
  TELEGRAM_API_URL: withDefault(httpUrl, 'https://api.telegram.org', "Telegram's Bot API origin"),
  TELEGRAM_EVENTS: kindList('Telegram'),
  TELEGRAM_LEVEL: level('Telegram'),
  TELEGRAM_COMMANDS: withDefault(flag, 'true', 'answer chat commands (long polling getUpdates)'),
  DISCORD_WEBHOOK_URL: optional(httpUrl, 'a Discord incoming webhook (its URL holds its token)'),
  DISCORD_EVENTS: kindList('Discord'),
  DISCORD_LEVEL: level('Discord'),
  NOTIFY_DAILY_SUMMARY: withDefault(utcTime, '00:00', 'UTC time (HH:MM) of the daily summary, or off'),
  NOTIFY_GROUP_MS: withDefault(
    z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'),
    '3000',
    'how long the first notification of a burst waits for others to join it in one message, in ms',
  ),
  NOTIFY_QUEUE_SIZE: withDefault(
    positiveInt,
    '200',
    'notifications waiting per channel at most; beyond it the oldest are dropped',
  ),
  NOTIFY_RETRY_FOR_MS: withDefault(
    z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'),
    String(60 * 60 * 1000),
    'how long a message is retried (with a growing backoff, 1 s to 30 s apart) before it is dropped, in ms',
  ),
};

export type NotifyEnv = z.infer<z.ZodObject<typeof notifyEnv>>;

/** The notifier's variables that go in pairs. */
export function checkNotifyEnv(env: NotifyEnv, ctx: z.RefinementCtx): void {
  if (env.NOTIFY_WEBHOOK_URL !== undefined && env.NOTIFY_WEBHOOK_SECRET === undefined)
    ctx.addIssue({
      code: 'custom',
      path: ['NOTIFY_WEBHOOK_SECRET'],
      message: 'required when NOTIFY_WEBHOOK_URL is set (receivers verify the signature with it)',
    });
  if ((env.TELEGRAM_BOT_TOKEN === undefined) !== (env.TELEGRAM_CHAT_ID === undefined)) {
    const [absent, present] =
      env.TELEGRAM_BOT_TOKEN === undefined
        ? ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_CHAT_ID']
        : ['TELEGRAM_CHAT_ID', 'TELEGRAM_BOT_TOKEN'];
    ctx.addIssue({ code: 'custom', path: [absent], message: `required when ${present} is set` });
  }
}
