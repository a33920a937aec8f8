import { createHmac } from 'node:crypto';

/**
 * The exchange's signature: lowercase hex HMAC-SHA256 of the query string, keyed with the API secret
 * (spot-api.md, Authentication). The message is exactly the text that is sent, `timestamp=…` last.
 */
export function sign(secret: string, queryString: string): string {
  return createHmac('sha256', secret).update(queryString).digest('hex');
}

/**
 * Appends `timestamp` (last, as the exchange requires) and the signature of everything before it.
 * The returned text goes on the wire unchanged: nothing may re-encode it after signing.
 */
export function signQuery(
  secret: string,
  unsignedQuery: string,
  timestamp: number,
): { query: string; signature: string } {
  const signed = `${unsignedQuery === '' ? '' : `${unsignedQuery}&`}timestamp=${timestamp}`;
  const signature = sign(secret, signed);
  return { query: `${signed}&signature=${signature}`, signature };
}
