/**
 * Exits and protections a strategy file declares and the engine enforces on the instance's position, whatever
 * the strategy does (Freqtrade's stoploss, trailing stop and minimal ROI, and its protections): checked on
 * every tick from the position's average entry, the time it was opened and the highest price since. A trigger
 * sells the position less dust through the order manager's one path (position-exit.ts's submitExit: brakes,
 * rules, risk, balance, journal before send), tagged `exit:<reason>`, and is recorded as an `exit-triggered`
 * event. Exactly once: nothing is triggered while an exit order of the instance is working or its outcome is
 * being reconciled, and a restart decides again from the journal and the fills (the position).
 */
import { D, type Dec } from '../../market/decimal.js';
import { type ClosedTrade, TradeBook } from '../../market/round-trips.js';
import type { ExitRulesDecl, ProtectionsDecl } from '../../strategy/api.js';
import type { FillRow } from '../../store/fills.js';

/** Why the engine sells: the tag is `exit:<reason>`. */
export type ExitReason = 'stop-loss' | 'trailing-stop' | 'roi';

export const ENGINE_EXIT_TAG_PREFIX = 'exit:';

export interface ExitTrigger {
  reason: ExitReason;
  /** The price level that was reached (the stop, the trailing stop, the ROI target). */
  level: number;
}

/** What the watch keeps across restarts (the store's strategy_state, key `<instance>/exits`). */
export interface WatchState {
  /** When the position was opened (its first fill after flat), epoch ms. */
  openedAt?: number;
  /** Highest price seen since. */
  peak?: number;
  /** No entries before this time (a cooldown after a stop-out). */
  cooldownUntil?: number;
  /** The protections tripped and not yet reported lifted: until when, and why. */
  trips?: Partial<Record<ProtectionName, { at: number; until: number; reason: string }>>;
  /** When each protection last tripped: trades closed before it do not count towards the next trip. */
  trippedAt?: Partial<Record<ProtectionName, number>>;
}

/** The protections that trip on closed trades (the cooldown trips on a stop-out). */
export type ProtectionName = 'losingTrades' | 'maxDrawdown';

/** The cooldown a stop-out started: recorded as a protection tripped, as the others are (status, notifications). */
export interface CooldownTrip {
  protection: 'cooldown';
  until: number;
  reason: string;
}

/** What a trip names: a protection on closed trades, or the cooldown after a stop-out. */
export type TripName = ProtectionName | CooldownTrip['protection'];

export interface ProtectionTrip {
  protection: ProtectionName;
  until: number;
  reason: string;
}

/** A recorded fill as a trade book takes it (the instance's own book; `step` makes fee dust flat). */
function tradeFill(f: FillRow, tag: string | undefined, step: Dec | undefined) {
  return {
    book: f.symbol,
    side: f.side,
    price: new D(f.price),
    quantity: new D(f.qty),
    fee: new D(f.fee),
    feeIn: f.feeIn,
    time: f.time,
    orderId: f.orderLocalId,
    tag,
    step,
  };
}

const minutesText = (m: number) => `${m} min`;

/** The ROI table as sorted [minutes held, minimum profit %] rows. */
function roiRows(roi: Readonly<Record<string, number>> | undefined): [number, number][] {
  if (roi === undefined) return [];
  return Object.entries(roi)
    .map(([minutes, pct]): [number, number] => [Number(minutes), pct])
    .sort((a, b) => a[0] - b[0]);
}

/** One instance's declared exits, checked on ticks. */
export class PositionWatch {
  state: WatchState = {};
  private roi: [number, number][];
  /** The instance's closed trades (only when a protection counts them). */
  private book: TradeBook | undefined;

  constructor(
    public exits: ExitRulesDecl,
    public protections: ProtectionsDecl,
  ) {
    this.roi = roiRows(exits.roi);
    this.book = PositionWatch.countsTrades(protections) ? new TradeBook() : undefined;
  }

  private static countsTrades(p: ProtectionsDecl): boolean {
    return p.losingTrades !== undefined || p.maxDrawdown !== undefined;
  }

