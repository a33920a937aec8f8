/**
 * The operator's log in the database: refusals with their reason, pauses, circuit breaker, kill switch,
 * reconciliation results. What `status` shows; never read on a hot path.
 */
import type { Db } from './database.js';

/** Every kind of event the bot records, once. Rows read back keep whatever kind they were written with. */
export const EVENT_KINDS = [
  // The daemon (run-history.ts, daemon.ts).
  'daemon-started',
  'daemon-stopped',
  // An instance's lifecycle (instance-runner.ts).
  'start-refused',
  'started',
  'paused',
  'resumed',
  'stopped',
  // Orders (order-manager.ts, the order sync and the reconciler).
  'refused',
  'daily-loss-halt',
  'order-rejected',
  'order-not-sent',
  'order-unknown',
  'cancel-failed',
  'engine-error',
  'reconciled',
  'not-placed',
  'order-missing',
  'adopted',
  // The brakes (trading-guard.ts).
  'kill-switch',
  'circuit-breaker',
  'auth-failed',
  'auth-cleared',
  'stop-buy',
  // A manual exit asked for (engine.ts): pending until the operator's `exit` action is recorded after it.
  'exit-requested',
  // The journal itself (trading-guard.ts): its file deleted or replaced; writes refused, then accepted again.
  'journal-lost',
  'journal-recovered',
  // An exit the strategy file declares triggered (exit-rules.ts): stop-loss, trailing-stop or roi.
  'exit-triggered',
  // A declared stop placed on the exchange for the position (held-exits.ts), and one of those filling.
  'exit-held',
  'held-exit-filled',
  // A protection the strategy file declares tripped (no new entries) or lifted (exit-rules.ts).
  'protection-tripped',
  'protection-lifted',
  // What an operator did (operator/actions.ts): action, subject, outcome, source.
  'operator',
  // Notifications (notify/): the daily summary, and each message sent or dropped with the ids it covered.
  'daily-summary',
  'notification-sent',
  'notification-dropped',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

export interface EventRow {
  id: number;
  time: number;
  /** Undefined for engine-wide events (kill switch, circuit breaker). */
  instance: string | undefined;
  kind: string;
  data: Record<string, unknown>;
}

interface DbEvent {
  id: number;
  time: number;
  instance: string | null;
  kind: string;
  data: string;
}

function fromDb(r: DbEvent): EventRow {
  return {
    id: r.id,
    time: r.time,
    instance: r.instance ?? undefined,
    kind: r.kind,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

export interface EventQuery {
  instance?: string;
  kinds?: readonly EventKind[];
  sinceTime?: number;
  /** Only events with a smaller id (paging back from a previous page's last id). */
  beforeId?: number;
  /** Most recent first when set; oldest first otherwise. */
  limit?: number;
}

export class EventLog {
  private readonly db: Db;
  private readonly insertStmt;
  private readonly afterStmt;

  constructor(db: Db) {
    this.db = db;
    this.insertStmt = db.prepare<[number, string | null, string, string]>(
      'INSERT INTO events (time, instance, kind, data) VALUES (?, ?, ?, ?)',
    );
    this.afterStmt = db.prepare<[number, number], DbEvent>(
      'SELECT id, time, instance, kind, data FROM events WHERE id > ? ORDER BY id LIMIT ?',
    );
  }

  record(time: number, instance: string | undefined, kind: EventKind, data: Record<string, unknown> = {}): void {
    this.insertStmt.run(time, instance ?? null, kind, JSON.stringify(data));
  }

  /** Events recorded after id `afterId`, oldest first: how a reader outside the engine follows the log. */
  after(afterId: number, limit: number): EventRow[] {
    return this.afterStmt.all(afterId, limit).map(fromDb);
  }

  /** Ad-hoc queries for status and tests (prepared per call: not a hot path). */
  list(query: EventQuery = {}): EventRow[] {
    const where: string[] = [];
    const args: (string | number)[] = [];
    if (query.instance !== undefined) {
      where.push('instance = ?');
      args.push(query.instance);
    }
    if (query.kinds && query.kinds.length > 0) {
      where.push(`kind IN (${query.kinds.map(() => '?').join(', ')})`);
      args.push(...query.kinds);
    }
    if (query.sinceTime !== undefined) {
      where.push('time >= ?');
      args.push(query.sinceTime);
    }
    if (query.beforeId !== undefined) {
      where.push('id < ?');
      args.push(query.beforeId);
    }
    const clause = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
    const order =
      query.limit === undefined ? ' ORDER BY id' : ` ORDER BY id DESC LIMIT ${Math.max(0, Math.floor(query.limit))}`;
    return this.db
      .prepare<(string | number)[], DbEvent>(`SELECT id, time, instance, kind, data FROM events${clause}${order}`)
      .all(...args)
      .map(fromDb);
  }

  /** Instances that ever recorded an event, sorted. */
  instances(): string[] {
    return this.db
      .prepare<[], { instance: string }>(
        'SELECT DISTINCT instance FROM events WHERE instance IS NOT NULL ORDER BY instance',
      )
      .all()
      .map((r) => r.instance);
  }
}
