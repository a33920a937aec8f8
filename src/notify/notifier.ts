/**
 * The notifier follows the events table and the fills table by id, in the background, and hands each new
 * row to the channels that want it. Why a follower rather than a hook in the engine: the engine already
 * records every happening (design.md: the events table is the operator's log), so following it needs no
 * engine change, cannot slow or block trading (a poll reads a bounded page; sends happen on the channels'
 * own queues), and resumes where it stopped after a restart: each channel's sent and dropped messages are
 * recorded as events with the last ids they covered, and a channel resumes after those (never before the
 * start of the previous run, so a crash loses nothing of that run and an old database replays nothing).
 */
import { rounder } from '../market/display.js';
import type { Logger } from '../ops/logger.js';
import { PositionTracker, positionFill } from '../market/position.js';
import { roundedEventData } from '../status/event-figures.js';
import type { ActionStart } from '../operator/actions.js';
import type { EventRow } from '../store/events.js';
import type { FillRow } from '../store/fills.js';
import type { Store } from '../store/store.js';
import { type ChannelOptions, ChannelQueue, type Outcome } from './channel-queue.js';
import { dailySummaryData, nextSummaryTime, summaryRecorded } from './daily-summary.js';
import { type Notice, isReported, noticeKey } from './event-kinds.js';
import type { Mode } from './message.js';
import type { Timers } from '../ports/clock.js';
import type { Transport } from './transport.js';

export interface NotifierOptions {
  store: Store;
  logger: Logger;
  mode: Mode;
  /** Delivery's time (grouping, rate limits, backoff): the wall clock's. */
  timers: Timers;
  /** The venue's time: the daily summary's day and the times of the events recorded (default `timers`). */
  venueClock?: Timers;
  channels: readonly { transport: Transport; options: ChannelOptions }[];
  redact: (text: string) => string;
  /** How often the tables are read for new rows. */
  pollMs: number;
  /** Rows read per table per poll at most (the rest on the next). */
  pageSize?: number;
  /** Minutes after 00:00 UTC of the daily summary; undefined for none. */
  dailySummaryAt: number | undefined;
  /** The kill-switch file, for the summary's read model. */
  killSwitchFile: string;
  /**
   * Where this run's records begin (journalEnd when the daemon began its start): a channel's first run is told
   * from there, the records of the start-up (reconciliation, orders found at the venue) included. Default: this
   * run's 'daemon-started' row.
   */
  runBegan?: Cursor;
}

/** A place in the journal: the last event id and fill sequence number read. */
export interface Cursor {
  event: number;
  fill: number;
}

/** A cursor recorded in an event's data, or undefined. */
function cursorOf(value: unknown): Cursor | undefined {
  const at = value as Partial<Cursor> | undefined;
  return at !== undefined && at !== null && typeof at.event === 'number' && typeof at.fill === 'number'
    ? { event: at.event, fill: at.fill }
    : undefined;
}

/** The journal's end: its newest event and fill. */
export function journalEnd(store: Store): Cursor {
  return {
    event: store.events.list({ limit: 1 })[0]?.id ?? 0,
    fill: store.fills.seqBefore(Number.MAX_SAFE_INTEGER),
  };
}

/**
 * What each operator action records on the way, besides its `operator` row (which names the action, its outcome
 * and who asked): told to a person once, as that row.
 */
const CONSEQUENCES: Readonly<Record<string, readonly string[]>> = {
  pause: ['paused'],
  resume: ['resumed'],
  exit: ['exit-requested', 'paused'],
  'kill-switch': ['kill-switch'],
  'stop-buy': ['stop-buy'],
  // A forced entry's refusal is its operator row's outcome, not a strategy's order refused.
  'force-entry': ['refused'],
};
/** Actions remembered at most (their rows are read within a poll or two of the action). */
const MAX_ACTIONS = 50;

/** An operator action as the notifier follows it (Notifier.acting). */
interface ActionRange extends ActionStart {
  /** Event rows after this id… */
  after: number;
  /** …up to this one (infinite while the action runs) were recorded while the action ran. */
  through: number;
}

