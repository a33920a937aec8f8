/**
 * Who may use the control API. With API_TOKEN set: a bearer token, compared in constant time (both sides
 * hashed first, so neither the content nor the length leaks through timing). Without one (allowed on a
 * loopback listener only, env.ts refuses the rest): any local client, but only a request that names a loopback
 * host and comes from no other web origin, so that a web page in the operator's browser cannot steer the bot
 * (cross-site requests, DNS rebinding). Failed attempts are logged once per source and, past a limit, refused.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from '../config/env.js';
import type { Logger } from '../ops/logger.js';

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
    private readonly logger: Logger,
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

  /** Whether the source has failed too often lately: then it is refused before its token is even looked at. */
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
    this.logger.warn(
      { source, why },
      `control API: authentication failed from ${source} (${why}); further failures from it are not logged for ${
        this.limit.windowMs / 1000
      } s and refused after ${this.limit.maxFailures}`,
    );
  }
}

/** A request that names a loopback host and comes from no other origin (the token-less, local-only mode). */
export function localRequest(host: string | undefined, origin: string | undefined): boolean {
  if (host === undefined) return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  if (!isLoopbackHost(hostname)) return false;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
