/**
 * Generic webhook: the notification as JSON, POSTed with `X-Signature-256: sha256=<hex>`, the HMAC-SHA256 of
 * the exact body bytes under the user's secret, so a receiver can check where it came from (as GitHub's
 * webhooks do). The secret itself never travels. Delivery is at least once (a restart resends a POST whose
 * answer it did not see): the notification's stable id is in the body (`id`) and in `Idempotency-Key`, the
 * same on every resend, so a receiver drops repeats by it.
 */
import { createHmac } from 'node:crypto';
import { levelOf, noticeText } from './event-kinds.js';
import { checkStatus, postJson } from './http-post.js';
import type { OutgoingMessage } from './message.js';
import type { Transport } from './transport.js';

export const SIGNATURE_HEADER = 'x-signature-256';
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/** `sha256=<hex>` of `body` under `secret`: what receivers compare (in constant time) with the header. */
export function webhookSignature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** The body a receiver gets. */
export function webhookBody(message: OutgoingMessage, redact: (text: string) => string): string {
  return redact(
    JSON.stringify({
      id: message.key,
      mode: message.mode,
      level: message.level,
      text: message.text,
      notifications: message.notices.map((n) => ({
        id: n.key,
        kind: n.kind,
        level: levelOf(n),
        instance: n.instance ?? null,
        time: new Date(n.time).toISOString(),
        text: noticeText(n),
        data: n.data,
      })),
    }),
  );
}

export class WebhookTransport implements Transport {
  readonly name = 'webhook';
  readonly maxLength = 4000;

  constructor(
    private readonly options: {
      url: string;
      secret: string;
      timeoutMs: number;
      redact: (text: string) => string;
    },
  ) {}

  async send(message: OutgoingMessage, signal: AbortSignal): Promise<void> {
    const body = webhookBody(message, this.options.redact);
    const res = await postJson(this.name, this.options.url, body, {
      headers: { [SIGNATURE_HEADER]: webhookSignature(this.options.secret, body), [IDEMPOTENCY_HEADER]: message.key },
      timeoutMs: this.options.timeoutMs,
      signal,
    });
    checkStatus(this.name, res);
  }
}
