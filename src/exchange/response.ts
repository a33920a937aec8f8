/**
 * Reading an answer: the envelope (`{status: "ok", data}`), the two error shapes of exchange-notes.md, and
 * the zod schema of `data`. Every outcome that is not data becomes a typed error naming the endpoint.
 */
import { parseRetryAfter } from '../ops/rate-limiter.js';
import type { z } from 'zod';
import { BrokerErrorSchema, HttpErrorBodySchema } from '../wire/schemas.js';
import {
  AuthError,
  type ExchangeClientError,
  ExchangeRejectedError,
  HttpStatusError,
  RateLimitError,
  ResponseShapeError,
} from './errors.js';

export interface RawResponse {
  endpoint: string;
  status: number;
  retryAfter: string | undefined;
  text: string;
  /** For a 401: how far the request's timestamp was from the exchange's clock, when that is the likely cause. */
  clockSkewMs?: number;
}

type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

function pathText(path: Path): string {
  let out = 'data';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

function kindOf(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'array';
  return typeof input;
}

/** Union branches report their own issues; the branch that got deepest is the one the data meant to match. */
function leaves(issue: Issue, base: Path): { path: Path; issue: Issue }[] {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    return issue.errors.flatMap((branch) => branch.flatMap((i) => leaves(i, path)));
  }
  return [{ path, issue }];
}

/** The first problem of a failed parse as `data.a[0].b` and what was expected there (never the value itself). */
export function describeIssues(issues: readonly Issue[]): { path: string; problem: string } {
  const first = issues[0];
  if (!first) return { path: 'data', problem: 'invalid' };
  const all = leaves(first, []);
  const depth = Math.max(...all.map((l) => l.path.length));
  const deepest = all.filter((l) => l.path.length === depth);
  const pick = deepest.find((l) => l.issue.code !== 'invalid_type') ?? deepest[0]!;
  const { issue } = pick;
  let problem = issue.message;
  if (issue.code === 'invalid_type') {
    problem =
      issue.input === undefined
        ? `expected ${issue.expected}, field missing`
        : `expected ${issue.expected}, got ${kindOf(issue.input)}`;
  }
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : '';
  return { path: pathText(pick.path), problem: problem + more };
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** What an error body says, in whichever of the two shapes it came. */
function exchangeFields(body: unknown, scrub: (text: string) => string) {
  const broker = BrokerErrorSchema.safeParse(body);
  if (broker.success) {
    const { code, data, message } = broker.data;
    return {
      brokerStatus: broker.data.status,
      exchangeCode: code ?? undefined,
      requestId: data?.requestId ?? undefined,
      exchangeMessage: message ? scrub(message) : broker.data.status,
    };
  }
  const http = HttpErrorBodySchema.safeParse(body);
  if (http.success) {
    const { message, error } = http.data;
    const text = Array.isArray(message) ? message.join('; ') : (message ?? error ?? undefined);
    return {
      brokerStatus: undefined,
      exchangeCode: undefined,
      requestId: undefined,
      exchangeMessage: text ? scrub(text) : undefined,
    };
  }
  return undefined;
}

/**
 * The data of a successful answer, parsed with `schema`; anything else is thrown as the matching error.
 * `scrub` removes the request's secret material from any text the exchange echoes back.
 */
export function readResponse<T>(
  raw: RawResponse,
  schema: z.ZodType<T>,
  scrub: (text: string) => string,
  now: number,
): T {
  const { endpoint, status } = raw;
  const json = tryJson(raw.text);
  const fields = json.ok ? exchangeFields(json.value, scrub) : undefined;
  const details = {
    endpoint,
    status,
    exchangeCode: fields?.exchangeCode,
    requestId: fields?.requestId,
    exchangeMessage: fields?.exchangeMessage,
  };
  if (status === 401) throw new AuthError(details, raw.clockSkewMs);
  if (status === 429) throw new RateLimitError({ ...details, retryAfterMs: parseRetryAfter(raw.retryAfter, now) });
  if (status >= 500) throw new HttpStatusError({ ...details, reason: 'server error' });
  if (!json.ok) throw new HttpStatusError({ endpoint, status, reason: 'answer is not JSON' });

  const ok = status >= 200 && status < 300;
  const body = json.value;
  if (ok && typeof body === 'object' && body !== null && (body as { status?: unknown }).status === 'ok') {
    const parsed = schema.safeParse((body as { data?: unknown }).data, { reportInput: true });
    if (parsed.success) return parsed.data;
    throw new ResponseShapeError({ endpoint, status, ...describeIssues(parsed.error.issues), cause: parsed.error });
  }
  if (fields && fields.brokerStatus !== 'ok') throw new ExchangeRejectedError(details);
  const error: ExchangeClientError = ok
    ? new ResponseShapeError({
        endpoint,
        status,
        path: 'status',
        problem: 'expected the {"status": "ok", "data": …} envelope',
      })
    : new HttpStatusError({ endpoint, status, reason: 'unexpected answer' });
  throw error;
}
