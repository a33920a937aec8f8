/**
 * Discord: an incoming webhook (`https://discord.com/api/webhooks/<id>/<token>`; the URL is the secret).
 * Plain content, no mentions; a 429 carries `retry_after` in seconds in its body.
 */
import { z } from 'zod';
import { checkStatus, postJson, safeJson } from './http-post.js';
import type { OutgoingMessage } from './message.js';
import type { Transport } from './transport.js';

const RateLimited = z.looseObject({ retry_after: z.number().nonnegative() });

export class DiscordTransport implements Transport {
  readonly name = 'discord';
  readonly maxLength = 2000;

  constructor(private readonly options: { url: string; timeoutMs: number }) {}

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<void> {
    const body = JSON.stringify({ content: message.text, allowed_mentions: { parse: [] } });
    const res = await postJson(this.name, this.options.url, body, { timeoutMs: this.options.timeoutMs, signal });
    let retryAfterMs: number | undefined;
    if (res.status === 429) {
      const parsed = RateLimited.safeParse(safeJson(res.text));
      if (parsed.success) retryAfterMs = Math.ceil(parsed.data.retry_after * 1000);
    }
    checkStatus(this.name, res, retryAfterMs);
  }
}