const through = (n: readonly Notice[], source: Notice['source'], from: number) =>
  n.reduce((max, x) => (x.source === source ? Math.max(max, x.id) : max), from);

export class Notifier {
  readonly channels: ChannelQueue[];
  /** Where each channel resumes: notices at or below it were already handled for that channel. */
  private readonly cursors = new Map<ChannelQueue, Cursor>();
  private read: Cursor = { event: 0, fill: 0 };
  /** Per channel name: the last ids its sent or dropped messages covered (what a restart resumes after). */
  private readonly handled = new Map<string, Cursor>();
  private readonly positions = new Map<string, PositionTracker>();
  private readonly stop$ = new AbortController();
  private loops: Promise<void>[] = [];
  private pollFailing = false;
  private stopped: Promise<void> | undefined;
  /** Names this database in every notice's key. */
  private readonly journal: string;
  /** The operator's actions of this run, and the event rows each recorded (see `acting`). */
  private actions: ActionRange[] = [];

  constructor(private readonly options: NotifierOptions) {
    this.journal = options.store.createdAt().toString(36);
    const { mode, timers, logger, redact } = options;
    this.channels = options.channels.map(
      (c) => new ChannelQueue(c.transport, c.options, { mode, timers, logger, redact, record: (o) => this.record(o) }),
    );
  }

  /** Reads where each channel stopped, then starts following and the channels' queues. */
  start(): void {
    this.resumePoints();
    this.foldPositions();
    for (const c of this.channels) c.start();
    this.loops.push(this.followLoop());
    if (this.options.dailySummaryAt !== undefined) this.loops.push(this.summaryLoop(this.options.dailySummaryAt));
    const names = this.channels.map((c) => c.name).join(', ');
    this.options.logger.info({ channels: this.channels.map((c) => c.name) }, `notifications to ${names}`);
  }

  private resumePoints(): void {
    const { store } = this.options;
    const starts = store.events.list({ kinds: ['daemon-started'], limit: 2 });
    const [thisRun, previousRun] = starts;
    // A start recorded by an older version names no sequence: its time places it among fills stamped on the same
    // clock (the wall's); on a recording's clock it says nothing, and the channel's own records decide.
    const olderRunFill = (e: EventRow) => (e.data.clock === 'data' ? 0 : store.fills.seqBefore(e.time));
    // By sequence, whatever the clocks: a start's time is the wall's, a fill's the venue's (a recording's on paper).
    const fromRow = (e: EventRow): Cursor => cursorOf(e.data.began) ?? { event: e.id - 1, fill: olderRunFill(e) };
    // Without any run recorded (a store used by a test alone), begin at the present end.
    const fresh = this.options.runBegan ?? (thisRun === undefined ? journalEnd(store) : fromRow(thisRun));
    const floor = previousRun === undefined ? fresh : fromRow(previousRun);
    const records = store.events.list({ kinds: ['notification-sent', 'notification-dropped'], limit: 1000 });
    for (const c of this.channels) {
      const known = cursorOf(records.find((r) => r.data.channel === c.name)?.data.through);
      const cursor =
        known === undefined
          ? fresh
          : { event: Math.max(known.event, floor.event), fill: Math.max(known.fill, floor.fill) };
      // A channel's first run is marked where it begins, so that if this run sends nothing before it dies, the
      // next start still sends this run's notifications to it (a new channel does not get older history).
      if (known === undefined) this.recordHandled(c.name, cursor, { kinds: [], count: 0, attempts: 0, firstRun: true });
      this.cursors.set(c, cursor);
      this.handled.set(c.name, cursor);
    }
    const all = [...this.cursors.values()];
    this.read = {
      event: Math.min(fresh.event, ...all.map((c) => c.event)),
      fill: Math.min(fresh.fill, ...all.map((c) => c.fill)),
    };
  }

  private async followLoop(): Promise<void> {
    const { timers, pollMs } = this.options;
    while (!this.stop$.signal.aborted) {
      // A backlog is read a page per turn of the event loop, never all at once.
      const more = this.pollOnce();
      await timers.sleep(more ? 0 : pollMs, this.stop$.signal);
    }
  }

