/**
 * Who may use the control API. With API_TOKEN set: a bearer token, compared in constant time (both sides
 * hashed first, so neither the content nor the length leaks through timing). Without one (allowed on a
 * loopback listener only, env.ts refuses the rest): any local client, but only a request that names a loopback
 * host and comes from no other web origin, so that a web page in the operator's browser cannot steer the bot
 * (cross-site requests, DNS rebinding). /metrics and /readyz are guarded by a Host check in either mode
 * (`probeGuard`). Failed
 * attempts are logged once per source (within the listener's log budget for requests nobody authenticated)
 * and, past a limit, the source's guesses are refused unheard: a request that authenticates is always served.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { isLoopbackHost } from '../config/env.js';
import type { LogBudget } from '../ops/log-budget.js';
import type { Logger } from '../ops/logger.js';
import { fail } from './responses.js';

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Constant-time comparison of a presented token with the expected one. */
export function tokenMatches(expected: string, given: string): boolean {
  return timingSafeEqual(digest(expected), digest(given));
}

/** The token of an `Authorization: Bearer …` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

export interface FailureLimit {
  /** Failures of one source within `windowMs` after which it is refused until the window ends. */
  maxFailures: number;
  windowMs: number;
  /** Sources remembered at most (the oldest is forgotten first). */
  maxSources: number;
}

export const DEFAULT_FAILURE_LIMIT: FailureLimit = { maxFailures: 10, windowMs: 60_000, maxSources: 1_000 };

interface SourceRecord {
  windowStart: number;
  failures: number;
  logged: boolean;
}

/** Failed authentications per source address: one log line per source and window, then refusal past the limit. */
export class AuthFailures {
  private readonly sources = new Map<string, SourceRecord>();

  constructor(
    private readonly budget: LogBudget,
    private readonly now: () => number,
    private readonly limit: FailureLimit = DEFAULT_FAILURE_LIMIT,
  ) {}

  private record(source: string): SourceRecord {
    const now = this.now();
    let r = this.sources.get(source);
    if (r === undefined || now - r.windowStart >= this.limit.windowMs) {
      r = { windowStart: now, failures: 0, logged: false };
      this.sources.delete(source);
      if (this.sources.size >= this.limit.maxSources) {
        const oldest = this.sources.keys().next().value;
        if (oldest !== undefined) this.sources.delete(oldest);
      }
      this.sources.set(source, r);
    }
    return r;
  }

  /** Whether the source has failed too often lately: then a request of its that does not authenticate is refused. */
  blocked(source: string): boolean {
    const r = this.sources.get(source);
    return r !== undefined && this.now() - r.windowStart < this.limit.windowMs && r.failures >= this.limit.maxFailures;
  }

  /** Counts a failure; logs the first of each source per window (never the token presented). */
  failed(source: string, why: string): void {
    const r = this.record(source);
    r.failures++;
    if (r.logged) return;
    r.logged = true;
    this.budget.line((logger: Logger) =>
      logger.warn(
        { source, why },
        `control API: authentication failed from ${source} (${why}); further failures from it are not logged for ${
          this.limit.windowMs / 1000
        } s and refused after ${this.limit.maxFailures}`,
      ),
    );
  }
}

/**
 * The control API's gate: the bearer token when API_TOKEN is set, else a local request from no other origin.
 * Checked before the source's failure count, so that guessing from an address is refused after the limit
 * while the operator's own requests (right token, or local) from that address are still served.
 */
export function operatorAuth(options: {
  token: string | undefined;
  failures: AuthFailures;
  source: (c: Context) => string;
  /** Told of each request that authenticated (its errors are the operator's to read in full). */
  authenticated: (c: Context) => void;
}): MiddlewareHandler {
  const { token, failures } = options;
  return async (c, next) => {
    const given = token === undefined ? undefined : bearerToken(c.req.header('authorization'));
    const ok =
      token === undefined
        ? localRequest(c.req.header('host'), c.req.header('origin'))
        : given !== undefined && tokenMatches(token, given);
    if (ok) {
      options.authenticated(c);
      await next();
      return;
    }
    const from = options.source(c);
    if (failures.blocked(from))
      return fail(c, 'E_TOO_MANY_FAILURES', 'too many failed authentications from this address: try again later');
    if (token === undefined) {
      failures.failed(from, 'not a local request');
      return fail(c, 'E_FORBIDDEN', 'without API_TOKEN the control API answers local requests from its own page only');
    }
    failures.failed(from, given === undefined ? 'no bearer token' : 'wrong token');
    c.header('www-authenticate', 'Bearer realm="spot-bot"');
    return fail(c, 'E_UNAUTHORIZED', 'a valid bearer token is required (Authorization: Bearer <API_TOKEN>)');
  };
}

/**
 * /metrics and /readyz on the main listener, whatever the token: a page whose DNS name was rebound to the bot's
 * address must not read positions, PnL or balances. Without API_TOKEN: the control API's Host (and Origin)
 * check. With it (the listener may face a network): a request carrying the token, or one that names the host by
 * a loopback name or an IP address (a name a page cannot rebind: what kubelet and a scraper by address send),
 * from no other origin. Not counted as failed authentications (a misconfigured scraper is not a guesser).
 */
export function probeGuard(token: string | undefined): MiddlewareHandler {
  if (token === undefined) return localOnly(() => true, 'without API_TOKEN');
  return async (c, next) => {
    const given = bearerToken(c.req.header('authorization'));
    const host = c.req.header('host');
    const origin = c.req.header('origin');
    if ((given !== undefined && tokenMatches(token, given)) || addressedRequest(host, origin)) return next();
    return fail(
      c,
      'E_FORBIDDEN',
      `${c.req.path} answers a request that names this host by address or loopback name, or carries the bearer token (Authorization: Bearer <API_TOKEN>)`,
    );
  };
}

/** The Host header's name (an IPv6 address without its brackets); undefined when unreadable. */
function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return undefined;
  }
}

/** A request naming a loopback host or an IP address, from no other origin. */
function addressedRequest(host: string | undefined, origin: string | undefined): boolean {
  const name = host === undefined ? undefined : hostnameOf(host);
  return name !== undefined && isIP(name) !== 0 ? sameOrigin(host as string, origin) : localRequest(host, origin);
}

function sameOrigin(host: string, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * A request that names a loopback host and comes from no other origin, else 403, while `applies()`: what a
 * page on a rebound DNS name cannot pass. `when` says in the refusal when the rule holds.
 */
export function localOnly(applies: () => boolean, when: string): MiddlewareHandler {
  return async (c, next) => {
    if (applies() && !localRequest(c.req.header('host'), c.req.header('origin')))
      return fail(c, 'E_FORBIDDEN', `${when} ${c.req.path} answers requests naming a loopback host only`);
    await next();
  };
}

/** A request that names a loopback host and comes from no other origin (the token-less, local-only mode). */
export function localRequest(host: string | undefined, origin: string | undefined): boolean {
  const name = host === undefined ? undefined : hostnameOf(host);
  return name !== undefined && isLoopbackHost(name) && sameOrigin(host as string, origin);
}
