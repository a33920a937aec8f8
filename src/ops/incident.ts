/**
 * A failure that repeats (a poll whose venue read fails, a job that keeps throwing) told per incident, not per
 * occurrence: one warning when it starts (with the error), a count at most once every `reportEveryMs` while it
 * goes on, and one line when it has ended. A fault that flaps (fails, works, fails again) is one incident: it
 * ends only once `quietMs` have passed since its last failure, told at the first success after that. Bounded:
 * a few numbers per incident, never a list. `Incidents` keys them (one per symbol, say).
 */
import type { Logger } from './logger.js';

export interface IncidentOptions {
  /** While it goes on failing, one line with the count at most this often. */
  reportEveryMs?: number;
  /** The incident ends once this long has passed without a failure (a flapping fault stays one incident). */
  quietMs?: number;
}

export const INCIDENT_REPORT_MS = 60_000;
export const INCIDENT_QUIET_MS = 30_000;

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

interface Open {
  since: number;
  failures: number;
  reportedAt: number;
  lastFailure: number;
}

export class Incident {
  private open: Open | undefined;
  private readonly reportEveryMs: number;
  private readonly quietMs: number;

  /** `what` names the failing thing in every line (`job orders poll`, `order history BTCUSDT`). */
  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly what: string,
    options: IncidentOptions = {},
  ) {
    this.reportEveryMs = options.reportEveryMs ?? INCIDENT_REPORT_MS;
    this.quietMs = options.quietMs ?? INCIDENT_QUIET_MS;
  }

  /** An incident is open (it failed, and has not been quiet for `quietMs` since). */
  get ongoing(): boolean {
    return this.open !== undefined;
  }

  /**
   * One failure. `detail` (default: the error's message) ends the lines. True when it started the incident.
   */
  failed(err: unknown, detail = messageOf(err), data: Record<string, unknown> = {}): boolean {
    const now = this.now();
    const open = this.open;
    if (open === undefined) {
      this.open = { since: now, failures: 1, reportedAt: now, lastFailure: now };
      this.logger.warn({ ...data, err }, `${this.what} failing: ${detail}`);
      return true;
    }
    open.failures++;
    open.lastFailure = now;
    if (now - open.reportedAt >= this.reportEveryMs) {
      open.reportedAt = now;
      this.logger.warn(
        { ...data, failures: open.failures },
        `${this.what} still failing: ${open.failures} failures over ${seconds(now - open.since)} s (last: ${detail})`,
      );
    } else this.logger.debug({ ...data, err }, `${this.what} failed again: ${detail}`);
    return false;
  }

  /** One success: ends the incident once `quietMs` have passed since its last failure. True when it ended it. */
  succeeded(data: Record<string, unknown> = {}): boolean {
    const open = this.open;
    if (open === undefined) return false;
    const now = this.now();
    // A clock stepped back (now before the last failure) counts as quiet: better one line early than none.
    if (now >= open.lastFailure && now - open.lastFailure < this.quietMs) return false;
    this.open = undefined;
    this.logger.info(
      { ...data, failures: open.failures },
      `${this.what} recovered after ${open.failures} failure(s) over ${seconds(now - open.since)} s`,
    );
    return true;
  }
}

function seconds(ms: number): number {
  return Math.max(0, Math.round(ms / 1000));
}

/** Incidents by key (one per symbol, say), made on first use. */
export class Incidents {
  private readonly byKey = new Map<string, Incident>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number,
    private readonly what: (key: string) => string,
    private readonly options: IncidentOptions = {},
  ) {}

  get(key: string): Incident {
    let incident = this.byKey.get(key);
    if (incident === undefined) {
      incident = new Incident(this.logger, this.now, this.what(key), this.options);
      this.byKey.set(key, incident);
    }
    return incident;
  }

  /** A success for `key`: ends its incident once quiet (nothing to do when it never failed). */
  succeeded(key: string, data: Record<string, unknown> = {}): boolean {
    return this.byKey.get(key)?.succeeded(data) ?? false;
  }

  ongoing(key: string): boolean {
    return this.byKey.get(key)?.ongoing ?? false;
  }
}
