/**
 * The notifier's variables (NOTIFY_*, TELEGRAM_*, DISCORD_*): notify/ owns them, since only it knows the kinds
 * of notice a channel can be given. app/env.ts puts them in the one environment schema.
 */
import { z } from 'zod';
import { flag, httpUrl, optional, positiveInt, withDefault } from '../config/env.js';
import { isNoticeKind, LEVELS, NOTICE_KINDS, type NoticeKind } from './event-kinds.js';

/** `all` (default) or a comma-separated list of the kinds the notifier knows. */
const kindList = withDefault(
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
);
const level = withDefault(z.enum(LEVELS, { error: `expected one of ${LEVELS.join(', ')}` }), 'info');
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
  /** Generic webhook: JSON POSTed here, signed with NOTIFY_WEBHOOK_SECRET. */
  NOTIFY_WEBHOOK_URL: optional(httpUrl),
  NOTIFY_WEBHOOK_SECRET: optional(z.string()),
  NOTIFY_WEBHOOK_EVENTS: kindList,
  NOTIFY_WEBHOOK_LEVEL: level,
  TELEGRAM_BOT_TOKEN: optional(z.string()),
  /** Chats that get notifications and whose commands are answered. */
  TELEGRAM_CHAT_ID: optional(chatIds),
  TELEGRAM_API_URL: withDefault(httpUrl, 'https://api.telegram.org'),
  TELEGRAM_EVENTS: kindList,
  TELEGRAM_LEVEL: level,
  /** Answer chat commands (long polling getUpdates). */
  TELEGRAM_COMMANDS: withDefault(flag, 'true'),
  /** Discord incoming webhook (its URL holds its token: a secret). */
  DISCORD_WEBHOOK_URL: optional(httpUrl),
  DISCORD_EVENTS: kindList,
  DISCORD_LEVEL: level,
  /** UTC time of the daily summary, or off. */
  NOTIFY_DAILY_SUMMARY: withDefault(utcTime, '00:00'),
  /** How long the first notification of a burst waits for others to join it in one message. */
  NOTIFY_GROUP_MS: withDefault(z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'), '3000'),
  /** Notifications waiting per channel at most; beyond it the oldest are dropped. */
  NOTIFY_QUEUE_SIZE: withDefault(positiveInt, '200'),
  /** How long a message is retried (with a growing backoff, 1 s to 30 s apart) before it is dropped. */
  NOTIFY_RETRY_FOR_MS: withDefault(
    z.coerce.number().int().nonnegative('expected milliseconds (0 or more)'),
    String(60 * 60 * 1000),
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
