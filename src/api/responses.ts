/**
 * How the daemon's HTTP face answers a problem and reads a request: one JSON error shape with a stable code,
 * zod problems named by where they are (`query.limit`, `body.on`), and a JSON body read strictly.
 */
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { z } from 'zod';
import { ERROR_STATUS, type ErrorCode, type HttpErrorStatus } from '../errors.js';

/** The error answer: `{error: {code, message, …extra}}` with the code's HTTP status (src/errors.ts), or a finer one. */
export function fail(
  c: Context,
  code: ErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
  status: HttpErrorStatus = ERROR_STATUS[code],
) {
  return c.json({ error: { code, message, ...extra } }, status);
}

/** The first problem of a zod error, naming where (`query.limit`, `body.on`), and every problem. */
export function badRequest(c: Context, where: 'query' | 'body', error: z.ZodError) {
  const issues = error.issues.map((i) => ({ field: [where, ...i.path].join('.'), message: i.message }));
  const first = issues[0];
  return fail(c, 'E_BAD_REQUEST', first ? `${first.field}: ${first.message}` : `${where}: invalid`, { issues });
}

/** The query string checked against `schema`. */
export const query = <T extends z.ZodType>(c: Context, schema: T) => schema.safeParse(c.req.query());

/** The JSON body (absent counts as `{}`), or the 400/415 response already made. */
export async function body<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T> | Response> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
      return fail(c, 'E_BAD_REQUEST', 'body: expected Content-Type: application/json', {}, 415);
    try {
      value = JSON.parse(text);
    } catch {
      return fail(c, 'E_BAD_REQUEST', 'body: not valid JSON');
    }
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : badRequest(c, 'body', parsed.error);
}

/** The caller's address (for the journal and the failure count). */
export function remoteAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
