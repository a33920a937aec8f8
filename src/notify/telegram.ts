/**
 * Telegram's Bot API: `sendMessage` for notifications and replies, `getUpdates` (long polling) for commands.
 * The base URL is configurable (a local stand-in in tests); the token is part of every request's path, so no
 * URL ever reaches an error or a log line: errors name `telegram` and the API's own description.
 */
import { z } from 'zod';
import { DeliveryError, checkStatus, postJson, safeJson } from './http-post.js';
import type { OutgoingMessage } from './message.js';
import type { Transport } from './transport.js';

const ApiAnswer = z.looseObject({
  ok: z.boolean(),
  result: z.unknown().optional(),
  description: z.string().optional(),
  parameters: z.looseObject({ retry_after: z.number().nonnegative().optional() }).optional(),
});

const Update = z.looseObject({
  update_id: z.number().int(),
  message: z
    .looseObject({
      date: z.number(),
      chat: z.looseObject({ id: z.union([z.number(), z.string()]).transform(String) }),
      text: z.string().optional(),
    })
    .optional(),
});

/** One incoming chat message (other update types are skipped). */
export interface ChatMessage {
  updateId: number;
  chatId: string;
  /** Epoch ms (Telegram sends seconds). */
  time: number;
  text: string;
}

export class TelegramApi {
  constructor(
    private readonly options: {
      baseUrl: string;
      token: string;
      timeoutMs: number;
      redact: (text: string) => string;
    },
  ) {}

  private async call(method: string, payload: unknown, timeoutMs: number, signal?: AbortSignal): Promise<unknown> {
    const url = `${this.options.baseUrl.replace(/\/+$/, '')}/bot${this.options.token}/${method}`;
    const res = await postJson('telegram', url, JSON.stringify(payload), { timeoutMs, signal });
    const parsed = ApiAnswer.safeParse(safeJson(res.text));
    const answer = parsed.success ? parsed.data : undefined;
    const retryAfter = answer?.parameters?.retry_after;
    const detail = this.options.redact(answer?.description ?? '');
    checkStatus(`telegram ${method}`, res, retryAfter === undefined ? undefined : retryAfter * 1000, detail);
    if (answer?.ok !== true) throw new DeliveryError(`telegram ${method}: unexpected answer (${detail || 'not ok'})`);
    return answer.result;
  }

  async sendMessage(chatId: string, text: string, signal?: AbortSignal): Promise<void> {
    await this.call(
      'sendMessage',
      { chat_id: chatId, text, link_preview_options: { is_disabled: true } },
      this.options.timeoutMs,
      signal,
    );
  }

  /** Waits up to `waitSeconds` for updates after `offset`; malformed updates are skipped but still counted. */
  async getUpdates(
    offset: number | undefined,
    waitSeconds: number,
    signal?: AbortSignal,
  ): Promise<{ messages: ChatMessage[]; nextOffset: number | undefined }> {
    const result = await this.call(
      'getUpdates',
      { ...(offset === undefined ? {} : { offset }), timeout: waitSeconds, allowed_updates: ['message'] },
      this.options.timeoutMs + waitSeconds * 1000,
      signal,
    );
    const list = Array.isArray(result) ? (result as unknown[]) : [];
    let nextOffset = offset;
    const messages: ChatMessage[] = [];
    for (const raw of list) {
      const id = (raw as { update_id?: unknown }).update_id;
      if (typeof id === 'number') nextOffset = Math.max(nextOffset ?? 0, id + 1);
      const u = Update.safeParse(raw);
      if (!u.success || u.data.message?.text === undefined) continue;
      const m = u.data.message;
      messages.push({ updateId: u.data.update_id, chatId: m.chat.id, time: m.date * 1000, text: m.text ?? '' });
    }
    return { messages, nextOffset };
  }
}

/** Notifications to one chat. */
export class TelegramTransport implements Transport {
  readonly name: string;
  readonly maxLength = 4000;

  constructor(
    private readonly api: TelegramApi,
    private readonly chatId: string,
  ) {
    this.name = `telegram:${chatId}`;
  }

  send(message: OutgoingMessage, signal: AbortSignal): Promise<void> {
    return this.api.sendMessage(this.chatId, message.text, signal);
  }
}