  /**
   * New declarations from a reload. The state is kept (the position's open time and high, a cooldown, the trips
   * and when each protection last tripped), so a trailing stop keeps its high and a protection its window;
   * exits apply from the next tick. Returns the protections whose trip is lifted because they are no longer
   * declared. When the protections changed, the trade book starts empty: the caller seeds it again from the
   * journal (`seed`, when `reseed`), as a start does, so the new rules count the same trades.
   */
  redeclare(exits: ExitRulesDecl, protections: ProtectionsDecl, now: number): { lifted: TripName[]; reseed: boolean } {
    this.exits = exits;
    this.roi = roiRows(exits.roi);
    const dropped: TripName[] = [];
    if (protections.cooldownMinutes === undefined && this.state.cooldownUntil !== undefined) {
      // A cooldown running ends (and is told lifted, as status showed it); one over already goes silently.
      if (this.state.cooldownUntil > now) dropped.push('cooldown');
      delete this.state.cooldownUntil;
    }
    const protectionsChanged = JSON.stringify(protections) !== JSON.stringify(this.protections);
    this.protections = protections;
    if (protectionsChanged) this.book = PositionWatch.countsTrades(protections) ? new TradeBook() : undefined;
    for (const name of Object.keys(this.state.trips ?? {}) as ProtectionName[])
      if (protections[name] === undefined) {
        dropped.push(name);
        delete this.state.trips?.[name];
      }
    if (this.state.trips !== undefined && Object.keys(this.state.trips).length === 0) delete this.state.trips;
    return { lifted: dropped, reseed: protectionsChanged && this.book !== undefined };
  }

  /**
   * The instance's fills recorded before this run (its trades so far). A trip the last run decided but did not
   * save (killed between a fill's commit and the watch's) is decided again from them and returned, when its
   * pause is not over at `now`; a trip already saved, or lifted, is not made again.
   */
  seed(
    fills: readonly FillRow[],
    tagOf: (localId: string) => string | undefined,
    step: Dec | undefined,
    now: number,
  ): ProtectionTrip[] {
    const book = this.book;
    if (book === undefined) return [];
    for (const f of fills) book.add(tradeFill(f, tagOf(f.orderLocalId), step));
    let last: number | undefined;
    for (const t of book.trades) last = Math.max(last ?? t.exitTime, t.exitTime);
    if (last === undefined) return [];
    const trips = this.evaluate(last);
    for (const trip of trips)
      if (trip.until <= now) {
        // Over already: it would be lifted at once; its trades still do not count again.
        delete this.state.trips?.[trip.protection];
        if (this.state.trips !== undefined && Object.keys(this.state.trips).length === 0) delete this.state.trips;
      }
    return trips.filter((t) => t.until > now);
  }

  /**
   * A fill was recorded: the trades it closed are counted by the protections, and those that trip now are
   * returned (their state is in `state`, for the caller to save and report).
   */
  filled(f: FillRow, tag: string | undefined, step: Dec | undefined): ProtectionTrip[] {
    if (this.book === undefined || this.book.add(tradeFill(f, tag, step)).length === 0) return [];
    return this.evaluate(f.time);
  }

  /** The protections that trip at `now` on the trades closed so far. */
  private evaluate(now: number): ProtectionTrip[] {
    const trips: ProtectionTrip[] = [];
    const { losingTrades, maxDrawdown } = this.protections;
    if (losingTrades !== undefined && !this.tripped('losingTrades', now)) {
      const losses = this.since('losingTrades', now, losingTrades.windowMinutes).filter((t) => t.pnl.isNeg());
      if (losses.length >= losingTrades.count)
        trips.push(
          this.trip(
            'losingTrades',
            now,
            losingTrades.pauseMinutes,
            `${losses.length} losing trades within ${minutesText(losingTrades.windowMinutes)} (protections.losingTrades)`,
          ),
        );
    }
    if (maxDrawdown !== undefined && !this.tripped('maxDrawdown', now)) {
      let equity = 1;
      let peak = 1;
      for (const t of this.since('maxDrawdown', now, maxDrawdown.windowMinutes)) {
        equity *= 1 + (t.pnlRatio?.toNumber() ?? 0);
        peak = Math.max(peak, equity);
      }
      const drawdownPct = (1 - equity / peak) * 100;
      if (drawdownPct >= maxDrawdown.pct)
        trips.push(
          this.trip(
            'maxDrawdown',
            now,
            maxDrawdown.pauseMinutes,
            `closed trades ${drawdownPct.toFixed(2)} % under their best${maxDrawdown.windowMinutes === undefined ? '' : ` within ${minutesText(maxDrawdown.windowMinutes)}`} (protections.maxDrawdown, ${maxDrawdown.pct} %)`,
          ),
        );
    }
    return trips;
  }

