/**
 * An instance's declared protections (one file each in this folder, listed in KINDS below): the trades it closed,
 * counted once by a trade book for those that trip on them, and the state they keep across restarts. The engine's
 * exits (declared-exits.ts) tell them what happened (a fill, a declared exit, a start, a reload) and ask whether
 * a new entry may go.
 */
import { D, type Dec } from '../../../market/decimal.js';
import { TradeBook } from '../../../market/round-trips.js';
import type { ProtectionsDecl } from '../../../strategy/api.js';
import type { FillRow } from '../../../store/fills.js';
import type { OrderRow } from '../../../store/order-journal.js';
import type { ExitReason } from '../exit-rules.js';
import { cooldown } from './cooldown.js';
import { losingTrades } from './losing-trades.js';
import { maxDrawdown } from './max-drawdown.js';
import {
  endTrip,
  type Protection,
  type ProtectionKind,
  type ProtectionState,
  type Trip,
  type TripName,
} from './protection.js';

/** Every protection a strategy file may declare, by its key in `protections` (a new key cannot compile without one). */
const KINDS: { readonly [K in keyof Required<ProtectionsDecl>]: ProtectionKind<NonNullable<ProtectionsDecl[K]>> } = {
  cooldownMinutes: cooldown,
  losingTrades,
  maxDrawdown,
};

const KEYS = Object.keys(KINDS) as (keyof ProtectionsDecl)[];

function made<K extends keyof ProtectionsDecl>(
  key: K,
  declared: ProtectionsDecl,
  state: ProtectionState,
): Protection | undefined {
  const value = declared[key];
  return value === undefined ? undefined : KINDS[key].make(value, state);
}

/** A fill's order as trades pair it: its tag, and the entry it closes (round-trips.ts). */
type PairedBy = Pick<OrderRow, 'tag' | 'closes'> | undefined;

/** A recorded fill as a trade book takes it (the instance's own book; `step` makes fee dust flat). */
function tradeFill(f: FillRow, order: PairedBy, step: Dec | undefined) {
  return {
    book: f.symbol,
    side: f.side,
    price: new D(f.price),
    quantity: new D(f.qty),
    fee: new D(f.fee),
    feeIn: f.feeIn,
    time: f.time,
    orderId: f.orderLocalId,
    tag: order?.tag,
    closes: order?.closes,
    step,
  };
}

export class Protections {
  /** What they keep across restarts (saved with the exits' state: declared-exits.ts). */
  private current: ProtectionState = {};
  private list: Protection[] = [];
  /** The instance's closed trades (only when a protection counts them). */
  private book: TradeBook | undefined;

  constructor(private declared: ProtectionsDecl) {
    this.list = this.made();
    this.book = this.countsTrades ? new TradeBook() : undefined;
  }

  get declaration(): ProtectionsDecl {
    return this.declared;
  }

  get state(): Readonly<ProtectionState> {
    return this.current;
  }

  /** The saved state taken up (at a start, or by a watch made at a reload): the protections go on from it. */
  restore(state: ProtectionState): void {
    this.current = state;
    this.list = this.made();
  }

  private made(): Protection[] {
    return KEYS.flatMap((key) => made(key, this.declared, this.current) ?? []);
  }

  private get countsTrades(): boolean {
    return this.list.some((p) => p.countsTrades);
  }

  /**
   * New declarations from a reload, the state kept (the trips, and when each protection last tripped, so a
   * protection keeps its window). Returns those whose trip ends because they are no longer declared. When the
   * declarations changed, the trade book starts empty: the caller seeds it again from the journal (`seed`, when
   * `reseed`), as a start does, so the new rules count the same trades.
   */
  redeclare(declared: ProtectionsDecl, now: number): { lifted: TripName[]; reseed: boolean } {
    const lifted: TripName[] = [];
    for (const key of KEYS) {
      if (declared[key] !== undefined) continue;
      const ended = KINDS[key].drop(this.current, now);
      if (ended !== undefined) lifted.push(ended);
    }
    const changed = JSON.stringify(declared) !== JSON.stringify(this.declared);
    this.declared = declared;
    this.list = this.made();
    if (changed) this.book = this.countsTrades ? new TradeBook() : undefined;
    return { lifted, reseed: changed && this.book !== undefined };
  }

  /**
   * The instance's fills recorded before this run (its trades so far). A trip the last run decided but did not
   * save (killed between a fill's commit and the watch's) is decided again from them and returned, when its
   * pause is not over at `now`; a trip already saved, or lifted, is not made again.
   */
  seed(fills: readonly FillRow[], orderOf: (localId: string) => PairedBy, step: Dec | undefined, now: number): Trip[] {
    const book = this.book;
    if (book === undefined) return [];
    for (const f of fills) book.add(tradeFill(f, orderOf(f.orderLocalId), step));
    let last: number | undefined;
    for (const t of book.trades) last = Math.max(last ?? t.exitTime, t.exitTime);
    if (last === undefined) return [];
    const trips = this.tradesClosed(book, last);
    // Over already: it would be lifted at once; its trades still do not count again.
    for (const trip of trips) if (trip.until <= now) endTrip(this.current, trip.protection);
    return trips.filter((t) => t.until > now);
  }

  /** A fill was recorded: the trades it closed are counted, and the protections that trip now are returned. */
  filled(f: FillRow, order: PairedBy, step: Dec | undefined): Trip[] {
    const book = this.book;
    if (book === undefined || book.add(tradeFill(f, order, step)).length === 0) return [];
    return this.tradesClosed(book, f.time);
  }

  private tradesClosed(book: TradeBook, now: number): Trip[] {
    const trips: Trip[] = [];
    for (const p of this.list) {
      const trip = p.tradesClosed(book.trades, now);
      if (trip !== undefined) trips.push(trip);
    }
    return trips;
  }

  /** A declared exit sold at `now` (a stop-out starts the cooldown): the trips it makes. */
  exitTriggered(reason: ExitReason, now: number): Trip[] {
    const trips: Trip[] = [];
    for (const p of this.list) {
      const trip = p.exitTriggered(reason, now);
      if (trip !== undefined) trips.push(trip);
    }
    return trips;
  }

  /** Whether a trip on closed trades is waiting to be lifted (cheap: the tick path asks). */
  get hasTrips(): boolean {
    return this.current.trips !== undefined;
  }

  /** The trips on closed trades whose pause is over at `now` (out of the state: the caller saves and tells it). */
  lifted(now: number): TripName[] {
    const trips = this.current.trips;
    if (trips === undefined) return [];
    const over: TripName[] = [];
    for (const name of Object.keys(trips) as TripName[])
      if ((trips[name]?.until ?? 0) <= now) {
        over.push(name);
        delete trips[name];
      }
    if (Object.keys(trips).length === 0) delete this.current.trips;
    return over;
  }

  /** Why a new entry is refused at `now`, undefined when it may go. */
  entryBlock(now: number): string | undefined {
    for (const p of this.list) {
      const block = p.entryBlock(now);
      if (block !== undefined) return block;
    }
    return undefined;
  }
}