  /** Reads new rows (one page per table) and queues them on the channels; true when more are waiting. */
  pollOnce(): boolean {
    const { store, logger } = this.options;
    const page = this.options.pageSize ?? 100;
    let notices: Notice[];
    let more: boolean;
    try {
      const events = store.events.after(this.read.event, page);
      const fills = store.fills.after(this.read.fill, page);
      more = events.length === page || fills.length === page;
      notices = [
        ...events.filter((e) => isReported(e.kind)).map((e) => this.eventNotice(e)),
        ...fills.map((f) => this.fillNotice(f.seq, f.fill)),
      ].sort((a, b) => a.time - b.time);
      this.read = {
        event: events.at(-1)?.id ?? this.read.event,
        fill: fills.at(-1)?.seq ?? this.read.fill,
      };
      if (this.pollFailing) logger.info('notifications: reading the database again');
      this.pollFailing = false;
    } catch (err) {
      if (!this.pollFailing) logger.error({ err }, 'notifications: reading new events failed; retrying each poll');
      this.pollFailing = true;
      return false;
    }
    for (const c of this.channels) {
      const cursor = this.cursors.get(c) as Cursor;
      for (const n of notices)
        if (n.id > (n.source === 'event' ? cursor.event : cursor.fill) && !this.isEcho(c, n)) c.push(n);
      this.cursors.set(c, {
        event: Math.max(cursor.event, this.read.event),
        fill: Math.max(cursor.fill, this.read.fill),
      });
    }
    return more;
  }

  /**
   * Marks the start of an operator's action (operator/actions.ts tells each as it starts); the function it returns,
   * as it ends (after its `operator` row is recorded). A person's channel is told each action once, as that row:
   * the rows of the action's own kinds (CONSEQUENCES) that the instance it acts on recorded meanwhile are held
   * back (a fill, another instance's pause, an engine's event are still told), so is its row when it changed
   * nothing (a repeat), and so is its row on the chat that asked for it (the command's answer told it).
   */
  acting(start: ActionStart): () => void {
    const range: ActionRange = { ...start, after: this.lastEventId(), through: Number.POSITIVE_INFINITY };
    this.actions.push(range);
    if (this.actions.length > MAX_ACTIONS) this.actions = this.actions.slice(-MAX_ACTIONS);
    return () => {
      range.through = this.lastEventId();
    };
  }

  private lastEventId(): number {
    return this.options.store.events.list({ limit: 1 })[0]?.id ?? 0;
  }

  /** Whether `n` is not told to channel `c` because an operator's action tells it once (see `acting`). */
  private isEcho(c: ChannelQueue, n: Notice): boolean {
    if (n.source !== 'event' || c.everyRow) return false;
    const during = this.actions.filter((r) => n.id > r.after && n.id <= r.through);
    if (n.kind === 'operator')
      return n.data.changed === false || during.some((r) => r.source === c.name && n.data.source === c.name);
    return during.some(
      (r) => (CONSEQUENCES[r.action] ?? []).includes(n.kind) && (r.instance === undefined || r.instance === n.instance),
    );
  }

  /** A fill as a notice: with the order's type and, for a fill that reduced the position, the PnL it realised. */
  private fillNotice(seq: number, f: FillRow): Notice {
    // Rounded for people to the pair's tick and step, as the daemon last stored its rules (8 places where it
    // never did), never '-0'.
    const r = rounder(this.options.store.pairRules.get(f.symbol));
    const data: Record<string, unknown> = {
      symbol: f.symbol,
      side: f.side,
      type: this.options.store.orders.get(f.orderLocalId)?.type,
      price: r.price(f.price),
      qty: r.base(f.qty),
      fee: r.amount(f.fee, f.feeIn),
      feeAsset: f.feeAsset,
    };
    if (f.instance !== undefined) {
      const tracker = this.tracker(f.instance);
      const before = tracker.position.quantity.abs();
      const realised = tracker.apply(positionFill(f));
      const after = tracker.position.quantity;
      if (after.abs().lt(before)) data.pnl = r.quote(realised);
      data.position = r.baseAsset(after);
    }
    const key = noticeKey(this.journal, 'fill', seq);
    return { source: 'fill', id: seq, key, kind: 'fill', instance: f.instance, time: f.time, data };
  }

