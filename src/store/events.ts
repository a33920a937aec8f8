/**
 * The operator's log in the database: refusals with their reason, pauses, circuit breaker, kill switch,
 * reconciliation results. What `status` shows; never read on a hot path.
 */
import { distinctThroughIndex } from './columns.js';
import type { Database as Db } from 'better-sqlite3';

/** Every kind of event the bot records, once. Rows read back keep whatever kind they were written with. */
export const EVENT_KINDS = [
  // The daemon (run-history.ts, daemon.ts).
  'daemon-started',
  'daemon-stopped',
  // A paced replay behind its pace past the bound, and back under it (daemon.ts, status-view.ts).
  'replay-behind',
  'replay-caught-up',
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
  // One per external order, written by earlier builds (still told when read back); now one count for all:
  'adopted',
  // Open orders on the account this bot did not place (engine/external-orders.ts): a count, at start and on change.
  'external-orders',
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
  // A reload of the strategy files changed an instance's exits or protections (engine.ts reconfigure).
  'exits-changed',
  // A strategy file's pair list worked out anew, changed (engine/pair-lists.ts): its group, pairs, added and left.
  'pairlist-changed',
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
  private readonly latestStmt;
  private readonly latestOfInstanceStmt;
  private readonly countStmt;
  private readonly instancesStmt;

  constructor(db: Db) {
    this.db = db;
    this.insertStmt = db.prepare<[number, string | null, string, string]>(
      'INSERT INTO events (time, instance, kind, data) VALUES (?, ?, ?, ?)',
    );
    this.afterStmt = db.prepare<[number, number], DbEvent>(
      'SELECT id, time, instance, kind, data FROM events WHERE id > ? ORDER BY id LIMIT ?',
    );
    // One seek each through events_kind and events_instance (migration 5 and 1).
    this.latestStmt = db.prepare<[string], DbEvent>(
      'SELECT id, time, instance, kind, data FROM events WHERE kind = ? ORDER BY id DESC LIMIT 1',
    );
    this.latestOfInstanceStmt = db.prepare<[string, string], DbEvent>(
      'SELECT id, time, instance, kind, data FROM events WHERE instance = ? AND kind = ? ORDER BY id DESC LIMIT 1',
    );
    this.countStmt = db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM events WHERE kind = ?');
    this.instancesStmt = db.prepare<[], { instance: string }>(distinctThroughIndex('events', 'instance'));
  }

  /**
   * The newest event of any of the kinds (of the instance, when given): one index seek per kind, however long
   * the log.
   */
  latest(kinds: readonly EventKind[], instance?: string): EventRow | undefined {
    let newest: DbEvent | undefined;
    for (const kind of kinds) {
      const row = instance === undefined ? this.latestStmt.get(kind) : this.latestOfInstanceStmt.get(instance, kind);
      if (row !== undefined && (newest === undefined || row.id > newest.id)) newest = row;
    }
    return newest === undefined ? undefined : fromDb(newest);
  }

  /** How many events of the kind were recorded (through the kind's index). */
  count(kind: EventKind): number {
    return this.countStmt.get(kind)?.n ?? 0;
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
    return this.instancesStmt.all().map((r) => r.instance);
  }
}
