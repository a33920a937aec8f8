/**
 * How the simulated exchange authenticates a private request, as the live one does (spot-api.md,
 * Authentication): `x-api-key` names the account; `signature` is the lowercase hex HMAC-SHA256, keyed with the
 * account's secret, of the RAW query string exactly as received up to `&signature=`; `signature` must be the
 * last parameter and `timestamp` (epoch ms) the last signed one, within a window of the server's time.
 *
 * A refusal's message says which check failed and shows only what the client itself sent (never the secret or
 * the expected signature); the server answers it with HTTP 401 in the exchange's `{statusCode, message, error}`
 * shape.
 */
import { timingSafeEqual } from 'node:crypto';
import { sign } from '../wire/signing.js';

export type AuthResult = { ok: true; apiKey: string } | { ok: false; message: string };

export interface AuthRequest {
  /** The query string as received, without the leading '?'. */
  rawQuery: string;
  /** The `x-api-key` header (the first one, when repeated). */
  apiKey: string | undefined;
}

export interface AuthPolicy {
  /** The secret of a known key, undefined for any other. */
  secretOf(apiKey: string): string | undefined;
  /** Server time, epoch ms. */
  now: number;
  /** Accepted |now - timestamp| in ms. */
  windowMs: number;
}

const SIGNATURE = /^[0-9a-f]{64}$/;
const MISSING = 'Missing API key, signature, or timestamp';

export function authenticate(request: AuthRequest, policy: AuthPolicy): AuthResult {
  const { rawQuery, apiKey } = request;
  if (apiKey === undefined || apiKey === '') return { ok: false, message: MISSING };
  const secret = policy.secretOf(apiKey);
  if (secret === undefined) return { ok: false, message: 'Invalid API key' };

  const amp = rawQuery.lastIndexOf('&signature=');
  if (amp < 0 && !rawQuery.startsWith('signature=')) return { ok: false, message: MISSING };
  const signed = amp < 0 ? '' : rawQuery.slice(0, amp);
  const signatureText = rawQuery.slice(amp < 0 ? 'signature='.length : amp + '&signature='.length);
  if (signatureText.includes('&')) return { ok: false, message: 'signature must be the last query parameter' };

  const timestamp = /(?:^|&)timestamp=([^&]*)$/.exec(signed)?.[1];
  if (timestamp === undefined) {
    return /(^|&)timestamp=/.test(signed)
      ? { ok: false, message: 'timestamp must be the last signed parameter, just before signature' }
      : { ok: false, message: MISSING };
  }
  if (!/^\d{1,16}$/.test(timestamp))
    return { ok: false, message: `timestamp must be epoch milliseconds, got '${timestamp.slice(0, 40)}'` };

  const expected = Buffer.from(sign(secret, signed), 'hex');
  const given = SIGNATURE.test(signatureText) ? Buffer.from(signatureText, 'hex') : undefined;
  if (given === undefined || !timingSafeEqual(given, expected)) return { ok: false, message: 'Invalid signature' };

  const skew = policy.now - Number(timestamp);
  if (Math.abs(skew) > policy.windowMs) {
    const side = skew > 0 ? 'behind' : 'ahead of';
    return {
      ok: false,
      message: `timestamp ${timestamp} is ${Math.abs(skew)} ms ${side} server time ${policy.now}; accepted window ±${policy.windowMs} ms`,
    };
  }
  return { ok: true, apiKey };
}
