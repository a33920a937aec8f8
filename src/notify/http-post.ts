/**
 * The one HTTP call every channel makes: a JSON POST with a time limit, whose failure says whether to try
 * again (and when) or to give up. Error messages name the channel, never the URL: a Telegram URL holds the
 * bot token and a Discord webhook URL is a secret of its own.
 */
import { request } from 'undici';
import { BotError } from '../errors.js';
import { parseRetryAfter } from '../ops/rate-limiter.js';

/** A notification that did not get through: whether, and when, to try again. */
export class DeliveryError extends BotError {
  constructor(
    message: string,
    /** The receiver asked to wait this long before the next try (HTTP 429). */
    readonly retryAfterMs: number | undefined = undefined,
    /** A retry cannot help (bad token, unknown chat, a 4xx): the message is dropped at once. */
    readonly permanent = false,
  ) {
    super('E_NOTIFY_DELIVERY', message);
  }
}

export interface PostResult {
  status: number;
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

const header = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** POSTs `body` (already serialised JSON); transport failures become retryable DeliveryErrors. */
export async function postJson(
  channel: string,
  url: string,
  body: string,
  options: { headers?: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
): Promise<PostResult> {
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      signal: options.signal,
    });
    return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new DeliveryError(`${channel}: ${typeof code === 'string' ? code : 'request failed'}`);
  }
}

/**
 * The usual meaning of an HTTP answer for a notification: 2xx delivered; 429 wait (Retry-After, or the
 * delay the body names); 408 and 5xx try again; any other 4xx will fail the same way every time.
 */
export function checkStatus(channel: string, res: PostResult, retryAfterMs?: number, detail = ''): void {
  if (res.status >= 200 && res.status < 300) return;
  const what = `${channel}: HTTP ${res.status}${detail === '' ? '' : ` (${detail})`}`;
  if (res.status === 429)
    throw new DeliveryError(what, retryAfterMs ?? parseRetryAfter(header(res.headers['retry-after']), Date.now()));
  throw new DeliveryError(what, undefined, res.status < 500 && res.status !== 408);
}

/** The body as JSON, or undefined when it is not (an error page). */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
