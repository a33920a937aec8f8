/**
 * One protection a strategy file may declare (strategy/api.ts `ProtectionsDecl`), as Freqtrade's
 * plugins/protections/: each in a file of its own behind this interface, listed once in protections.ts. A
 * protection trips on the trades the instance closed or on a declared exit, and while it holds, the instance's
 * new entries (BUY orders) are refused; its state is kept with the instance's watch (`<instance>/exits`), so it
 * holds across restarts. Adding one: its file here (one that trips on closed trades extends TradesProtection and
 * says only why they trip it), its name in TripName, its line in protections.ts, and its key in ProtectionsDecl and
 * ProtectionsSchema (strategy/api.ts).
 */
import type { ClosedTrade } from '../../../market/round-trips.js';
import type { ExitReason } from '../exit-rules.js';

/** What a trip names (events, status): a protection on closed trades, or the cooldown after a stop-out. */
export type TripName = 'cooldown' | 'losingTrades' | 'maxDrawdown';

/** A protection that tripped: no new entries until `until`, for `reason` (recorded as `protection-tripped`). */
export interface Trip {
  protection: TripName;
  until: number;
  reason: string;
}

/** What the protections keep across restarts, beside the exits' own state (exit-rules.ts). */
export interface ProtectionState {
  /** No entries before this time (a cooldown after a stop-out). */
  cooldownUntil?: number;
  /** The trips on closed trades not yet told lifted: until when, and why. */
  trips?: Partial<Record<TripName, { at: number; until: number; reason: string }>>;
  /** When each protection last tripped: trades closed before it do not count towards the next trip. */
  trippedAt?: Partial<Record<TripName, number>>;
}

/** One declared protection of one instance, over the instance's protection state. */
export interface Protection {
  /** Whether it trips on closed trades (the instance keeps a trade book only when one does). */
  readonly countsTrades: boolean;
  /** The instance's closed trades as of `now` (a trade just closed, or the journal's at a start): a trip, or none. */
  tradesClosed(trades: readonly ClosedTrade[], now: number): Trip | undefined;
  /** The engine sold for a declared exit at `now` (on a tick, or a stop the exchange held filled). */
  exitTriggered(reason: ExitReason, now: number): Trip | undefined;
  /** Why a new entry waits at `now` (undefined: it may go). */
  entryBlock(now: number): string | undefined;
}

/** A protection as protections.ts lists it: how it is made from its declaration, and taken away. */
export interface ProtectionKind<Declared> {
  make(declared: Declared, state: ProtectionState): Protection;
  /**
   * No longer declared (a reload) at `now`: its state goes, and it answers whether a trip of it was still running
   * (told lifted). Its history (when it last tripped) stays, should it be declared again.
   */
  drop(state: ProtectionState, now: number): TripName | undefined;
}

export const minutesText = (m: number) => `${m} min`;

/** Whether `name` tripped on closed trades and its pause is not over at `now`. */
function tripRunning(state: ProtectionState, name: TripName, now: number): boolean {
  const trip = state.trips?.[name];
  return trip !== undefined && trip.until > now;
}

/** `name` trips on closed trades at `now` for `pauseMinutes`: kept in the state until told lifted. */
function tripOn(state: ProtectionState, name: TripName, now: number, pauseMinutes: number, reason: string): Trip {
  const until = now + pauseMinutes * 60_000;
  (state.trips ??= {})[name] = { at: now, until, reason };
  (state.trippedAt ??= {})[name] = now;
  return { protection: name, until, reason };
}

/** Why entries wait while `name`'s trip on closed trades runs at `now`. */
function tripBlock(state: ProtectionState, name: TripName, now: number): string | undefined {
  const trip = state.trips?.[name];
  return trip !== undefined && now < trip.until
    ? `${trip.reason}: no new entries until ${new Date(trip.until).toISOString()}`
    : undefined;
}

/** Takes `name`'s trip on closed trades out of the state (it ends); whether there was one. */
export function endTrip(state: ProtectionState, name: TripName): boolean {
  const trips = state.trips;
  if (trips?.[name] === undefined) return false;
  delete trips[name];
  if (Object.keys(trips).length === 0) delete state.trips;
  return true;
}

/** The trades closed within the window before `now` and after `name` last tripped, oldest first. */
function tradesSince(
  trades: readonly ClosedTrade[],
  state: ProtectionState,
  name: TripName,
  now: number,
  windowMinutes: number | undefined,
): ClosedTrade[] {
  const from = Math.max(
    windowMinutes === undefined ? -Infinity : now - windowMinutes * 60_000,
    state.trippedAt?.[name] ?? -Infinity,
  );
  return trades.filter((t) => t.exitTime > from).sort((a, b) => a.exitTime - b.exitTime);
}

/** What a protection on closed trades is declared with, beside its own figures. */
interface TradesDeclared {
  windowMinutes?: number;
  pauseMinutes: number;
}

/**
 * A protection that trips on the trades the instance closed (losing-trades.ts, max-drawdown.ts): it reads those
 * closed within its window since it last tripped, and its trip refuses entries for `pauseMinutes`, kept in the
 * state until told lifted. A member says only why such trades trip it.
 */
export abstract class TradesProtection<Declared extends TradesDeclared> implements Protection {
  readonly countsTrades = true;

  constructor(
    private readonly name: TripName,
    protected readonly declared: Declared,
    private readonly state: ProtectionState,
  ) {}

  /** Why these trades (closed within the window since the last trip, oldest first) trip it; undefined: they do not. */
  protected abstract tripReason(trades: readonly ClosedTrade[]): string | undefined;

  tradesClosed(trades: readonly ClosedTrade[], now: number): Trip | undefined {
    const { name, state, declared } = this;
    if (tripRunning(state, name, now)) return undefined;
    const reason = this.tripReason(tradesSince(trades, state, name, now, declared.windowMinutes));
    return reason === undefined ? undefined : tripOn(state, name, now, declared.pauseMinutes, reason);
  }

  exitTriggered(): undefined {
    return undefined;
  }

  entryBlock(now: number): string | undefined {
    return tripBlock(this.state, this.name, now);
  }
}

/** A protection on closed trades as protections.ts lists it: made under its name, and its trip ended when dropped. */
export function tradesKind<Declared extends TradesDeclared>(
  name: TripName,
  Made: new (name: TripName, declared: Declared, state: ProtectionState) => Protection,
): ProtectionKind<Declared> {
  return {
    make: (declared, state) => new Made(name, declared, state),
    drop: (state) => (endTrip(state, name) ? name : undefined),
  };
}