  /** The trades closed within the window before `now` and after the protection last tripped, oldest first. */
  private since(name: ProtectionName, now: number, windowMinutes: number | undefined): ClosedTrade[] {
    const from = Math.max(
      windowMinutes === undefined ? -Infinity : now - windowMinutes * 60_000,
      this.state.trippedAt?.[name] ?? -Infinity,
    );
    return (this.book as TradeBook).trades.filter((t) => t.exitTime > from).sort((a, b) => a.exitTime - b.exitTime);
  }

  private tripped(name: ProtectionName, now: number): boolean {
    const trip = this.state.trips?.[name];
    return trip !== undefined && trip.until > now;
  }

  private trip(name: ProtectionName, now: number, pauseMinutes: number, reason: string): ProtectionTrip {
    const until = now + pauseMinutes * 60_000;
    (this.state.trips ??= {})[name] = { at: now, until, reason };
    (this.state.trippedAt ??= {})[name] = now;
    return { protection: name, until, reason };
  }

  /** The protections whose pause is over at `now` (removed from the state: the caller saves and reports it). */
  lifted(now: number): ProtectionName[] {
    const trips = this.state.trips;
    if (trips === undefined) return [];
    const over: ProtectionName[] = [];
    for (const name of Object.keys(trips) as ProtectionName[])
      if ((trips[name]?.until ?? 0) <= now) {
        over.push(name);
        delete trips[name];
      }
    if (Object.keys(trips).length === 0) delete this.state.trips;
    return over;
  }

  /** Whether a tripped protection is waiting to be lifted (cheap: the tick path asks). */
  get hasTrips(): boolean {
    return this.state.trips !== undefined;
  }

  get active(): boolean {
    const e = this.exits;
    return e.stopLossPct !== undefined || e.trailingStopPct !== undefined || this.roi.length > 0;
  }

  /** The position opened (at `time`, at `price`) or closed. */
  opened(time: number, price: number): void {
    this.state.openedAt = time;
    this.state.peak = price;
  }

  closed(): void {
    delete this.state.openedAt;
    delete this.state.peak;
  }

  /** A tick while the position is held: the exit to make, if any. `entry` is the average entry price. */
  check(now: number, last: number, entry: number): ExitTrigger | undefined {
    const s = this.state;
    if (s.peak === undefined || last > s.peak) s.peak = last;
    // A position the watch did not see open (held before a reload declared these exits): held from now. (At a
    // start the engine takes it from the fill that opened it: Engine.catchUpWatch.)
    s.openedAt ??= now;
    const { stopLossPct, trailingStopPct, trailingActivationPct } = this.exits;
    if (stopLossPct !== undefined) {
      const level = entry * (1 - stopLossPct / 100);
      if (last <= level) return { reason: 'stop-loss', level };
    }
    if (trailingStopPct !== undefined) {
      const armedAt = entry * (1 + (trailingActivationPct ?? 0) / 100);
      const level = s.peak * (1 - trailingStopPct / 100);
      if (s.peak >= armedAt && last <= level) return { reason: 'trailing-stop', level };
    }
    if (this.roi.length > 0) {
      const held = (now - (s.openedAt ?? now)) / 60_000;
      let target: number | undefined;
      for (const [minutes, pct] of this.roi) if (held >= minutes) target = pct;
      if (target !== undefined) {
        const level = entry * (1 + target / 100);
        if (last >= level) return { reason: 'roi', level };
      }
    }
    return undefined;
  }

  /** An exit was triggered at `now`: a stop-out starts the cooldown, returned (for the caller to record). */
  triggered(now: number, reason: ExitReason): CooldownTrip | undefined {
    const minutes = this.protections.cooldownMinutes;
    if (minutes === undefined || reason === 'roi') return undefined;
    const until = now + minutes * 60_000;
    this.state.cooldownUntil = until;
    return {
      protection: 'cooldown',
      until,
      reason: `cooldown of ${minutesText(minutes)} after a stop-out (${reason}) (protections.cooldownMinutes)`,
    };
  }

  /** Why a new entry is refused now, undefined when it may go. */
  entryBlock(now: number): string | undefined {
    const until = this.state.cooldownUntil;
    if (until !== undefined && now < until)
      return `cooldown after a stop-out until ${new Date(until).toISOString()} (protections.cooldownMinutes)`;
    for (const trip of Object.values(this.state.trips ?? {}))
      if (trip !== undefined && now < trip.until)
        return `${trip.reason}: no new entries until ${new Date(trip.until).toISOString()}`;
    return undefined;
  }
}