  private eventNotice(e: EventRow): Notice {
    const { id, kind, instance, time } = e;
    const data = roundedEventData(kind, e.data, (symbol) => this.options.store.pairRules.get(symbol));
    return { source: 'event', id, key: noticeKey(this.journal, 'event', id), kind, instance, time, data };
  }

  /**
   * Positions of every instance from the fills before the read cursor, folded once at start (before the
   * daemon trades), so that a poll only applies the new fills: a poll's work is bounded by its page.
   */
  private foldPositions(): void {
    const { store } = this.options;
    for (let seq = 0; seq < this.read.fill;) {
      const page = store.fills.after(seq, 1000);
      if (page.length === 0) break;
      for (const { seq: s, fill } of page) {
        if (s > this.read.fill) return;
        if (fill.instance !== undefined) this.tracker(fill.instance).apply(positionFill(fill));
      }
      seq = page.at(-1)?.seq ?? this.read.fill;
    }
  }

  private tracker(instance: string): PositionTracker {
    let tracker = this.positions.get(instance);
    if (tracker === undefined) this.positions.set(instance, (tracker = new PositionTracker()));
    return tracker;
  }

  private async summaryLoop(minuteOfDay: number): Promise<void> {
    const { store, logger } = this.options;
    const timers = this.options.venueClock ?? this.options.timers;
    while (!this.stop$.signal.aborted) {
      const at = nextSummaryTime(timers.now(), minuteOfDay);
      while (timers.now() < at && !this.stop$.signal.aborted) await timers.sleep(at - timers.now(), this.stop$.signal);
      if (this.stop$.signal.aborted) return;
      try {
        if (!summaryRecorded(store, at))
          store.events.record(at, undefined, 'daily-summary', dailySummaryData(store, at, this.options.killSwitchFile));
      } catch (err) {
        logger.error({ err }, 'daily summary failed');
      }
    }
  }

  private record(outcome: Outcome): void {
    const notices = outcome.sent ? outcome.message.notices : outcome.notices;
    // A channel's queue is in order: everything up to these ids was sent or dropped on it.
    const before = this.handled.get(outcome.channel) ?? { event: 0, fill: 0 };
    const handled = { event: through(notices, 'event', before.event), fill: through(notices, 'fill', before.fill) };
    this.handled.set(outcome.channel, handled);
    const data: Record<string, unknown> = {
      kinds: [...new Set(notices.map((n) => n.kind))],
      count: notices.length,
      attempts: outcome.attempts,
    };
    if (!outcome.sent) data.reason = outcome.reason;
    this.recordHandled(outcome.channel, handled, data, outcome.sent ? 'notification-sent' : 'notification-dropped');
  }

  /** Journals that `channel` has handled everything up to `through` (what a restart resumes after). */
  private recordHandled(
    channel: string,
    through: Cursor,
    data: Record<string, unknown>,
    kind: 'notification-sent' | 'notification-dropped' = 'notification-sent',
  ): void {
    const time = (this.options.venueClock ?? this.options.timers).now();
    this.options.store.events.record(time, undefined, kind, { channel, ...data, through });
  }

  /**
   * Stops following (after one last read, so the daemon's own stop is told), then gives the channels at most
   * `deadlineMs` to send what is queued; what is left is dropped and recorded. The store must stay open until
   * this resolves.
   */
  stop(deadlineMs: number): Promise<void> {
    this.stopped ??= (async () => {
      this.stop$.abort();
      await Promise.all(this.loops);
      while (this.pollOnce());
      await Promise.all(this.channels.map((c) => c.stop(deadlineMs)));
    })();
    return this.stopped;
  }
}
